"""A full gpodder.net sync of castlog through gPodder's own client library, mygpoclient.

    /usr/bin/python3 test/mygpoclient/sync.py <root url> <user> <password>

The root URL is what a gPodder user enters as the server (mygpoclient's Locator puts /api/2 and
/subscriptions under it; without a scheme it would prefix http://). mygpoclient sends every request
without credentials first and answers a `WWW-Authenticate: Basic` challenge at most three times per
client, so the whole run also proves that the session cookie castlog sets carries the later
requests.

Prints one JSON object per step on stdout, and `{"step": "done"}` last. The first result that is
not what mygpoclient's caller expects raises AssertionError (exit 1, the traceback on stderr).
"""

import datetime
import json
import sys
import urllib.request
import uuid

import mygpoclient
from mygpoclient import api, http, simple, util

ROOT, USER, PASSWORD = sys.argv[1:4]
DESKTOP, LAPTOP = 'gpodder-desktop', 'gpodder-laptop'


def report(step, **result):
    print(json.dumps({'step': step, **result}, sort_keys=True), flush=True)


def feed(label):
    return 'https://%s.example.com/%s/feed.xml' % (label, uuid.uuid4())


def minutes_ago(minutes):
    now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    return util.datetime_to_iso8601(now - datetime.timedelta(minutes=minutes))


def challenges(client):
    """How many times the client's password manager answered a 401 challenge."""
    for handler in client._client._opener.handlers:
        if isinstance(handler, urllib.request.HTTPBasicAuthHandler):
            return handler.passwd._count
    raise AssertionError('mygpoclient has no HTTPBasicAuthHandler')


def raises(error, call):
    try:
        call()
    except error:
        return True
    return False


def action_dict(action):
    return action.to_dictionary()


report('library', version=mygpoclient.__version__, user_agent=mygpoclient.user_agent)
client = api.MygPodderClient(USER, PASSWORD, ROOT)
assert client.locator.root_uri() == ROOT.rstrip('/'), client.locator.root_uri()

# Devices: created by an update, listed with their settings.
assert client.update_device_settings(DESKTOP, caption='gPodder on desktop', type='desktop') is True
devices = client.get_devices()
assert [(d.device_id, d.caption, d.type, d.subscriptions) for d in devices] == [
    (DESKTOP, 'gPodder on desktop', 'desktop', 0)
], [str(d) for d in devices]
report('devices', devices=[str(d) for d in devices])

# Subscriptions: upload, download since 0, removal, download since the answered timestamp.
A, B, C, D, E = feed('a'), feed('b'), feed('c'), feed('d'), feed('e')
uploaded = client.update_subscriptions(DESKTOP, [A, B, C], [])
assert uploaded.update_urls == [], uploaded.update_urls
assert isinstance(uploaded.since, int) and uploaded.since > 1600000000, uploaded.since
report('update_subscriptions', since=uploaded.since, update_urls=uploaded.update_urls)

everything = client.pull_subscriptions(DESKTOP, 0)
assert sorted(everything.add) == sorted([A, B, C]) and everything.remove == [], vars(everything)
assert everything.since >= uploaded.since, (everything.since, uploaded.since)
report('pull_subscriptions', since=0, add=len(everything.add), remove=len(everything.remove))

removed = client.update_subscriptions(DESKTOP, [], [B])
assert removed.since >= uploaded.since
changes = client.pull_subscriptions(DESKTOP, uploaded.since)
assert B in changes.remove and B not in changes.add, vars(changes)
assert set(changes.add) <= {A, C}, vars(changes)
report('pull_subscriptions', since=uploaded.since, add=len(changes.add), remove=changes.remove == [B])

# A second device: first used by an upload, with another spelling of A and a URL castlog refuses.
other_spelling = A.replace('https://a.example.com/', 'HTTPS://A.Example.COM:443/')
refused = 'no-scheme.example.com/feed.xml'
second = client.update_subscriptions(LAPTOP, [D, other_spelling, refused], [])
assert sorted(second.update_urls) == sorted([(other_spelling, A), (refused, '')]), second.update_urls
report('update_subscriptions', device=LAPTOP, update_urls=second.update_urls)
seen = client.pull_subscriptions(DESKTOP, changes.since)
assert D in seen.add and other_spelling not in seen.add and refused not in seen.add, vars(seen)
report('pull_subscriptions', device=DESKTOP, sees_the_other_device=True)

devices = {d.device_id: d for d in client.get_devices()}
assert sorted(devices) == [DESKTOP, LAPTOP], sorted(devices)
assert (devices[LAPTOP].caption, devices[LAPTOP].type) == ('', 'other'), str(devices[LAPTOP])
assert all(d.subscriptions == 3 for d in devices.values()), [str(d) for d in devices.values()]
report('devices', devices=[str(d) for d in devices.values()])

# One URL both added and removed: gpodder.net's 400, which mygpoclient raises as BadRequest.
assert raises(http.BadRequest, lambda: client.update_subscriptions(DESKTOP, [E], [E]))
assert raises(http.BadRequest, lambda: client.pull_subscriptions('bad!device', 0))
report('bad_request', raised=True)

# Episode actions: uploaded as gPodder builds them, downloaded through EpisodeAction.from_dictionary.
actions = [
    api.EpisodeAction(A, A.replace('feed.xml', 'e1.mp3'), 'download', DESKTOP, minutes_ago(20)),
    api.EpisodeAction(A, A.replace('feed.xml', 'e2.mp3'), 'play', DESKTOP, minutes_ago(10),
                      started=0, position=120, total=3600),
    api.EpisodeAction(C, C.replace('feed.xml', 'épisode-3.mp3'), 'new'),
]
since = client.upload_episode_actions(actions)
assert isinstance(since, int) and since >= removed.since, since
report('upload_episode_actions', since=since, count=len(actions))

downloaded = client.download_episode_actions(0)
got = [action_dict(a) for a in downloaded.actions]
assert [d for d in got if d['action'] != 'new'] == [action_dict(a) for a in actions[:2]], got
new = [a for a in downloaded.actions if a.action == 'new']
assert len(new) == 1 and new[0].episode == actions[2].episode and new[0].device is None, got
# castlog stamps an action sent without a timestamp with the second it received it.
assert util.iso8601_to_datetime(new[0].timestamp) is not None, new[0].timestamp
assert downloaded.since >= since, (downloaded.since, since)
report('download_episode_actions', since=0, count=len(downloaded.actions))

of_a = client.download_episode_actions(0, podcast=A)
assert sorted(a.episode for a in of_a.actions) == sorted(a.episode for a in actions[:2]), of_a.actions
of_desktop = client.download_episode_actions(0, device_id=DESKTOP)
assert len(of_desktop.actions) == 2 and all(a.device == DESKTOP for a in of_desktop.actions)
report('download_episode_actions', podcast=len(of_a.actions), device=len(of_desktop.actions))

later = api.EpisodeAction(C, C.replace('feed.xml', 'e4.mp3'), 'play', LAPTOP, minutes_ago(1),
                          started=10, position=20, total=30)
client.upload_episode_actions([later])
since_last = client.download_episode_actions(downloaded.since)
assert action_dict(later) in [action_dict(a) for a in since_last.actions], since_last.actions
report('download_episode_actions', since=downloaded.since, sees_the_later_action=True)

# Settings, through mygpoclient's own calls: each scope its own, set then remove, as gpodder.net.
assert client.get_settings('account') == {}
account = client.set_settings('account', None, None, {'public_subscriptions': False, 'flattr_token': 'abc'})
assert account == {'public_subscriptions': False, 'flattr_token': 'abc'}, account
account = client.set_settings('account', None, None, {'auto_flattr': True}, ['flattr_token'])
assert account == {'public_subscriptions': False, 'auto_flattr': True}, account
assert client.get_settings('account') == account
report('settings', scope='account', keys=sorted(account))

EPISODE = A.replace('feed.xml', 'e1.mp3?source=rss&t=1')
device = client.set_settings('device', DESKTOP, None, {'interval': 30, 'nested': {'a': [1, None]}})
assert device == {'interval': 30, 'nested': {'a': [1, None]}}, device
assert client.get_settings('device', DESKTOP) == device
assert client.get_settings('device', LAPTOP) == {}
assert client.set_settings('podcast', A, None, {'public_subscription': False}) == {'public_subscription': False}
assert client.set_settings('episode', A, EPISODE, {'is_favorite': True}) == {'is_favorite': True}
assert client.get_settings('podcast', A) == {'public_subscription': False}
assert client.get_settings('episode', A, EPISODE) == {'is_favorite': True}
assert client.get_settings('podcast', C) == {}
# A key both set and removed in one change ends removed.
assert client.set_settings('podcast', A, None, {'x': 1}, ['x']) == {'public_subscription': False}
report('settings', scopes=['device', 'podcast', 'episode'])

# Out of castlog's bounds (a value of more than 16 KiB of JSON): 400, raised as BadRequest.
assert raises(http.BadRequest, lambda: client.set_settings('account', None, None, {'big': 'x' * 20000}))
assert client.get_settings('account') == account
report('settings', bad_request=True)

assert challenges(client) == 1, challenges(client)
report('challenges', client='MygPodderClient', count=challenges(client))

# The simple API, through a client of its own (its own cookie jar, its own challenge).
simple_client = simple.SimpleClient(USER, PASSWORD, ROOT)
assert sorted(simple_client.get_subscriptions(DESKTOP)) == sorted([A, C, D])
assert simple_client.put_subscriptions(DESKTOP, [A, E]) is True
# One subscription list per user, shared by every device.
assert sorted(simple_client.get_subscriptions(LAPTOP)) == sorted([A, E])
assert sorted(client.get_subscriptions(devices[LAPTOP])) == sorted([A, E])
assert challenges(simple_client) == 1, challenges(simple_client)
report('simple', subscriptions=2)
after_put = client.pull_subscriptions(DESKTOP, seen.since)
assert C in after_put.remove and D in after_put.remove and E in after_put.add, vars(after_put)
report('pull_subscriptions', after_put=True)

# URLs with white space around them, as a user pastes one: gpodder.net trims them first and says
# so in update_urls; a spaced remove unsubscribes the feed it names.
F = feed('f')
spaced_add, spaced_remove = ' %s\t' % F, '%s ' % E
trimmed = client.update_subscriptions(LAPTOP, [spaced_add], [spaced_remove])
assert sorted(trimmed.update_urls) == sorted([(spaced_add, F), (spaced_remove, E)]), trimmed.update_urls
after_trim = client.pull_subscriptions(DESKTOP, after_put.since)
assert F in after_trim.add and E in after_trim.remove, vars(after_trim)
assert sorted(simple_client.get_subscriptions(DESKTOP)) == sorted([A, F])
report('update_subscriptions', device=LAPTOP, update_urls=trimmed.update_urls)

# Wrong credentials: the challenge is answered, refused, and mygpoclient raises Unauthorized.
stranger = api.MygPodderClient(USER, PASSWORD + 'x', ROOT)
assert raises(http.Unauthorized, stranger.get_devices)
assert raises(http.Unauthorized, lambda: stranger.update_device_settings(DESKTOP, caption='x'))
report('unauthorized', raised=True)

report('done', feeds=sorted([A, F]))
