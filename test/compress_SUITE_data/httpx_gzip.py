#!/usr/bin/env python3
"""httpx client for compress_SUITE. One JSON object per line on stdout.

    httpx_gzip.py VERSION MODE URL [FILE]

VERSION: 1.1 (HTTP/1.1), h2c (HTTP/2 prior knowledge on http://) or h2
(HTTP/2 by ALPN on https://, no certificate check).
MODE:
  get     GET with Accept-Encoding: gzip; prints http_version, status,
          content_encoding, vary, size (decoded), sha256 (decoded),
          wire (bytes on the wire)
  parts   GET streamed; prints {"chunk": text} for each decoded chunk as it
          arrives (flushed), then {"done": true}
  upload  POST FILE (already gzipped) with content-encoding: gzip; prints
          status and text
"""
import hashlib
import json
import sys

import httpx


def out(obj):
    print(json.dumps(obj), flush=True)


version, mode, url = sys.argv[1:4]
if version == "1.1":
    client = httpx.Client(http1=True, http2=False, verify=False, timeout=30)
elif version == "h2c":
    client = httpx.Client(http1=False, http2=True, verify=False, timeout=30)
else:
    client = httpx.Client(http1=False, http2=True, verify=False, timeout=30)

with client:
    if mode == "get":
        r = client.get(url, headers={"accept-encoding": "gzip"})
        out({"http_version": r.http_version, "status": r.status_code,
             "content_encoding": r.headers.get("content-encoding"),
             "vary": r.headers.get("vary"),
             "size": len(r.content),
             "sha256": hashlib.sha256(r.content).hexdigest(),
             "wire": r.num_bytes_downloaded})
    elif mode == "parts":
        with client.stream("GET", url, headers={"accept-encoding": "gzip"}) as r:
            out({"http_version": r.http_version, "status": r.status_code,
                 "content_encoding": r.headers.get("content-encoding")})
            for chunk in r.iter_bytes():
                out({"chunk": chunk.decode("utf-8", "replace")})
        out({"done": True})
    elif mode == "upload":
        with open(sys.argv[4], "rb") as f:
            data = f.read()
        r = client.post(url, content=data, headers={"content-encoding": "gzip",
                                                     "content-type": "text/plain"})
        out({"http_version": r.http_version, "status": r.status_code, "text": r.text})
