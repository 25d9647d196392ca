#!/usr/bin/env python3
"""Server push, and responses in general, seen by python-h2's client (a
third-party HTTP/2 stack that validates PUSH_PROMISE frames, the pushed
responses, informational responses and trailers: it refuses, among others,
connection-specific fields, RFC 9113 8.2.2).

    h2_push.py PORT PATH ENABLE_PUSH(0|1) [MAX_CONCURRENT_STREAMS]

Requests PATH over h2c (prior knowledge) and prints one JSON line:
{"promises": [{"parent": 1, "promised": 2, "headers": {...}}],
 "responses": {"1": {"status": 200, "headers": {...}, "body": "...", "ended": true,
                     "informs": [{...}], "trailers": {...}}},
 "resets": {...}, "error": "..." (only on failure)}
"""
import json
import socket
import sys
import time

import h2.config
import h2.connection
import h2.events
import h2.settings


def main():
    port, path, enable = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    max_streams = int(sys.argv[4]) if len(sys.argv) > 4 else None
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    settings = {h2.settings.SettingCodes.ENABLE_PUSH: enable}
    if max_streams is not None:
        settings[h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS] = max_streams
    conn.local_settings = h2.settings.Settings(client=True, initial_values=settings)
    conn.initiate_connection()
    sid = conn.get_next_available_stream_id()
    conn.send_headers(sid, [(":method", "GET"), (":scheme", "http"),
                            (":authority", "127.0.0.1:%d" % port), (":path", path)],
                      end_stream=True)
    sock.sendall(conn.data_to_send())
    promises, responses, resets = [], {}, {}

    def resp(s):
        return responses.setdefault(str(s), {"status": None, "headers": {}, "body": "",
                                             "ended": False, "informs": [], "trailers": {}})

    def fields(headers):
        return {k.decode(): v.decode() for k, v in headers}

    deadline = time.monotonic() + 10
    # Done when the request and every promised stream ended (or were reset).
    def done():
        ids = [str(sid)] + [str(p["promised"]) for p in promises]
        return all(resp(i)["ended"] or i in resets for i in ids)

    while not done() and time.monotonic() < deadline:
        data = sock.recv(65536)
        if not data:
            break
        for ev in conn.receive_data(data):
            if isinstance(ev, h2.events.PushedStreamReceived):
                promises.append({"parent": ev.parent_stream_id, "promised": ev.pushed_stream_id,
                                 "headers": {k.decode(): v.decode() for k, v in ev.headers}})
            elif isinstance(ev, h2.events.InformationalResponseReceived):
                resp(ev.stream_id)["informs"].append(fields(ev.headers))
            elif isinstance(ev, h2.events.ResponseReceived):
                r = resp(ev.stream_id)
                r["headers"] = fields(ev.headers)
                r["status"] = int(r["headers"][":status"])
            elif isinstance(ev, h2.events.TrailersReceived):
                resp(ev.stream_id)["trailers"] = fields(ev.headers)
            elif isinstance(ev, h2.events.DataReceived):
                resp(ev.stream_id)["body"] += ev.data.decode("latin-1")
                conn.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
            elif isinstance(ev, h2.events.StreamEnded):
                resp(ev.stream_id)["ended"] = True
            elif isinstance(ev, h2.events.StreamReset):
                resets[str(ev.stream_id)] = int(ev.error_code)
        out = conn.data_to_send()
        if out:
            sock.sendall(out)
    conn.close_connection()
    sock.sendall(conn.data_to_send())
    sock.close()
    print(json.dumps({"promises": promises, "responses": responses, "resets": resets,
                      "complete": done()}))


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # reported to the test, which fails on it
        import traceback
        print(json.dumps({"error": repr(e), "trace": traceback.format_exc()}))
