#!/usr/bin/env python3
"""Frame-level HTTP/2 client for http2_SUITE.

    h2_frames.py CASE PORT [key=value ...]

Common keys: host (127.0.0.1), tls (0/1: TLS with ALPN h2), alpn (h2; "none"
sends no ALPN), path, count. Every case prints exactly one JSON line on
stdout: what it observed, never a verdict; the CT suite compares it with
what it expects. Interactive cases (backpressure, goaway_on_stop) print a
line per phase and wait for a line on stdin before going on.

Frames are built and parsed here by hand (the `hpack' package only encodes
and decodes header blocks), so the client can send what a library would
refuse: floods, broken CONTINUATION sequences, wrong content-length.
"""
import json
import select
import socket
import ssl
import struct
import sys
import time

import hpack

DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS, PUSH_PROMISE, PING, GOAWAY, \
    WINDOW_UPDATE, CONTINUATION = range(10)
END_STREAM = ACK = 0x1
END_HEADERS = 0x4
PADDED = 0x8
PRIORITY_FLAG = 0x20

ERRORS = ["NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR",
          "SETTINGS_TIMEOUT", "STREAM_CLOSED", "FRAME_SIZE_ERROR", "REFUSED_STREAM",
          "CANCEL", "COMPRESSION_ERROR", "CONNECT_ERROR", "ENHANCE_YOUR_CALM",
          "INADEQUATE_SECURITY", "HTTP_1_1_REQUIRED"]
FRAME_NAMES = ["DATA", "HEADERS", "PRIORITY", "RST_STREAM", "SETTINGS", "PUSH_PROMISE",
               "PING", "GOAWAY", "WINDOW_UPDATE", "CONTINUATION"]
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
MAX_WINDOW = 2**31 - 1


def err_name(code):
    return ERRORS[code] if code < len(ERRORS) else "UNKNOWN_%d" % code


def frame(ftype, flags, sid, payload=b""):
    return struct.pack(">I", len(payload))[1:] + struct.pack(">BBI", ftype, flags, sid) + payload


def settings_payload(settings):
    return b"".join(struct.pack(">HI", k, v) for k, v in settings.items())


class Closed(Exception):
    pass


class Stream:
    def __init__(self):
        self.headers = []      # one list of (name, value) per header block
        self.data = bytearray()
        self.data_frames = 0
        self.ended = False
        self.rst = None

    def status(self):
        for block in self.headers:
            for n, v in block:
                if n == ":status" and not v.startswith("1"):
                    return int(v)
        return None

    def summary(self, body=True):
        out = {"status": self.status(), "ended": self.ended,
               "rst": err_name(self.rst) if self.rst is not None else None,
               "blocks": len(self.headers), "body_len": len(self.data)}
        if body:
            out["body"] = bytes(self.data[:200]).decode("latin-1")
        return out


class Conn:
    """One HTTP/2 connection. read() handles SETTINGS (acknowledged unless
    auto_ack is off), PING (answered unless auto_pong is off), header blocks
    (decoded with hpack) and DATA (given back to the flow-control windows
    unless auto_window is off); every frame is kept in self.log."""

    def __init__(self, port, host="127.0.0.1", tls=False, alpn="h2", settings=None,
                 auto_ack=True, auto_pong=True, auto_window=True, preface=True,
                 sock=None, timeout=5.0):
        self.auto_ack, self.auto_pong, self.auto_window = auto_ack, auto_pong, auto_window
        self.host = host
        self.scheme = "https" if tls else "http"
        self.authority = "%s:%d" % (host, port)
        if sock is None:
            sock = socket.create_connection((host, port), timeout=timeout)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if tls:
                ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
                ctx.check_hostname = False
                ctx.verify_mode = ssl.CERT_NONE
                if alpn != "none":
                    ctx.set_alpn_protocols(alpn.split(","))
                sock = ctx.wrap_socket(sock, server_hostname=host)
                self.alpn = sock.selected_alpn_protocol()
        self.sock = sock
        self.buf = b""
        self.closed = False
        self.close_reason = None
        self.encoder = hpack.Encoder()
        self.decoder = hpack.Decoder()
        self.decoder.max_header_list_size = 2**24
        self.server_settings = {}
        self.settings_frames = 0
        self.settings_acks = 0
        self.streams = {}
        self.goaways = []
        self.ping_acks = []
        self.pings = []
        self.window_updates = []
        self.log = []
        self.pending_block = None    # (sid, flags, bytes) while CONTINUATION is expected
        self.next_sid = 1
        self.send_failed = False
        self.consumed = {}
        self.local_initial_window = (settings or {}).get(4, 65535)
        if preface:
            self.send(PREFACE + frame(SETTINGS, 0, 0, settings_payload(settings or {})))

    # Sending.

    def send(self, data):
        if self.send_failed:
            return False
        try:
            self.sock.sendall(data)
            return True
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, OSError):
            self.send_failed = True
            return False

    def send_frame(self, ftype, flags, sid, payload=b""):
        return self.send(frame(ftype, flags, sid, payload))

    def new_sid(self):
        sid = self.next_sid
        self.next_sid += 2
        return sid

    def request_headers(self, method="GET", path="/", extra=None, pseudo=None):
        hdrs = [(":method", method), (":scheme", self.scheme), (":path", path),
                (":authority", self.authority)]
        if pseudo:
            hdrs += pseudo
        return hdrs + list(extra or [])

    def headers(self, sid, hdrs, end_stream=True, max_frame=16384):
        block = self.encoder.encode(hdrs)
        return self.header_block(sid, block, end_stream, max_frame)

    def header_block(self, sid, block, end_stream=True, max_frame=16384):
        self.streams.setdefault(sid, Stream())
        first, rest = block[:max_frame], block[max_frame:]
        flags = (END_STREAM if end_stream else 0) | (0 if rest else END_HEADERS)
        out = [frame(HEADERS, flags, sid, first)]
        while rest:
            chunk, rest = rest[:max_frame], rest[max_frame:]
            out.append(frame(CONTINUATION, 0 if rest else END_HEADERS, sid, chunk))
        return self.send(b"".join(out))

    def request(self, method="GET", path="/", extra=None, body=None, pseudo=None):
        sid = self.new_sid()
        self.headers(sid, self.request_headers(method, path, extra, pseudo), body is None)
        if body is not None:
            self.send_frame(DATA, END_STREAM, sid, body)
        return sid

    def rst(self, sid, code=8):
        return self.send_frame(RST_STREAM, 0, sid, struct.pack(">I", code))

    def window_update(self, sid, inc):
        return self.send_frame(WINDOW_UPDATE, 0, sid, struct.pack(">I", inc))

    # Receiving.

    def _recv(self, timeout):
        if isinstance(self.sock, ssl.SSLSocket) and self.sock.pending():
            ready = True
        else:
            ready = select.select([self.sock], [], [], max(0, timeout))[0]
        if not ready:
            return False
        try:
            data = self.sock.recv(1 << 20)
        except (ConnectionResetError, ssl.SSLError, OSError) as e:
            self.closed, self.close_reason = True, type(e).__name__
            raise Closed()
        if not data:
            self.closed, self.close_reason = True, "eof"
            raise Closed()
        self.buf += data
        return True

    def read_frame(self, timeout=5.0):
        """The next frame as (type, flags, sid, payload), None on timeout."""
        deadline = time.monotonic() + timeout
        while True:
            if len(self.buf) >= 9:
                length = int.from_bytes(self.buf[:3], "big")
                if len(self.buf) >= 9 + length:
                    ftype, flags, sid = struct.unpack(">BBI", self.buf[3:9])
                    sid &= 0x7fffffff
                    payload = self.buf[9:9 + length]
                    self.buf = self.buf[9 + length:]
                    self.handle(ftype, flags, sid, payload)
                    return ftype, flags, sid, payload
            if self.closed:
                raise Closed()
            if not self._recv(deadline - time.monotonic()):
                return None

    def handle(self, ftype, flags, sid, payload):
        self.log.append((FRAME_NAMES[ftype] if ftype < 10 else str(ftype), flags, sid, len(payload)))
        if ftype == SETTINGS:
            if flags & ACK:
                self.settings_acks += 1
            else:
                self.settings_frames += 1
                for i in range(0, len(payload) - len(payload) % 6, 6):
                    k, v = struct.unpack(">HI", payload[i:i + 6])
                    self.server_settings[k] = v
                if self.auto_ack:
                    self.send_frame(SETTINGS, ACK, 0)
        elif ftype == PING:
            if flags & ACK:
                self.ping_acks.append(payload)
            else:
                self.pings.append(payload)
                if self.auto_pong:
                    self.send_frame(PING, ACK, 0, payload)
        elif ftype == GOAWAY:
            last, code = struct.unpack(">II", payload[:8])
            self.goaways.append({"last": last & 0x7fffffff, "code": err_name(code),
                                 "debug": payload[8:].decode("latin-1")})
        elif ftype == RST_STREAM:
            self.streams.setdefault(sid, Stream()).rst = struct.unpack(">I", payload[:4])[0]
        elif ftype == WINDOW_UPDATE:
            self.window_updates.append((sid, struct.unpack(">I", payload[:4])[0] & 0x7fffffff))
        elif ftype == DATA:
            st = self.streams.setdefault(sid, Stream())
            body = payload
            if flags & PADDED:
                body = payload[1:len(payload) - payload[0]]
            st.data += body
            st.data_frames += 1
            if flags & END_STREAM:
                st.ended = True
            if self.auto_window and len(payload) > 0:
                self.give_back(sid, len(payload), st.ended)
        elif ftype in (HEADERS, CONTINUATION):
            if ftype == HEADERS:
                body = payload
                if flags & PADDED:
                    body = body[1:len(body) - body[0]]
                if flags & PRIORITY_FLAG:
                    body = body[5:]
                self.pending_block = (sid, flags, body)
            elif self.pending_block:
                s0, f0, b0 = self.pending_block
                self.pending_block = (s0, f0, b0 + payload)
            if flags & END_HEADERS and self.pending_block:
                s0, f0, block = self.pending_block
                self.pending_block = None
                st = self.streams.setdefault(s0, Stream())
                st.headers.append([(n.decode() if isinstance(n, bytes) else n,
                                    v.decode() if isinstance(v, bytes) else v)
                                   for n, v in self.decoder.decode(block)])
                if f0 & END_STREAM:
                    st.ended = True

    def give_back(self, sid, n, ended):
        # Like nghttp2 and python-h2: a WINDOW_UPDATE once half a window
        # was consumed, not one per DATA frame.
        self.consumed[0] = self.consumed.get(0, 0) + n
        if self.consumed[0] >= 32768:
            self.window_update(0, self.consumed[0])
            self.consumed[0] = 0
        if ended:
            self.consumed.pop(sid, None)
            return
        self.consumed[sid] = self.consumed.get(sid, 0) + n
        if self.consumed[sid] >= max(1, self.local_initial_window // 2):
            self.window_update(sid, self.consumed[sid])
            self.consumed[sid] = 0

    def run_until(self, pred, timeout=5.0):
        """Reads frames until pred() holds, the connection closes or time
        runs out; returns pred()."""
        deadline = time.monotonic() + timeout
        try:
            while not pred():
                left = deadline - time.monotonic()
                if left <= 0 or self.read_frame(left) is None:
                    break
        except Closed:
            pass
        return pred()

    def drain(self, timeout=0.0):
        """Reads whatever is already there (or arrives within timeout)."""
        try:
            while self.read_frame(timeout) is not None:
                pass
        except Closed:
            pass

    def handshake(self, timeout=5.0):
        return self.run_until(lambda: self.settings_frames > 0, timeout)

    def done(self, sid):
        st = self.streams.get(sid)
        return st is not None and (st.ended or st.rst is not None)

    def wait_closed(self, timeout=5.0):
        self.run_until(lambda: self.closed, timeout)
        return self.closed

    def summary(self):
        return {"goaways": self.goaways, "closed": self.closed}

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def args_dict(argv):
    out = {}
    for a in argv:
        k, _, v = a.partition("=")
        out[k] = v
    return out


def conn(port, opts, **kw):
    c = Conn(port, host=opts.get("host", "127.0.0.1"), tls=opts.get("tls") == "1",
             alpn=opts.get("alpn", "h2"), **kw)
    c.handshake()
    return c


def fresh_get(port, opts, path="/"):
    """A new connection to the same listener still gets an answer."""
    try:
        c = conn(port, opts)
        sid = c.request("GET", path)
        c.run_until(lambda: c.done(sid), 5)
        st = c.streams[sid]
        c.close()
        return st.status()
    except Exception as e:  # noqa: BLE001 (reported, not hidden)
        return "error: %r" % e


def emit(obj):
    print(json.dumps(obj), flush=True)


# Cases. Each returns the dict to print.

def case_get(port, o):
    c = conn(port, o)
    sid = c.request(o.get("method", "GET"), o.get("path", "/"))
    c.run_until(lambda: c.done(sid))
    r = c.streams[sid].summary()
    r["settings"] = {str(k): v for k, v in c.server_settings.items()}
    r["alpn"] = getattr(c, "alpn", None)
    return r


def case_request_trailers(port, o):
    """HEADERS, DATA, HEADERS (trailers, END_STREAM) on one stream."""
    c = conn(port, o)
    sid = c.new_sid()
    c.headers(sid, c.request_headers("POST", o.get("path", "/read_body"),
                                     [("te", "trailers"), ("trailer", "x-checksum")]), False)
    c.send_frame(DATA, 0, sid, b"a" * 1000)
    c.send_frame(DATA, 0, sid, b"b" * 500)
    c.headers(sid, [("x-checksum", "1500")], True)
    c.run_until(lambda: c.done(sid))
    r = c.streams[sid].summary()
    r.update(c.summary())
    return r


def case_response_trailers(port, o):
    c = conn(port, o)
    sid = c.request("GET", o.get("path", "/stream/trailers"), [("te", "trailers")])
    c.run_until(lambda: c.done(sid))
    st = c.streams[sid]
    r = st.summary()
    r["trailers"] = [list(h) for h in st.headers[-1]] if len(st.headers) > 1 else None
    return r


def case_connect_protocol(port, o):
    """RFC 8441: the setting the server advertises, then an extended CONNECT."""
    c = conn(port, o)
    advertised = c.server_settings.get(8)
    sid = c.new_sid()
    c.headers(sid, [(":method", "CONNECT"), (":protocol", "websocket"),
                    (":scheme", c.scheme), (":path", o.get("path", "/ws")),
                    (":authority", c.authority), ("sec-websocket-version", "13"),
                    ("origin", "http://localhost")], False)
    c.run_until(lambda: c.done(sid) or c.streams[sid].status() is not None, 5)
    c.run_until(lambda: c.done(sid), 1)
    r = c.streams[sid].summary()
    r["advertised"] = advertised
    r.update(c.summary())
    # Still usable afterwards?
    sid2 = c.request("GET", "/")
    c.run_until(lambda: c.done(sid2))
    r["after_status"] = c.streams[sid2].status()
    return r


def case_backpressure(port, o):
    """A tiny stream window the client does not open until told to on stdin."""
    window = int(o.get("window", "1024"))
    c = conn(port, o, settings={4: window}, auto_window=False)
    sid = c.request("GET", o.get("path", "/big"))
    total = int(o["total"])
    c.run_until(lambda: len(c.streams[sid].data) >= window or c.done(sid), 5)
    c.drain(0.5)
    st = c.streams[sid]
    emit({"phase": "blocked", "status": st.status(), "received": len(st.data),
          "ended": st.ended, "rst": st.rst, "goaways": c.goaways})
    sys.stdin.readline()
    # Open the windows wide and read everything.
    c.send_frame(SETTINGS, 0, 0, settings_payload({4: MAX_WINDOW}))
    c.local_initial_window = MAX_WINDOW
    c.window_update(0, MAX_WINDOW - 65535)
    c.auto_window = True
    c.run_until(lambda: c.done(sid) or len(st.data) >= total, 60)
    c.run_until(lambda: c.done(sid), 2)
    chunk = int(o["chunk"])
    intact = len(st.data) == total and all(
        st.data[i] == ((i // chunk) + 1) % 256 for i in range(0, total, 997))
    r = st.summary(body=False)
    r.update({"phase": "done", "intact": intact})
    r.update(c.summary())
    return r


def case_goaway_on_stop(port, o):
    """A slow request in flight while the listener stops."""
    c = conn(port, o)
    sid1 = c.request("GET", o.get("path", "/slow/1500"))
    emit({"phase": "sent"})
    sys.stdin.readline()
    t0 = time.monotonic()
    # Wait for the GOAWAY that names the real last stream.
    c.run_until(lambda: any(g["last"] < MAX_WINDOW for g in c.goaways) or c.done(sid1), 10)
    goaway_ms = int((time.monotonic() - t0) * 1000)
    sid3 = c.request("GET", "/")
    c.run_until(lambda: c.closed, 10)
    r = {"phase": "done", "goaways": c.goaways, "pings": len(c.pings),
         "stream1": c.streams[sid1].summary(), "stream3": c.streams[sid3].summary(),
         "closed": c.closed, "goaway_ms": goaway_ms}
    return r


def case_content_length(port, o):
    """Declared content-length larger, then smaller, than the DATA sent."""
    c = conn(port, o)
    path = o.get("path", "/read_body")
    s1 = c.new_sid()
    c.headers(s1, c.request_headers("POST", path, [("content-length", "10")]), False)
    c.send_frame(DATA, END_STREAM, s1, b"12345")
    s3 = c.new_sid()
    c.headers(s3, c.request_headers("POST", path, [("content-length", "5")]), False)
    c.send_frame(DATA, END_STREAM, s3, b"1234567890")
    s5 = c.new_sid()
    c.headers(s5, c.request_headers("POST", path, [("content-length", "5")]), False)
    c.send_frame(DATA, END_STREAM, s5, b"12345")
    c.run_until(lambda: all(c.done(s) for s in (s1, s3, s5)), 5)
    return {"short": c.streams[s1].summary(), "long": c.streams[s3].summary(),
            "exact": c.streams[s5].summary(), "goaways": c.goaways, "closed": c.closed}


def case_crash(port, o):
    """Crashing handlers on two streams beside two healthy ones."""
    c = conn(port, o)
    s_slow = c.request("GET", "/slow/500")
    s_before = c.request("GET", "/crash/before")
    s_after = c.request("GET", "/crash/after")
    s_ok = c.request("GET", "/")
    sids = (s_slow, s_before, s_after, s_ok)
    c.run_until(lambda: all(c.done(s) for s in sids), 5)
    r = {"slow": c.streams[s_slow].summary(), "before": c.streams[s_before].summary(),
         "after": c.streams[s_after].summary(), "ok": c.streams[s_ok].summary()}
    s_again = c.request("GET", "/")
    c.run_until(lambda: c.done(s_again), 5)
    r["again"] = c.streams[s_again].summary()
    r.update(c.summary())
    return r


def case_header_list_too_large(port, o):
    """Decoded header list of ~n KB (Huffman-coded so the block stays small)."""
    size = int(o.get("kb", "70")) * 1000
    c = conn(port, o)
    extra = [("x-big-%d" % i, "a" * 1000) for i in range(size // 1000)]
    block = c.encoder.encode(c.request_headers("GET", "/", extra), huffman=True)
    sid = c.new_sid()
    c.header_block(sid, block, True)
    c.run_until(lambda: c.done(sid), 5)
    r = c.streams[sid].summary()
    r["block_len"] = len(block)
    sid2 = c.request("GET", "/")
    c.run_until(lambda: c.done(sid2), 5)
    r["after"] = c.streams[sid2].summary()
    r.update(c.summary())
    return r


# HPACK by hand for the bomb, so the encoder's table view stays ours.
def hp_int(value, prefix_bits, first):
    limit = (1 << prefix_bits) - 1
    if value < limit:
        return bytes([first | value])
    out = [first | limit]
    value -= limit
    while value >= 128:
        out.append((value & 0x7f) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def hp_str(s):
    return hp_int(len(s), 7, 0) + s


def hp_request_prefix(c, path=b"/"):
    # :method GET (2), :scheme http/https (6/7), :path (4) literal, :authority (1) literal.
    scheme = 0x87 if c.scheme == "https" else 0x86
    return (bytes([0x82, scheme]) + hp_int(4, 4, 0x00) + hp_str(path)
            + hp_int(1, 4, 0x00) + hp_str(c.authority.encode()))


def case_hpack_bomb(port, o):
    refs = int(o.get("refs", "30"))
    c = conn(port, o)
    value = b"v" * 4000
    # Stream 1: inserts x-bomb into the dynamic table (index 62).
    s1 = c.new_sid()
    c.header_block(s1, hp_request_prefix(c) + b"\x40" + hp_str(b"x-bomb") + hp_str(value))
    c.run_until(lambda: c.done(s1), 5)
    # Stream 3: the entry referenced `refs' times (refs * 4 KB decoded).
    s3 = c.new_sid()
    c.header_block(s3, hp_request_prefix(c) + bytes([0xbe]) * refs)
    c.run_until(lambda: c.done(s3), 5)
    # Stream 5: one reference, a normal request.
    s5 = c.new_sid()
    c.header_block(s5, hp_request_prefix(c) + bytes([0xbe]))
    c.run_until(lambda: c.done(s5), 5)
    r = {"insert": c.streams[s1].summary(), "bomb": c.streams[s3].summary(),
         "after": c.streams[s5].summary()}
    r.update(c.summary())
    return r


def flood_result(c, port, o, extra=None):
    """After a flood: drain until the server closes, report, try a new connection."""
    c.run_until(lambda: c.closed, float(o.get("wait", "3")))
    r = {"goaways": c.goaways, "closed": c.closed, "send_failed": c.send_failed,
         "rsts": {}}
    for sid, st in c.streams.items():
        if st.rst is not None:
            name = err_name(st.rst)
            r["rsts"][name] = r["rsts"].get(name, 0) + 1
    r["statuses"] = {}
    for st in c.streams.values():
        s = st.status()
        if s is not None:
            r["statuses"][str(s)] = r["statuses"].get(str(s), 0) + 1
    if not c.closed and not c.goaways:
        # Is the flooded connection still usable?
        sid = c.request("GET", "/")
        c.run_until(lambda: c.done(sid) or bool(c.goaways), 5)
        r["still_usable"] = c.streams[sid].status()
    r.update(extra or {})
    c.close()
    r["fresh_status"] = fresh_get(port, o)
    return r


def flood(port, o, make, count, batch=100, **kw):
    """Sends make(i) for i in range(count), in batches, reading between them;
    stops early once the server sent GOAWAY or closed."""
    c = conn(port, o, **kw)
    sent = 0
    for start in range(0, count, batch):
        data = b"".join(make(c, i) for i in range(start, min(count, start + batch)))
        if not c.send(data):
            break
        sent = min(count, start + batch)
        c.drain(0)
        if c.goaways or c.closed:
            break
    return flood_result(c, port, o, {"sent": sent})


def case_rapid_reset(port, o):
    path = o.get("path", "/slow/3000")

    def make(c, i):
        sid = c.new_sid()
        block = c.encoder.encode(c.request_headers("GET", path))
        return frame(HEADERS, END_STREAM | END_HEADERS, sid, block) + \
            frame(RST_STREAM, 0, sid, struct.pack(">I", 8))
    return flood(port, o, make, int(o.get("count", "1000")))


def case_settings_flood(port, o):
    return flood(port, o, lambda c, i: frame(SETTINGS, 0, 0, settings_payload({2: 0})),
                 int(o.get("count", "4000")))


def case_ping_flood(port, o):
    return flood(port, o, lambda c, i: frame(PING, 0, 0, struct.pack(">Q", i)),
                 int(o.get("count", "4000")))


def case_priority_flood(port, o):
    # PRIORITY on idle streams far ahead, each depending on stream 0.
    return flood(port, o, lambda c, i: frame(PRIORITY, 0, 1001 + 2 * i,
                                             struct.pack(">IB", 0, 15)),
                 int(o.get("count", "4000")))


def case_window_update_flood(port, o):
    # Connection-level increments of 1 while nothing is waiting to be sent.
    return flood(port, o, lambda c, i: frame(WINDOW_UPDATE, 0, 0, struct.pack(">I", 1)),
                 int(o.get("count", "4000")))


def case_empty_data_flood(port, o):
    c = conn(port, o)
    sid = c.new_sid()
    c.headers(sid, c.request_headers("POST", o.get("path", "/read_body")), False)
    count, sent = int(o.get("count", "4000")), 0
    for start in range(0, count, 100):
        if not c.send(frame(DATA, 0, sid) * 100):
            break
        sent = start + 100
        c.drain(0)
        if c.goaways or c.closed:
            break
    if not c.goaways and not c.closed:
        c.send_frame(DATA, END_STREAM, sid, b"end")
        c.run_until(lambda: c.done(sid) or bool(c.goaways), 5)
    return flood_result(c, port, o, {"sent": sent, "stream": c.streams[sid].summary()})


def case_continuation_flood(port, o):
    """HEADERS then CONTINUATION frames of 1000 bytes, never END_HEADERS."""
    c = conn(port, o)
    sid = c.new_sid()
    block = c.encoder.encode(c.request_headers("GET", "/"))
    c.send_frame(HEADERS, END_STREAM, sid, block)
    count, sent = int(o.get("count", "1000")), 0
    # Each fragment is a whole literal field without indexing: x-a: <990 x>.
    piece = b"\x00" + hp_str(b"x-a") + hp_str(b"x" * 990)
    # Paced (10 frames, then up to 20 ms to read) so that `sent' tells how
    # much the server took before cutting, not how fast the kernel buffers.
    for start in range(0, count, 10):
        if not c.send(frame(CONTINUATION, 0, sid, piece) * 10):
            break
        sent = start + 10
        c.drain(0.02)
        if c.goaways or c.closed:
            break
    return flood_result(c, port, o, {"sent": sent, "fragment_len": len(piece)})


def case_header_block_size(port, o):
    """One complete header block of about kb KB spread over CONTINUATIONs."""
    c = conn(port, o)
    sid = c.new_sid()
    n = int(o.get("kb", "70"))
    block = c.encoder.encode(c.request_headers("GET", "/")) + \
        (b"\x00" + hp_str(b"x-a") + hp_str(b"x" * 993)) * n
    c.header_block(sid, block, True, max_frame=8192)
    c.run_until(lambda: c.done(sid) or bool(c.goaways), 5)
    return flood_result(c, port, o, {"block_len": len(block),
                                     "stream": c.streams[sid].summary()})


def case_empty_continuation(port, o):
    c = conn(port, o)
    sid = c.new_sid()
    block = c.encoder.encode(c.request_headers("GET", "/"))
    c.send_frame(HEADERS, END_STREAM, sid, block)
    t0 = time.monotonic()
    c.send_frame(CONTINUATION, 0, sid, b"")
    c.run_until(lambda: bool(c.goaways) or c.closed, 5)
    ms = int((time.monotonic() - t0) * 1000)
    return flood_result(c, port, o, {"ms": ms})


def case_concurrent_streams(port, o):
    """`open' slow streams, then `extra' more beyond the limit."""
    c = conn(port, o)
    limit = c.server_settings.get(3)
    n_open, extra = int(o.get("open", "100")), int(o.get("extra", "1"))
    path = o.get("path", "/slow/3000")
    first = [c.request("GET", path) for _ in range(n_open)]
    c.drain(0.3)
    beyond = []
    for start in range(0, extra, 50):
        beyond += [c.request("GET", path) for _ in range(min(50, extra - start))]
        c.drain(0)
        if c.goaways or c.closed:
            break
    c.run_until(lambda: all(c.done(s) for s in beyond) or bool(c.goaways), 5)
    refused_first = sum(1 for s in beyond if c.streams[s].rst == 7)
    if not c.goaways:
        c.run_until(lambda: all(c.done(s) for s in first) or bool(c.goaways), 10)
    return flood_result(c, port, o, {
        "advertised": limit, "beyond_sent": len(beyond), "beyond_refused": refused_first,
        "first_ok": sum(1 for s in first if c.streams[s].status() == 200),
        "first_rst": sum(1 for s in first if c.streams[s].rst is not None)})


def case_flow_control_timeout(port, o):
    """Stream window 0, a large response, no WINDOW_UPDATE ever."""
    c = conn(port, o, settings={4: 0}, auto_window=False)
    sid = c.request("GET", o.get("path", "/big"))
    t0 = time.monotonic()
    c.run_until(lambda: bool(c.goaways) or c.closed, float(o.get("wait", "10")))
    ms = int((time.monotonic() - t0) * 1000)
    return flood_result(c, port, o, {"ms": ms, "stream": c.streams[sid].summary(body=False)})


def case_no_settings_ack(port, o):
    c = conn(port, o, auto_ack=False)
    t0 = time.monotonic()
    c.run_until(lambda: bool(c.goaways) or c.closed, float(o.get("wait", "10")))
    return flood_result(c, port, o, {"ms": int((time.monotonic() - t0) * 1000)})


def case_idle(port, o):
    c = conn(port, o)
    sid = c.request("GET", "/")
    c.run_until(lambda: c.done(sid))
    t0 = time.monotonic()
    c.run_until(lambda: bool(c.goaways) or c.closed, float(o.get("wait", "10")))
    return flood_result(c, port, o, {"ms": int((time.monotonic() - t0) * 1000),
                                     "status": c.streams[sid].status()})


def case_no_preface(port, o):
    """A connection that never sends the preface (over TLS: after the
    handshake chose h2 by ALPN)."""
    s = socket.create_connection((o.get("host", "127.0.0.1"), port))
    if o.get("tls") == "1":
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        ctx.set_alpn_protocols(["h2"])
        s = ctx.wrap_socket(s, server_hostname=o.get("host", "127.0.0.1"))
    c = Conn(port, sock=s, preface=False)
    t0 = time.monotonic()
    c.run_until(lambda: c.closed, float(o.get("wait", "10")))
    return {"closed": c.closed, "ms": int((time.monotonic() - t0) * 1000),
            "goaways": c.goaways, "settings_frames": c.settings_frames}


def case_bulk_requests(port, o):
    """n GETs on one connection, `concurrency' streams at a time, the way a
    well-behaved client paces them (it acknowledges the DATA it reads)."""
    n, conc = int(o.get("n", "2000")), int(o.get("concurrency", "10"))
    path = o.get("path", "/")
    c = conn(port, o)
    done = ok = 0
    inflight = []
    t0 = time.monotonic()
    while done < n and not c.goaways and not c.closed:
        while len(inflight) < conc and done + len(inflight) < n:
            inflight.append(c.request("GET", path))
        c.run_until(lambda: any(c.done(s) for s in inflight) or bool(c.goaways), 10)
        still = []
        for s in inflight:
            if c.done(s):
                done += 1
                ok += c.streams[s].status() == 200
                del c.streams[s]
            else:
                still.append(s)
        if len(still) == len(inflight):
            break
        inflight = still
    ms = int((time.monotonic() - t0) * 1000)
    return {"n": n, "done": done, "ok": ok, "goaways": c.goaways, "closed": c.closed,
            "ms": ms}


def case_upload(port, o):
    """A large POST sent as fast as the server's windows allow."""
    size = int(o.get("mb", "200")) * 1024 * 1024
    c = conn(port, o)
    sid = c.new_sid()
    c.headers(sid, c.request_headers("POST", o.get("path", "/read_body"),
                                     [("content-length", str(size))]), False)
    conn_win = 65535
    stream_win = c.server_settings.get(4, 65535)
    max_frame = c.server_settings.get(5, 16384)
    chunk = bytes(range(256)) * (max_frame // 256)
    used_updates = 0
    sent = 0
    t0 = time.monotonic()
    while sent < size and not c.goaways and not c.closed:
        # Apply WINDOW_UPDATEs received so far.
        for wsid, inc in c.window_updates[used_updates:]:
            if wsid == 0:
                conn_win += inc
            elif wsid == sid:
                stream_win += inc
        used_updates = len(c.window_updates)
        n = min(conn_win, stream_win, size - sent, max_frame)
        if n <= 0:
            try:
                c.read_frame(10)
            except Closed:
                break
            continue
        end = END_STREAM if sent + n == size else 0
        if not c.send_frame(DATA, end, sid, chunk[:n]):
            break
        sent += n
        conn_win -= n
        stream_win -= n
        c.drain(0)
    c.run_until(lambda: c.done(sid) or bool(c.goaways), 30)
    r = c.streams[sid].summary()
    r.update({"sent": sent, "size": size, "ms": int((time.monotonic() - t0) * 1000)})
    r.update(c.summary())
    return r


def http11_upgrade(port, o, method, body):
    s = socket.create_connection((o.get("host", "127.0.0.1"), port), timeout=5)
    import base64
    settings = base64.urlsafe_b64encode(settings_payload({3: 100})).rstrip(b"=")
    req = (b"%s %s HTTP/1.1\r\nhost: localhost\r\nconnection: Upgrade, HTTP2-Settings\r\n"
           b"upgrade: h2c\r\nhttp2-settings: %s\r\n" % (method.encode(), o.get("path", "/").encode(), settings))
    if body:
        req += b"content-length: %d\r\n" % len(body)
    s.sendall(req + b"\r\n" + body)
    buf = b""
    while b"\r\n\r\n" not in buf:
        d = s.recv(65536)
        if not d:
            break
        buf += d
    head, _, rest = buf.partition(b"\r\n\r\n")
    return s, head.decode("latin-1"), rest


def case_h2c_upgrade(port, o):
    s, head, rest = http11_upgrade(port, o, "GET", b"")
    r = {"status_line": head.split("\r\n")[0]}
    if " 101 " in r["status_line"]:
        c = Conn(port, sock=s, preface=False)
        c.buf = rest
        c.send(PREFACE + frame(SETTINGS, 0, 0))
        c.streams[1] = Stream()
        c.run_until(lambda: c.done(1), 5)
        r["stream1"] = c.streams[1].summary()
        r["first_frame"] = c.log[0][0] if c.log else None
        sid = 3
        c.next_sid = 3
        sid = c.request("GET", o.get("path", "/"))
        c.run_until(lambda: c.done(sid), 5)
        r["stream3"] = c.streams[sid].summary()
    return r


def case_h2c_upgrade_post(port, o):
    body = b"x" * 100
    s, head, rest = http11_upgrade(port, o, "POST", body)
    lines = head.split("\r\n")
    r = {"status_line": lines[0], "headers": [l.lower() for l in lines[1:]]}
    s.settimeout(2)
    try:
        while len(rest) < 5:
            d = s.recv(65536)
            if not d:
                break
            rest += d
    except socket.timeout:
        pass
    r["body"] = rest.decode("latin-1")
    return r


def main():
    case, port = sys.argv[1], int(sys.argv[2])
    opts = args_dict(sys.argv[3:])
    fun = globals().get("case_" + case)
    if fun is None:
        print(json.dumps({"error": "unknown case " + case}))
        sys.exit(2)
    try:
        emit(fun(port, opts))
    except Closed:
        emit({"error": "connection closed unexpectedly"})
    except Exception as e:  # noqa: BLE001 (reported to CT)
        import traceback
        emit({"error": repr(e), "trace": traceback.format_exc()})


if __name__ == "__main__":
    main()
