"""gPodder's "Restore my subscriptions", with gPodder's own modules.

    /usr/bin/python3 test/mygpoclient/restore.py <root url> <user> <password>

Does what gPodder 3 does for that menu item (gpodder/gtkui/main.py,
on_download_subscriptions_from_mygpo): takes the user's OPML URL from mygpoclient's Locator
(gpodder.my's get_download_user_subscriptions_url), adds the credentials with gPodder's
util.url_add_authentication, and reads the document with gPodder's OPML importer,
gpodder.opml.Importer, whose titles are the names the restore dialog lists the podcasts by.

Prints the importer's items (url, title, description) as one JSON array on stdout.
"""

import json
import sys

from gpodder import opml, util
from mygpoclient import api

ROOT, USER, PASSWORD = sys.argv[1:4]

client = api.MygPodderClient(USER, PASSWORD, ROOT)
url = util.url_add_authentication(client.locator.subscriptions_uri(), USER, PASSWORD)
print(json.dumps(opml.Importer(url).items, sort_keys=True))
