# GET one URL with httpx and print what static_SUITE checks:
#   status, HTTP version, content-type, content-range, body length, sha256
# Usage: httpx_static.py URL [http1|http2] [RANGE]
import hashlib
import sys

import httpx

url = sys.argv[1]
http2 = len(sys.argv) > 2 and sys.argv[2] == "http2"
headers = {}
if len(sys.argv) > 3:
    headers["range"] = sys.argv[3]
with httpx.Client(http1=not http2, http2=http2, verify=False, timeout=30) as client:
    r = client.get(url, headers=headers)
    print(r.status_code, r.http_version, r.headers.get("content-type", "-"),
          r.headers.get("content-range", "-"), len(r.content),
          hashlib.sha256(r.content).hexdigest())
