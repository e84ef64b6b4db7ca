#!/bin/sh
# Entry point of the blogfeeds image: `scrapyd` (the default command) runs in SCRAPYD_HOME, so that
# its jobs import the deployed egg (scrapyd puts the egg at the end of sys.path: the project
# directory /app, the working directory of every other command, would shadow it). Any other
# command (`scrapy crawl blogs`, `scrapy seed ...`, `scrapyd-deploy ...`) runs in /app.
set -eu
if [ "${1:-}" = "scrapyd" ]; then
  cd "${SCRAPYD_HOME:-/var/lib/scrapyd}"
fi
exec "$@"
