"""Docker HEALTHCHECK of the scrapyd image: exit 0 when scrapyd answers HTTP on its port.

``GET http://127.0.0.1:$SCRAPYD_HTTP_PORT/daemonstatus.json`` (port 6800 by default). 200 is
alive; so is 401, the answer of a scrapyd with basic auth on (SCRAPYD_USERNAME/PASSWORD) to a
request without credentials. Anything else (refused, timeout, 5xx) exits 1. Proxy variables
(set for the crawl) are ignored: this request goes to the container itself.
"""

import os
import sys
import urllib.error
import urllib.request

PORT = os.environ.get("SCRAPYD_HTTP_PORT") or "6800"


def main() -> int:
    url = f"http://127.0.0.1:{PORT}/daemonstatus.json"
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=5) as response:
            return 0 if response.status == 200 else 1
    except urllib.error.HTTPError as exc:
        return 0 if exc.code == 401 else 1
    except OSError:
        return 1


if __name__ == "__main__":
    sys.exit(main())
