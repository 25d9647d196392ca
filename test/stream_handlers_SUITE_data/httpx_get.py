#!/usr/bin/env python3
"""GETs each URL with one httpx client (http2=True, TLS without certificate
check), sending the headers given, and prints one JSON array:
[{"http_version", "status", "headers": {lowercase name: value}, "body"}, ...]

    httpx_get.py [--h2c] [--post FILE] [-H 'name: value']... URL...

--h2c: HTTP/2 by prior knowledge over clear text (http1=False).
--post FILE: POST the file's bytes instead of GET.
"""
import json
import sys

import httpx

headers = {}
urls = []
http1 = True
post = None
args = sys.argv[1:]
while args:
    a = args.pop(0)
    if a == "--h2c":
        http1 = False
    elif a == "--post":
        with open(args.pop(0), "rb") as f:
            post = f.read()
    elif a == "-H":
        name, value = args.pop(0).split(":", 1)
        headers[name.strip()] = value.strip()
    else:
        urls.append(a)

out = []
with httpx.Client(http1=http1, http2=True, verify=False, timeout=30) as client:
    for url in urls:
        if post is None:
            r = client.get(url, headers=headers)
        else:
            r = client.post(url, headers=headers, content=post)
        out.append({"http_version": r.http_version, "status": r.status_code,
                    "headers": {k.lower(): v for k, v in r.headers.items()},
                    "body": r.text})
print(json.dumps(out))
