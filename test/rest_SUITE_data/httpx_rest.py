# httpx over HTTP/2 (TLS, ALPN h2, the demo's self-signed certificate) against
# the routes of rest_SUITE: content negotiation, a conditional GET, a range.
# Prints one line per request: version, status, and what the test checks.
import sys
import httpx

port = sys.argv[1]
base = "https://127.0.0.1:" + port
with httpx.Client(http1=False, http2=True, verify=False) as c:
    r = c.get(base + "/conneg", headers={"accept": "application/json"})
    print(r.http_version, r.status_code, r.headers["content-type"], r.text)
    r = c.get(base + "/conditional", headers={"if-none-match": '"v1"'})
    print(r.http_version, r.status_code)
    r = c.get(base + "/range_auto", headers={"range": "bytes=0-3"})
    print(r.http_version, r.status_code, r.headers["content-range"], r.text)
