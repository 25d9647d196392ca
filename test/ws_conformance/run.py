"""Runs the Websocket conformance cases of cases.py against a server, over an
HTTP/1.1 upgrade (RFC 6455 4) or an HTTP/2 extended CONNECT stream (RFC 8441,
the HTTP/2 layer done by the h2 library; the Websocket bytes are ours).

  run.py --port P [--host H] [--proto h1|h2] [--tls] [--lenient-errors]
         [--only ID,PREFIX...] [--skip ID,...] [-j N] [--quiet] [--json FILE]
         [--list]

One line per case ("PASS <id>" or "FAIL <id>: <why>; sent: <bytes>"), then a
last line "SUMMARY <json>" with passed, failed, total and failed_ids.
Exit status 0 when every selected case passed, 1 otherwise.

--lenient-errors: for cases where the server must fail the connection, also
accept any close code, or the connection closed without a close frame
(hypercorn does that). --no-end-check: after the server's close frame, do not
require the connection (HTTP/2: the stream) to end; only that nothing else
comes (hypercorn leaves the RFC 8441 stream open). --only and --skip take case ids, or prefixes ending
in "." ("6." is section 6, "6.2." its sub-section 2).
"""
import argparse
import base64
import hashlib
import json
import os
import select
import socket
import ssl
import struct
import sys
import time
import traceback
import zlib
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cases as C  # noqa: E402

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


class Closed(Exception):
    pass


class Fail(Exception):
    pass


def short(b, n=48):
    if isinstance(b, str):
        return b
    if len(b) <= n:
        return repr(bytes(b))
    return "%d bytes (sha256 %s, starts %r)" % (len(b), hashlib.sha256(b).hexdigest()[:12],
                                                 bytes(b[:24]))


# Sockets: non-blocking, so that a large write never blocks while the server
# waits for us to read its echo.

class RawSock:
    def __init__(self, host, port, tls, alpn, timeout):
        s = socket.create_connection((host, port), timeout=timeout)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.alpn = None
        if tls:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
            ctx.set_alpn_protocols(alpn)
            s = ctx.wrap_socket(s, server_hostname=host)
            self.alpn = s.selected_alpn_protocol()
        s.setblocking(False)
        self.s = s
        self.rbuf = bytearray()
        self.eof = None
        self.write_failed = None

    def read_available(self):
        while self.eof is None:
            try:
                d = self.s.recv(1 << 20)
            except (ssl.SSLWantReadError, ssl.SSLWantWriteError, BlockingIOError):
                return
            except (ConnectionResetError, BrokenPipeError, ssl.SSLError, OSError) as e:
                self.eof = type(e).__name__
                return
            if not d:
                self.eof = "EOF"
                return
            self.rbuf += d

    def wait_read(self, timeout):
        """Reads what comes within timeout; True when something happened."""
        if self.eof is not None:
            return True
        if isinstance(self.s, ssl.SSLSocket) and self.s.pending():
            self.read_available()
            return True
        r, _, _ = select.select([self.s], [], [], max(0, timeout))
        if r:
            self.read_available()
            return True
        return False

    def write(self, data, timeout=30):
        view = memoryview(data)
        deadline = time.monotonic() + timeout
        while view:
            if self.write_failed:
                return False
            r, w, _ = select.select([] if self.eof else [self.s], [self.s], [], 1)
            if r:
                self.read_available()
            if w:
                try:
                    n = self.s.send(view[:1 << 18])
                except (ssl.SSLWantWriteError, ssl.SSLWantReadError, BlockingIOError):
                    continue
                except (ConnectionResetError, BrokenPipeError, ssl.SSLError, OSError) as e:
                    self.write_failed = type(e).__name__
                    return False
                view = view[n:]
            if time.monotonic() > deadline:
                raise Fail("could not write %d more bytes in %d s" % (len(view), timeout))
        return True

    def close(self):
        try:
            self.s.close()
        except OSError:
            pass


def ext_offers(case):
    lines = []
    if case.offer is not None:
        lines.append(case.offer)
    lines += [v for k, v in case.extra_headers if k == "sec-websocket-extensions"]
    return lines


class H1:
    """Websocket over an HTTP/1.1 upgrade."""
    def __init__(self, opts, case, timeout):
        self.sock = RawSock(opts.host, opts.port, opts.tls, ["http/1.1"], timeout)
        key = base64.b64encode(os.urandom(16))
        extra = dict((k, v) for k, v in case.extra_headers if k.startswith("__"))
        lines = ["GET %s HTTP/1.1" % case.path, "Host: %s:%d" % (opts.host, opts.port),
                 "Upgrade: %s" % extra.get("__upgrade", "websocket"),
                 "Connection: %s" % extra.get("__connection", "Upgrade"),
                 "Sec-WebSocket-Key: %s" % key.decode(), "Sec-WebSocket-Version: 13"]
        lines += ["Sec-WebSocket-Extensions: %s" % v for v in ext_offers(case)]
        req = ("\r\n".join(lines) + "\r\n\r\n").encode()
        if "__early" in extra:
            req += bytes.fromhex(extra["__early"])
        self.sock.write(req)
        deadline = time.monotonic() + timeout
        while b"\r\n\r\n" not in self.sock.rbuf:
            if self.sock.eof:
                raise Fail("handshake: connection closed (%s) after %r" % (self.sock.eof,
                                                                          bytes(self.sock.rbuf)))
            if time.monotonic() > deadline:
                raise Fail("handshake: no response head in %d s" % timeout)
            self.sock.wait_read(deadline - time.monotonic())
        end = self.sock.rbuf.index(b"\r\n\r\n")
        head = bytes(self.sock.rbuf[:end]).decode("latin-1")
        del self.sock.rbuf[:end + 4]
        status_line, *hlines = head.split("\r\n")
        self.status = int(status_line.split(" ")[1])
        self.headers = []
        for line in hlines:
            k, _, v = line.partition(":")
            self.headers.append((k.strip().lower(), v.strip()))
        if self.status != 101:
            raise Fail("handshake: status %d, expected 101: %r" % (self.status, head))
        accept = base64.b64encode(hashlib.sha1(key + GUID).digest()).decode()
        h = dict(self.headers)
        if h.get("sec-websocket-accept") != accept:
            raise Fail("handshake: sec-websocket-accept %r, expected %r"
                       % (h.get("sec-websocket-accept"), accept))
        if h.get("upgrade", "").lower() != "websocket":
            raise Fail("handshake: upgrade header %r" % h.get("upgrade"))
        if "upgrade" not in [t.strip().lower() for t in h.get("connection", "").split(",")]:
            raise Fail("handshake: connection header %r" % h.get("connection"))

    def send(self, data):
        return self.sock.write(data)

    def recv(self, timeout):
        """Bytes received (b"" on timeout); Closed when the server closed."""
        if not self.sock.rbuf and self.sock.eof is None:
            self.sock.wait_read(timeout)
        if self.sock.rbuf:
            data = bytes(self.sock.rbuf)
            self.sock.rbuf.clear()
            return data
        if self.sock.eof is not None:
            raise Closed("TCP " + self.sock.eof)
        return b""

    def close(self):
        self.sock.close()


class H2:
    """Websocket over an HTTP/2 extended CONNECT stream (RFC 8441)."""
    def __init__(self, opts, case, timeout):
        import h2.config
        import h2.connection
        import h2.events
        import h2.settings
        self.ev = h2.events
        self.sock = RawSock(opts.host, opts.port, opts.tls, ["h2"], timeout)
        if opts.tls and self.sock.alpn != "h2":
            raise Fail("ALPN selected %r, not h2" % self.sock.alpn)
        cfg = h2.config.H2Configuration(client_side=True, header_encoding=None)
        self.conn = h2.connection.H2Connection(cfg)
        self.conn.local_settings = h2.settings.Settings(client=True, initial_values={
            h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 1 << 20,
            h2.settings.SettingCodes.ENABLE_PUSH: 0})
        self.conn.initiate_connection()
        self.conn.increment_flow_control_window(16 << 20)
        self.remote_settings = None
        self.sid = None
        self.status = None
        self.headers = []
        self.data = bytearray()
        self.eof = None
        self.flush()
        deadline = time.monotonic() + timeout
        while self.remote_settings is None:
            self.pump(deadline)
        if self.remote_settings.get(8) != 1:
            raise Fail("SETTINGS_ENABLE_CONNECT_PROTOCOL is %r, not 1"
                       % self.remote_settings.get(8))
        self.sid = self.conn.get_next_available_stream_id()
        hdrs = [(":method", "CONNECT"), (":protocol", "websocket"),
                (":scheme", "https" if opts.tls else "http"), (":path", case.path),
                (":authority", "%s:%d" % (opts.host, opts.port)),
                ("sec-websocket-version", "13")]
        offers = ext_offers(case)
        if offers:
            hdrs.append(("sec-websocket-extensions", ", ".join(offers)))
        self.conn.send_headers(self.sid, [(k.encode(), v.encode()) for k, v in hdrs])
        self.flush()
        while self.status is None:
            if self.eof:
                raise Fail("extended CONNECT: stream closed (%s) before a response" % self.eof)
            self.pump(deadline)
        if self.status != 200:
            raise Fail("extended CONNECT: status %d, expected 200" % self.status)

    def flush(self):
        out = self.conn.data_to_send()
        if out:
            self.sock.write(out)

    def process(self):
        if self.sock.rbuf:
            data = bytes(self.sock.rbuf)
            self.sock.rbuf.clear()
            try:
                events = self.conn.receive_data(data)
            except Exception as e:  # a protocol error on the server's side
                self.eof = self.eof or "HTTP/2 error: %r" % e
                return
            for e in events:
                self.event(e)
            self.flush()
        if self.sock.eof and not self.eof:
            self.eof = "TCP " + self.sock.eof

    def event(self, e):
        ev = self.ev
        if isinstance(e, ev.RemoteSettingsChanged):
            self.remote_settings = {int(k): v.new_value for k, v in e.changed_settings.items()}
        elif isinstance(e, ev.ResponseReceived) and e.stream_id == self.sid:
            self.headers = [(k.decode().lower(), v.decode()) for k, v in e.headers]
            self.status = int(dict(self.headers)[":status"])
        elif isinstance(e, ev.DataReceived) and e.stream_id == self.sid:
            self.data += e.data
            self.conn.acknowledge_received_data(e.flow_controlled_length, e.stream_id)
        elif isinstance(e, ev.DataReceived):
            self.conn.acknowledge_received_data(e.flow_controlled_length, e.stream_id)
        elif isinstance(e, ev.StreamEnded) and e.stream_id == self.sid:
            self.eof = self.eof or "END_STREAM"
        elif isinstance(e, ev.StreamReset) and e.stream_id == self.sid:
            self.eof = self.eof or "RST_STREAM %s" % e.error_code
        elif isinstance(e, ev.ConnectionTerminated):
            self.eof = self.eof or "GOAWAY %s" % e.error_code

    def pump(self, deadline):
        if time.monotonic() > deadline:
            raise Fail("HTTP/2: timeout")
        self.sock.wait_read(min(1, deadline - time.monotonic()))
        self.process()

    def send(self, data):
        view = memoryview(data)
        deadline = time.monotonic() + 30
        stalled_since = time.monotonic()
        while view:
            self.process()
            if self.eof and self.eof != "END_STREAM":
                return False
            try:
                window = min(self.conn.local_flow_control_window(self.sid),
                             self.conn.max_outbound_frame_size)
            except Exception:
                return False
            if window <= 0:
                # A server that failed the connection stops reading, and so
                # opening the window: after 2 s, give up the rest of the
                # write and let the reader see what the server said.
                if time.monotonic() > stalled_since + 2:
                    self.send_stalled = len(view)
                    return False
                self.pump(deadline)
                continue
            stalled_since = time.monotonic()
            chunk = bytes(view[:window])
            try:
                self.conn.send_data(self.sid, chunk)
            except Exception:
                return False
            view = view[len(chunk):]
            self.flush()
        return True

    def recv(self, timeout):
        self.process()
        if not self.data and not self.eof:
            self.sock.wait_read(timeout)
            self.process()
        if self.data:
            data = bytes(self.data)
            self.data.clear()
            return data
        if self.eof:
            raise Closed(self.eof)
        return b""

    def close(self):
        try:
            self.conn.end_stream(self.sid)
            self.flush()
        except Exception:
            pass
        self.sock.close()


# permessage-deflate, client side.

def parse_extensions(values):
    """[(name, [(param, value or True)])] from header values."""
    out = []
    for value in values:
        for ext in split_outside_quotes(value, ","):
            if not ext.strip():
                continue
            parts = split_outside_quotes(ext, ";")
            params = []
            for p in parts[1:]:
                k, eq, v = p.strip().partition("=")
                v = v.strip()
                if len(v) >= 2 and v[0] == '"' and v[-1] == '"':
                    v = v[1:-1].replace("\\", "")
                params.append((k.strip().lower(), v if eq else True))
            out.append((parts[0].strip().lower(), params))
    return out


def split_outside_quotes(s, sep):
    out, cur, q = [], "", False
    for ch in s:
        if ch == '"':
            q = not q
        if ch == sep and not q:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    return out


def check_negotiation(case, headers):
    """None when no extension is in use, else the accepted parameters."""
    values = [v for k, v in headers if k == "sec-websocket-extensions"]
    resp = parse_extensions(values)
    if case.neg is None or case.neg == "declined":
        if resp:
            raise Fail("sec-websocket-extensions %r in the response, expected none%s"
                       % (values, " (the offer is invalid)" if case.neg else ""))
        return None
    offers = parse_extensions(ext_offers(case))
    offer = dict(offers[case.neg.index][1])
    if len(resp) != 1 or resp[0][0] != "permessage-deflate":
        raise Fail("sec-websocket-extensions %r, expected one permessage-deflate accepting "
                   "offer %r" % (values, ext_offers(case)))
    params = resp[0][1]
    names = [k for k, _ in params]
    if len(set(names)) != len(names):
        raise Fail("response %r repeats a parameter (RFC7692 7)" % values)
    got = dict(params)
    known = {"server_no_context_takeover", "client_no_context_takeover",
             "server_max_window_bits", "client_max_window_bits"}
    if set(got) - known:
        raise Fail("response %r has unknown parameters" % values)
    for flag in ("server_no_context_takeover", "client_no_context_takeover"):
        if flag in got and got[flag] is not True:
            raise Fail("response %r: %s takes no value (RFC7692 7.1.1)" % (values, flag))
    if "server_no_context_takeover" in offer and "server_no_context_takeover" not in got:
        raise Fail("response %r lacks server_no_context_takeover, which was offered "
                   "(RFC7692 7.1.1.1)" % values)

    def bits(name):
        v = got[name]
        if v is True or not v.isdigit() or not 8 <= int(v) <= 15 or v != str(int(v)):
            raise Fail("response %r: %s=%r is not 8..15 (RFC7692 7.1.2)" % (values, name, v))
        return int(v)
    if "server_max_window_bits" in offer:
        if "server_max_window_bits" not in got:
            raise Fail("response %r lacks server_max_window_bits, which was offered as %s "
                       "(RFC7692 7.1.2.1)" % (values, offer["server_max_window_bits"]))
        if bits("server_max_window_bits") > int(offer["server_max_window_bits"]):
            raise Fail("response %r: server_max_window_bits above the offer's %s "
                       "(RFC7692 7.1.2.1)" % (values, offer["server_max_window_bits"]))
    elif "server_max_window_bits" in got:
        bits("server_max_window_bits")
    if "client_max_window_bits" in got:
        if "client_max_window_bits" not in offer:
            raise Fail("response %r has client_max_window_bits, which was not offered "
                       "(RFC7692 7.1.2.2)" % values)
        b = bits("client_max_window_bits")
        if offer["client_max_window_bits"] is not True and b > int(offer["client_max_window_bits"]):
            raise Fail("response %r: client_max_window_bits above the offer's %s "
                       "(RFC7692 7.1.2.2)" % (values, offer["client_max_window_bits"]))
    return got


class DeflateCtx:
    def __init__(self, params):
        cb = params.get("client_max_window_bits")
        # zlib cannot deflate raw with 8 bits; with 9 it keeps distances within 250 bytes.
        self.c_bits = max(9, int(cb) if cb not in (None, True) else 15)
        self.c_reset = "client_no_context_takeover" in params
        sb = params.get("server_max_window_bits")
        self.s_bits = int(sb) if sb not in (None, True) else 15
        self.s_reset = "server_no_context_takeover" in params
        self.comp = None
        self.decomp = None

    def compress(self, data, bfinal=False):
        if bfinal:
            # RFC 7692 7.2.1: a final block, then an empty stored block whose
            # last 4 bytes are removed: one 0x00 byte.
            c = zlib.compressobj(6, zlib.DEFLATED, -self.c_bits)
            self.comp = None
            return c.compress(data) + c.flush(zlib.Z_FINISH) + b"\x00"
        if self.comp is None or self.c_reset:
            self.comp = zlib.compressobj(6, zlib.DEFLATED, -self.c_bits)
        out = self.comp.compress(data) + self.comp.flush(zlib.Z_SYNC_FLUSH)
        assert out.endswith(b"\x00\x00\xff\xff")
        return out[:-4]

    def decompress(self, data):
        if self.decomp is None or self.s_reset:
            self.decomp = zlib.decompressobj(-self.s_bits)
        try:
            out = self.decomp.decompress(data + b"\x00\x00\xff\xff")
        except zlib.error as e:
            raise Fail("server message does not inflate with a %d-bit window%s: %s (payload %s)"
                       % (self.s_bits, " and a fresh context" if self.s_reset else "", e,
                          short(data)))
        if self.decomp.eof:
            self.decomp = None
        return out


# Server frames.

class Reader:
    """Parses server frames and joins messages; checks the server's frames
    follow RFC 6455 (unmasked, no undefined RSV bits, control frames whole)."""
    def __init__(self, deflate):
        self.buf = bytearray()
        self.deflate = deflate
        self.msg = None    # (opcode, compressed, [payloads])

    def feed(self, data):
        self.buf += data

    def next(self):
        b = self.buf
        if len(b) < 2:
            return None
        fin, rsv, op = b[0] >> 7, (b[0] >> 4) & 7, b[0] & 15
        masked, n, pos = b[1] >> 7, b[1] & 127, 2
        if n == 126:
            if len(b) < 4:
                return None
            n, pos = struct.unpack(">H", b[2:4])[0], 4
        elif n == 127:
            if len(b) < 10:
                return None
            n, pos = struct.unpack(">Q", b[2:10])[0], 10
        if masked:
            raise Fail("the server sent a masked frame (RFC6455 5.1)")
        if len(b) < pos + n:
            return None
        payload = bytes(b[pos:pos + n])
        del b[:pos + n]
        if op >= 8:
            if op not in (CLOSE, PING, PONG):
                raise Fail("the server sent reserved opcode %d" % op)
            if not fin or n > 125 or rsv:
                raise Fail("the server sent a bad control frame (fin %d, rsv %d, %d bytes)"
                           % (fin, rsv, n))
            if op == CLOSE:
                if n == 0:
                    return ("close", None, b"")
                if n == 1:
                    raise Fail("the server sent a close frame with a 1-byte payload")
                return ("close", struct.unpack(">H", payload[:2])[0], payload[2:])
            return ("ping" if op == PING else "pong", payload)
        if op not in (CONT, TEXT, BINARY):
            raise Fail("the server sent reserved opcode %d" % op)
        if op == CONT:
            if self.msg is None:
                raise Fail("the server sent a continuation frame outside a message")
            if rsv:
                raise Fail("the server set RSV bits %d on a continuation frame" % rsv)
        else:
            if self.msg is not None:
                raise Fail("the server started a message inside another")
            if rsv & 3 or (rsv & 4 and self.deflate is None):
                raise Fail("the server set RSV bits %s without an extension for them"
                           % format(rsv, "03b"))
            self.msg = (op, bool(rsv & 4), [])
        self.msg[2].append(payload)
        if not fin:
            return self.next()
        op, compressed, parts = self.msg
        self.msg = None
        data = b"".join(parts)
        if compressed:
            data = self.deflate.decompress(data)
        return ("text" if op == TEXT else "binary", data)


CONT, TEXT, BINARY, CLOSE, PING, PONG = 0, 1, 2, 8, 9, 10


def describe(ev):
    if ev is None:
        return "nothing"
    if ev[0] == "eof":
        return "the connection closed (%s)" % ev[1]
    if ev[0] == "close":
        return "close %s %s" % (ev[1], short(ev[2]))
    return "%s %s" % (ev[0], short(ev[1]))


class Session:
    def __init__(self, t, reader, timeout):
        self.t, self.reader, self.timeout = t, reader, timeout
        self.seen = []

    def next_event(self, timeout=None):
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            ev = self.reader.next()
            if ev is not None:
                self.seen.append(ev)
                return ev
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            try:
                data = self.t.recv(min(left, 0.5))
            except Closed as e:
                if self.reader.buf:
                    raise Fail("the connection closed (%s) inside a frame (%d bytes left)"
                               % (e, len(self.reader.buf)))
                return ("eof", str(e))
            self.reader.feed(data)


def build(item, ctx):
    if isinstance(item, C.Deflate):
        if ctx is None:
            raise Fail("permessage-deflate was not negotiated")
        return item.build(ctx)
    return item


def run_case(case, opts):
    timeout = (case.timeout or 5) * opts.timeout_scale
    sent = []
    t = None
    try:
        t = (H1 if opts.proto == "h1" else H2)(opts, case, timeout)
        params = check_negotiation(case, t.headers)
        ctx = DeflateCtx(params) if params is not None else None
        if ctx is not None:
            ctx.c_bits = max(9, ctx.c_bits)
        reader = Reader(ctx)
        s = Session(t, reader, timeout)
        for item in case.send:
            if isinstance(item, C.Pause):
                time.sleep(item.seconds)
            elif isinstance(item, C.Chop):
                data = build(item.data, ctx)
                sent.append(data)
                for i in range(0, len(data), item.n):
                    t.send(data[i:i + item.n])
                    if item.n < 16:
                        time.sleep(0.0005)
            else:
                data = build(item, ctx)
                sent.append(data)
                t.send(data)
        for kind, payload in case.expect:
            ev = s.next_event()
            if ev is None:
                raise Fail("timeout: expected %s, got nothing more after %d frame(s)"
                           % (describe((kind, payload)), len(s.seen)))
            if ev[0] != kind or ev[1] != payload:
                raise Fail("expected %s, got %s" % (describe((kind, payload)), describe(ev)))
        if case.end == "clean":
            t.send(C.close(1000))
            codes, ours = (1000,), True
        else:
            codes, ours = case.end, not case.error
        ev = s.next_event()
        lenient = opts.lenient_errors and case.error
        if ev is None:
            raise Fail("timeout: expected close %s, got nothing in %.1f s"
                       % ("/".join(map(str, codes)), timeout))
        if ev[0] == "eof" and lenient:
            return True, "closed without a close frame (lenient)"
        if ev[0] != "close" or (ev[1] not in codes and not lenient):
            raise Fail("expected close %s, got %s" % ("/".join(map(str, codes)), describe(ev)))
        if ev[2]:
            try:
                ev[2].decode("utf-8")
            except UnicodeDecodeError:
                raise Fail("the server's close reason is not UTF-8: %r" % ev[2])
        if not ours:
            code = ev[1] if ev[1] is not None else 1000
            t.send(C.close(code))
        if opts.no_end_check:
            ev2 = s.next_event(timeout=0.3)
            if ev2 is not None and ev2[0] != "eof":
                raise Fail("after the close frame, got %s" % describe(ev2))
            return True, "close %s" % ev[1]
        ev2 = s.next_event(timeout=3 * opts.timeout_scale)
        if ev2 is None:
            raise Fail("the server did not close the connection within 3 s after its close "
                       "frame (RFC6455 7.1.1)")
        if ev2[0] != "eof":
            raise Fail("after the close frame, expected the connection to close, got %s"
                       % describe(ev2))
        return True, "close %s" % ev[1]
    except Fail as e:
        return False, "%s; sent: %s" % (e, sent_summary(sent))
    except Exception as e:
        return False, "runner error %s: %s; sent: %s" % (
            type(e).__name__, traceback.format_exc().strip().splitlines()[-1],
            sent_summary(sent))
    finally:
        if t is not None:
            t.close()


def sent_summary(sent):
    data = b"".join(sent)
    if len(data) <= 64:
        return data.hex() or "(nothing)"
    return "%s... (%d bytes)" % (data[:64].hex(), len(data))


def select_cases(opts):
    def match(c, specs):
        return any(c.id == s or (s.endswith(".") and c.id.startswith(s)) for s in specs)
    out = []
    for c in C.CASES:
        if opts.only and not match(c, opts.only):
            continue
        if opts.skip and match(c, opts.skip):
            continue
        if c.h1_only and opts.proto != "h1":
            continue
        out.append(c)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int)
    ap.add_argument("--proto", choices=["h1", "h2"], default="h1")
    ap.add_argument("--tls", action="store_true")
    ap.add_argument("--lenient-errors", action="store_true")
    ap.add_argument("--no-end-check", action="store_true")
    ap.add_argument("--only", type=lambda s: [x for x in s.split(",") if x])
    ap.add_argument("--skip", type=lambda s: [x for x in s.split(",") if x])
    ap.add_argument("-j", "--jobs", type=int, default=8)
    ap.add_argument("--timeout-scale", type=float, default=1.0)
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--json")
    ap.add_argument("--list", action="store_true")
    opts = ap.parse_args()
    selected = select_cases(opts)
    if opts.list:
        for c in selected:
            print("%-10s %-20s %s" % (c.id, c.section, c.desc))
        return 0
    results = {}
    started = time.monotonic()
    # Big cases first, so that they overlap with the small ones.
    order = sorted(selected, key=lambda c: -(c.timeout or 0))
    with ThreadPoolExecutor(max_workers=opts.jobs) as pool:
        def timed(c):
            t0 = time.monotonic()
            ok, detail = run_case(c, opts)
            return ok, detail, time.monotonic() - t0
        futures = {c.id: pool.submit(timed, c) for c in order}
        for c in selected:
            ok, detail, secs = futures[c.id].result()
            results[c.id] = (ok, detail, secs)
            if not ok:
                print("FAIL %s: %s [%s]" % (c.id, detail, c.desc), flush=True)
            elif not opts.quiet:
                print("PASS %s: %s" % (c.id, detail), flush=True)
    failed = [c.id for c in selected if not results[c.id][0]]
    by_section = {}
    for c in selected:
        s = by_section.setdefault(c.section, [0, 0])
        s[0 if results[c.id][0] else 1] += 1
    summary = {"proto": opts.proto, "tls": opts.tls, "total": len(selected),
               "passed": len(selected) - len(failed), "failed": len(failed),
               "failed_ids": failed, "seconds": round(time.monotonic() - started, 1),
               "by_section": {k: {"passed": v[0], "failed": v[1]} for k, v in by_section.items()}}
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump({"summary": summary, "results": {k: {"ok": v[0], "detail": v[1],
                                                           "seconds": round(v[2], 3)}
                                                       for k, v in results.items()}}, f, indent=1)
    print("SUMMARY " + json.dumps(summary), flush=True)
    return 0 if not failed else 1


if __name__ == "__main__":
    sys.exit(main())
