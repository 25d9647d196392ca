"""An HTTP/3 client for http3_SUITE, on aioquic (an implementation no one
here wrote: its own QUIC, TLS and QPACK, pylsqpack).

    h3client.py PORT SCRIPT_JSON

SCRIPT_JSON is a list of steps run on one connection, in order:
  {"op": "request", "method": "GET", "path": "/", "headers": [[n, v]...],
   "body": "text" (optional), "parts": ["a", "b"] (optional, several DATA frames),
   "trailers": [[n, v]...] (optional), "wait": true (default: await the response)}
  {"op": "raw", "stream": "new" | id, "hex": "...", "fin": bool}   bytes on a
      request stream, written as they are (malformed frames)
  {"op": "raw_uni", "hex": "...", "fin": bool}  a new unidirectional stream
  {"op": "control", "hex": "..."}   bytes on our own control stream
  {"op": "encoder", "hex": "..."}   bytes on our own QPACK encoder stream
  {"op": "reset", "stream": id, "code": n}   RESET_STREAM on a request stream
  {"op": "sleep", "ms": n}
  {"op": "ping"}
Prints one JSON object: {"handshake": true, "alpn": ..., "results": [...],
"closed": null | {"error_code": n, "reason": ...}}. A request result is
{"stream": id, "status": n, "headers": [[n, v]...], "body": text,
"trailers": [...], "reset": code | null}; a raw result gives what came back
on that stream the same way. Timeouts leave "timeout": true.
"""
import asyncio
import json
import ssl
import sys

from aioquic.asyncio import connect
from aioquic.asyncio.protocol import QuicConnectionProtocol
from aioquic.h3.connection import H3_ALPN, H3Connection
from aioquic.h3.events import DataReceived, HeadersReceived
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.events import ConnectionTerminated, StreamReset, StreamDataReceived


class Client(QuicConnectionProtocol):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.h3 = H3Connection(self._quic, enable_webtransport=False)
        self.streams = {}
        self.raw = set()
        self.closed = None
        self.waiters = {}

    def stream(self, sid):
        return self.streams.setdefault(sid, {"stream": sid, "status": None, "headers": [],
                                             "body": b"", "trailers": [], "reset": None,
                                             "ended": False, "informs": []})

    def quic_event_received(self, event):
        if isinstance(event, ConnectionTerminated):
            self.closed = {"error_code": event.error_code, "reason": event.reason_phrase}
            for w in self.waiters.values():
                if not w.done():
                    w.set_result(None)
            return
        if isinstance(event, StreamReset):
            s = self.stream(event.stream_id)
            s["reset"] = event.error_code
            self.wake(event.stream_id)
            return
        if isinstance(event, StreamDataReceived) and event.stream_id in self.raw:
            s = self.stream(event.stream_id)
            s["body"] += event.data
            if event.end_stream:
                s["ended"] = True
                self.wake(event.stream_id)
            return
        for ev in self.h3.handle_event(event):
            if isinstance(ev, HeadersReceived):
                s = self.stream(ev.stream_id)
                hs = [[k.decode(), v.decode()] for k, v in ev.headers]
                status = [v for k, v in hs if k == ":status"]
                if s["status"] is not None and not status:
                    s["trailers"] = hs
                elif status and 100 <= int(status[0]) < 200:
                    s["informs"].append({"status": int(status[0]), "headers": hs})
                else:
                    s["status"] = int(status[0]) if status else None
                    s["headers"] = [h for h in hs if not h[0].startswith(":")]
                if ev.stream_ended:
                    s["ended"] = True
                    self.wake(ev.stream_id)
            elif isinstance(ev, DataReceived):
                s = self.stream(ev.stream_id)
                s["body"] += ev.data
                if ev.stream_ended:
                    s["ended"] = True
                    self.wake(ev.stream_id)

    def wake(self, sid):
        w = self.waiters.get(sid)
        if w and not w.done():
            w.set_result(None)

    async def wait(self, sid, timeout):
        s = self.stream(sid)
        if s["ended"] or s["reset"] is not None or self.closed:
            return True
        w = asyncio.get_event_loop().create_future()
        self.waiters[sid] = w
        try:
            await asyncio.wait_for(w, timeout)
            return True
        except asyncio.TimeoutError:
            return False


def ws_frame(opcode, payload):
    """A masked client frame (RFC 6455 5.2)."""
    import os
    key = os.urandom(4)
    n = len(payload)
    head = bytes([0x80 | opcode])
    if n < 126:
        head += bytes([0x80 | n])
    elif n < 65536:
        head += bytes([0x80 | 126]) + n.to_bytes(2, "big")
    else:
        head += bytes([0x80 | 127]) + n.to_bytes(8, "big")
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


def ws_parse(buf):
    """Server frames (unmasked) from buf: ([(opcode, payload)], rest)."""
    frames = []
    while len(buf) >= 2:
        opcode, n, i = buf[0] & 0x0f, buf[1] & 0x7f, 2
        if n == 126:
            if len(buf) < 4:
                break
            n, i = int.from_bytes(buf[2:4], "big"), 4
        elif n == 127:
            if len(buf) < 10:
                break
            n, i = int.from_bytes(buf[2:10], "big"), 10
        if len(buf) < i + n:
            break
        frames.append((opcode, buf[i:i + n]))
        buf = buf[i + n:]
    return frames, buf


async def websocket(c, quic, step, timeout):
    """Websocket over HTTP/3 (RFC 9220): extended CONNECT, then each message
    as a text frame in DATA, its echo awaited, then a close handshake."""
    sid = quic.get_next_available_stream_id()
    headers = [(b":method", b"CONNECT"), (b":protocol", b"websocket"), (b":scheme", b"https"),
               (b":authority", b"localhost"), (b":path", step.get("path", "/ws").encode()),
               (b"sec-websocket-version", b"13")]
    c.h3.send_headers(sid, headers, end_stream=False)
    c.transmit()
    s = c.stream(sid)
    loop = asyncio.get_event_loop()
    deadline = loop.time() + timeout
    while s["status"] is None and s["reset"] is None and not c.closed and loop.time() < deadline:
        await asyncio.sleep(0.01)
    res = {"stream": sid, "status": s["status"], "messages": [], "close": None}
    if s["status"] != 200:
        return res
    buf = b""
    for m in step.get("messages", []):
        c.h3.send_data(sid, ws_frame(1, m.encode()), end_stream=False)
        c.transmit()
    c.h3.send_data(sid, ws_frame(8, (1000).to_bytes(2, "big")), end_stream=False)
    c.transmit()
    while loop.time() < deadline and res["close"] is None:
        await asyncio.sleep(0.01)
        buf += s["body"]
        s["body"] = b""
        frames, buf = ws_parse(buf)
        for opcode, payload in frames:
            if opcode == 1:
                res["messages"].append(payload.decode())
            elif opcode == 8:
                res["close"] = int.from_bytes(payload[:2], "big") if len(payload) >= 2 else 1005
    return res


def out(s):
    r = dict(s)
    try:
        r["body"] = r["body"].decode()
    except UnicodeDecodeError:
        r["body_hex"] = r["body"].hex()
        r["body"] = None
    return r


async def run(port, steps, timeout):
    cfg = QuicConfiguration(is_client=True, alpn_protocols=H3_ALPN, verify_mode=ssl.CERT_NONE,
                            max_datagram_frame_size=65536)
    results = []
    async with connect("127.0.0.1", port, configuration=cfg, create_protocol=Client,
                       wait_connected=True) as c:
        quic = c._quic
        alpn = quic.tls.alpn_negotiated
        for step in steps:
            op = step["op"]
            if op == "request":
                sid = quic.get_next_available_stream_id()
                headers = [(b":method", step.get("method", "GET").encode()),
                           (b":scheme", b"https"),
                           (b":authority", step.get("authority", "localhost").encode()),
                           (b":path", step.get("path", "/").encode())]
                if step.get("method") == "CONNECT" and "protocol" in step:
                    headers.append((b":protocol", step["protocol"].encode()))
                headers += [(k.encode(), v.encode()) for k, v in step.get("headers", [])]
                parts = step.get("parts")
                if parts is None and "body" in step:
                    parts = [step["body"]]
                trailers = step.get("trailers")
                end_after_headers = not parts and not trailers and not step.get("open", False)
                c.h3.send_headers(sid, headers, end_stream=end_after_headers)
                for i, p in enumerate(parts or []):
                    last = i == len(parts) - 1 and not trailers and not step.get("open", False)
                    c.h3.send_data(sid, p.encode(), end_stream=last)
                if trailers:
                    c.h3.send_headers(sid, [(k.encode(), v.encode()) for k, v in trailers],
                                      end_stream=True)
                c.transmit()
                if step.get("wait", True):
                    ok = await c.wait(sid, timeout)
                    r = out(c.stream(sid))
                    r["timeout"] = not ok
                    results.append(r)
                else:
                    results.append({"stream": sid})
            elif op == "ws":
                results.append(await websocket(c, quic, step, timeout))
            elif op == "reset_flood":
                # Requests opened and reset at once (RFC 9114 10.5: a server
                # bounds the work they cost).
                sent = 0
                for i in range(step["n"]):
                    if c.closed:
                        break
                    sid = quic.get_next_available_stream_id()
                    c.h3.send_headers(sid, [(b":method", b"GET"), (b":scheme", b"https"),
                                            (b":authority", b"localhost"), (b":path", b"/")],
                                      end_stream=False)
                    quic.reset_stream(sid, 0x10c)
                    c.transmit()
                    sent += 1
                    await asyncio.sleep(0.002)
                await asyncio.sleep(0.5)
                results.append({"sent": sent})
            elif op == "raw":
                sid = step["stream"]
                if sid == "new":
                    sid = quic.get_next_available_stream_id()
                c.raw.add(sid)
                quic.send_stream_data(sid, bytes.fromhex(step["hex"]), end_stream=step.get("fin", False))
                c.transmit()
                if step.get("wait", True):
                    ok = await c.wait(sid, timeout)
                    r = out(c.stream(sid))
                    r["timeout"] = not ok
                    results.append(r)
                else:
                    results.append({"stream": sid})
            elif op == "raw_uni":
                sid = quic.get_next_available_stream_id(is_unidirectional=True)
                quic.send_stream_data(sid, bytes.fromhex(step["hex"]), end_stream=step.get("fin", False))
                c.transmit()
                results.append({"stream": sid})
            elif op in ("control", "encoder"):
                sid = c.h3._local_control_stream_id if op == "control" else c.h3._local_encoder_stream_id
                quic.send_stream_data(sid, bytes.fromhex(step["hex"]), end_stream=step.get("fin", False))
                c.transmit()
                results.append({"stream": sid})
            elif op == "reset":
                quic.reset_stream(step["stream"], step.get("code", 0x10c))
                c.transmit()
                results.append({"stream": step["stream"]})
            elif op == "sleep":
                await asyncio.sleep(step["ms"] / 1000)
                results.append({})
            elif op == "ping":
                await asyncio.wait_for(c.ping(), timeout)
                results.append({"ping": True})
            if c.closed:
                break
        if not c.closed:
            await asyncio.sleep(step_delay(steps))
    return {"handshake": True, "alpn": alpn, "results": results, "closed": c.closed}


def step_delay(steps):
    return 0.05


def main():
    port = int(sys.argv[1])
    steps = json.loads(sys.argv[2])
    timeout = float(sys.argv[3]) if len(sys.argv) > 3 else 5.0
    try:
        res = asyncio.run(asyncio.wait_for(run(port, steps, timeout), timeout + 10))
    except ConnectionError as e:
        res = {"handshake": False, "error": repr(e)}
    print(json.dumps(res))


if __name__ == "__main__":
    main()
