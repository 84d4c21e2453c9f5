"""gPodder's largest upload through mygpoclient: 10,000 episode actions (docs/api.md's most per
upload, about 2.2 MB as mygpoclient writes them), then twice as many, over the route's 4 MiB limit.

    /usr/bin/python3 test/mygpoclient/large-upload.py <root url> <user> <password>

Prints one JSON object per step on stdout. mygpoclient sends a whole request before it reads the
answer: a server that answers while the body still comes and closes the connection shows up here
as a broken pipe (URLError), not as the HTTP status.
"""

import json
import sys
import uuid

from mygpoclient import api, http

ROOT, USER, PASSWORD = sys.argv[1:4]
DEVICE = 'gpodder-desktop'


def report(step, **result):
    print(json.dumps({'step': step, **result}, sort_keys=True), flush=True)


def actions(count):
    podcast = 'https://feeds.example.com/%s/feed.xml' % uuid.uuid4()
    return [api.EpisodeAction(podcast, podcast.replace('feed.xml', 'episode-%d-a-usual-title.mp3' % i),
                              'play', DEVICE, '2026-12-01T10:%02d:%02d' % (i // 60 % 60, i % 60),
                              started=0, position=60 + i % 3000, total=3600)
            for i in range(count)]


client = api.MygPodderClient(USER, PASSWORD, ROOT)
uploaded = actions(10000)
since = client.upload_episode_actions(uploaded)
assert isinstance(since, int), since
downloaded = client.download_episode_actions(0)
assert len(downloaded.actions) == 10000, len(downloaded.actions)
report('upload_episode_actions', count=len(uploaded),
       bytes=len(json.dumps([a.to_dictionary() for a in uploaded])))

try:
    client.upload_episode_actions(actions(20000))
    report('too_large', status=200)
except http.UnknownResponse as error:
    report('too_large', status=error.args[0] if error.args else None)
