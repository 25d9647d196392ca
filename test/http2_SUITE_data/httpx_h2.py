#!/usr/bin/env python3
"""httpx with http2=True against BASE_URL (TLS, no certificate check).

    httpx_h2.py BASE_URL

Prints "<http_version> <status> <body>" for GET /version, then
"<http_version> <status> <echo identical?>" for a 256 KiB POST /echo.
"""
import os
import sys

import httpx

base = sys.argv[1]
with httpx.Client(http2=True, verify=False, timeout=30) as client:
    r = client.get(base + "/version")
    print(r.http_version, r.status_code, r.text)
    data = os.urandom(256 * 1024)
    r = client.post(base + "/echo", content=data,
                    headers={"content-type": "application/octet-stream"})
    print(r.http_version, r.status_code, r.content == data)
