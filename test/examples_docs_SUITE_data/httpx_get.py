#!/usr/bin/env python3
"""httpx GET for examples_docs_SUITE: prints one JSON object.

    httpx_get.py VERSION URL

VERSION: 1.1 or h2c (HTTP/2 by prior knowledge). The request sends
accept-encoding: gzip; httpx decodes the body. Prints http_version, status,
content_encoding, vary, text (decoded) and wire (bytes received before
decoding).
"""
import json
import sys

import httpx

version, url = sys.argv[1:3]
client = httpx.Client(http1=(version == "1.1"), http2=(version != "1.1"), timeout=30)
with client:
    r = client.get(url, headers={"accept-encoding": "gzip"})
    wire = r.num_bytes_downloaded
    print(json.dumps({"http_version": r.http_version, "status": r.status_code,
                      "content_encoding": r.headers.get("content-encoding"),
                      "vary": r.headers.get("vary"),
                      "text": r.text, "wire": wire}), flush=True)
