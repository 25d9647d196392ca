"""The Websocket conformance cases: a table of raw client bytes and the exact
outcome each must have. Written for Mustang from RFC 6455, RFC 7692 and the
Unicode standard; the ground covered follows the sections of
Autobahn|Testsuite (which cannot run here), the cases are our own.

A case is a Case(...) below:
  id       "<section>.<n>..." (section numbers are ours, see SECTIONS)
  desc     the rule, in one sentence, ending with the RFC section
  path     /ws (1 MiB limit), /ws/small (64 KiB), /ws/big (32 MiB), /ws/deflate
           (permessage-deflate enabled, 1 MiB)
  send     what the client writes after the handshake, in order: bytes
           (one write, or one HTTP/2 DATA frame), Chop(bytes, n) (writes of n
           bytes), Pause(seconds), or a Deflate/DeflateFrames item that
           compresses with the negotiated parameters at run time
  expect   the server frames that must come back, in order: ("text", bytes),
           ("binary", bytes), ("pong", bytes)
  end      "clean": the runner then sends close 1000 and the server must
           answer close 1000 and close the connection;
           or a tuple of close codes: the next frame must be a close with one
           of them, and the server must then close the connection
  error    True when the close is the server failing the connection
           (protocol error); the runner's --lenient-errors mode (hypercorn)
           then also accepts any close code, or a close without a close frame
  offer    the Sec-WebSocket-Extensions offer, or None
  neg      what the response to the offer must be: None (no extension),
           or Accept(i): the i-th offer of the list must be accepted, within
           the rules of RFC 7692 7.1 (checked by run.py)
  h1_only  cases that only make sense in an HTTP/1.1 upgrade
"""
import functools
import os
import random
import struct
import zlib

# Opcodes.
CONT, TEXT, BINARY, CLOSE, PING, PONG = 0, 1, 2, 8, 9, 10

SECTIONS = {
    "1": "framing",
    "2": "pingpong",
    "3": "rsv",
    "4": "opcodes",
    "5": "fragmentation",
    "6": "utf8",
    "7": "close",
    "8": "limits",
    "9": "deflate-negotiation",
    "10": "deflate",
    "11": "handshake",
}


def xor_mask(data, key):
    """RFC 6455 5.3 masking (its own inverse), fast for large payloads."""
    n = len(data)
    if n == 0:
        return b""
    k = (key * (n // 4 + 1))[:n]
    return (int.from_bytes(data, "little") ^ int.from_bytes(k, "little")).to_bytes(n, "little")


def frame(op, payload=b"", fin=True, rsv=0, mask=True, key=None, length=None, lenform=None):
    """A client frame. length overrides the announced length, lenform forces
    the length encoding (0: 7 bits, 1: 16 bits, 2: 64 bits)."""
    b0 = (0x80 if fin else 0) | (rsv << 4) | op
    n = len(payload) if length is None else length
    if lenform is None:
        lenform = 0 if n < 126 else (1 if n < 65536 else 2)
    m = 0x80 if mask else 0
    if lenform == 0:
        head = bytes([b0, m | n])
    elif lenform == 1:
        head = bytes([b0, m | 126]) + struct.pack(">H", n)
    else:
        head = bytes([b0, m | 127]) + struct.pack(">Q", n)
    if not mask:
        return head + payload
    if key is None:
        key = os.urandom(4)
    return head + key + xor_mask(payload, key)


def text(p, **kw):
    return frame(TEXT, p.encode() if isinstance(p, str) else p, **kw)


def binary(p, **kw):
    return frame(BINARY, p, **kw)


def ping(p=b"", **kw):
    return frame(PING, p, **kw)


def pong(p=b"", **kw):
    return frame(PONG, p, **kw)


def close(code=None, reason=b"", **kw):
    payload = b"" if code is None else struct.pack(">H", code) + reason
    return frame(CLOSE, payload, **kw)


def cont(p, fin=True, **kw):
    return frame(CONT, p, fin=fin, **kw)


def fragments(op, payload, sizes):
    """The frames of one message cut into pieces of the given sizes (the last
    piece takes the rest)."""
    out, pos = [], 0
    cuts = list(sizes)
    pieces = []
    for s in cuts:
        pieces.append(payload[pos:pos + s])
        pos += s
    pieces.append(payload[pos:])
    for i, piece in enumerate(pieces):
        out.append(frame(op if i == 0 else CONT, piece, fin=(i == len(pieces) - 1)))
    return b"".join(out)


class Chop:
    """Write data in pieces of n bytes, each its own write (HTTP/2: DATA frame)."""
    def __init__(self, data, n, pause=0.0):
        self.data, self.n, self.pause = data, n, pause


class Pause:
    def __init__(self, seconds):
        self.seconds = seconds


class Deflate:
    """A compressed message, made at run time with the client's negotiated
    deflate context. pieces: the compressed payload is cut into that many
    frames (RSV1 on the first only, unless rsv_all); bfinal: the message
    ends with a final block instead of a sync flush (RFC 7692 7.2.3.3);
    raw: use these bytes as the compressed payload."""
    def __init__(self, op, payload, pieces=1, bfinal=False, raw=None, rsv_all=False,
                 between=None, rsv=None):
        self.op, self.payload, self.pieces, self.bfinal = op, payload, pieces, bfinal
        self.raw, self.rsv_all, self.between, self.rsv = raw, rsv_all, between, rsv

    def build(self, ctx):
        data = self.raw if self.raw is not None else ctx.compress(self.payload, self.bfinal)
        n = self.pieces
        size = max(1, -(-len(data) // n)) if data else 0
        parts = [data[i * size:(i + 1) * size] for i in range(n)] if data else [b""] * n
        out = []
        for i, part in enumerate(parts):
            if i == 0:
                rsv = 4 if self.rsv is None else self.rsv
                out.append(frame(self.op, part, fin=(n == 1), rsv=rsv))
            else:
                out.append(frame(CONT, part, fin=(i == n - 1), rsv=4 if self.rsv_all else 0))
            if self.between is not None and i < n - 1:
                out.append(self.between)
        return b"".join(out)


class Accept:
    def __init__(self, index=0):
        self.index = index


class Case:
    def __init__(self, id, desc, send, expect=(), end="clean", error=None, path="/ws",
                 offer=None, neg=None, h1_only=False, timeout=None, extra_headers=()):
        self.id, self.desc, self.send, self.expect = id, desc, list(send), list(expect)
        self.end, self.path, self.offer, self.neg = end, path, offer, neg
        if error is None:
            error = end != "clean" and all(c in (1002, 1007, 1009) for c in end)
        self.error = error
        self.h1_only, self.timeout, self.extra_headers = h1_only, timeout, list(extra_headers)
        if offer is not None and neg is None:
            self.neg = Accept(0) if path == "/ws/deflate" else None

    @property
    def section(self):
        return SECTIONS[self.id.split(".")[0]]


CASES = []


def add(*args, **kw):
    c = Case(*args, **kw)
    assert all(c.id != o.id for o in CASES), c.id
    CASES.append(c)
    return c


P1002 = (1002,)
P1007 = (1007,)
P1009 = (1009,)


@functools.lru_cache(maxsize=None)
def pattern(n, seed=0):
    """n bytes of printable ASCII, not too repetitive."""
    base = bytes((33 + (i * 7 + seed + (i >> 5)) % 94) for i in range(4096))
    return (base * (n // 4096 + 1))[:n]


@functools.lru_cache(maxsize=None)
def rand(n, seed=1):
    """n pseudo-random bytes, the same on every run (incompressible)."""
    return random.Random(seed * 1000003 + n).randbytes(n)


# 1. Framing: echo at every length encoding boundary, writes of any size.

SIZES = [0, 1, 125, 126, 127, 128, 65535, 65536, 65537]
for i, n in enumerate(SIZES, 1):
    add("1.1.%d" % i, "A text message of %d bytes is echoed. (RFC6455 5.2, 5.6)" % n,
        [text(pattern(n))], [("text", pattern(n))])
    add("1.2.%d" % i, "A binary message of %d bytes is echoed. (RFC6455 5.2, 5.6)" % n,
        [binary(rand(n))], [("binary", rand(n))])
add("1.1.10", "A text message of 65536 bytes written 997 bytes at a time is echoed. (RFC6455 5.2)",
    [Chop(text(pattern(65536)), 997)], [("text", pattern(65536))])
add("1.2.10", "A binary message of 65536 bytes written 997 bytes at a time is echoed. (RFC6455 5.2)",
    [Chop(binary(rand(65536)), 997)], [("binary", rand(65536))])
add("1.1.11", "A text message of 16 MiB is echoed (max_frame_size 32 MiB). (RFC6455 5.2)",
    [text(pattern(16 << 20))], [("text", pattern(16 << 20))], path="/ws/big", timeout=60)
add("1.2.11", "A binary message of 16 MiB is echoed (max_frame_size 32 MiB). (RFC6455 5.2)",
    [binary(rand(16 << 20))], [("binary", rand(16 << 20))], path="/ws/big", timeout=60)
add("1.3.1", "A 130-byte text frame written one byte at a time: the header split at every "
    "position is parsed. (RFC6455 5.2)", [Chop(text(pattern(130)), 1)], [("text", pattern(130))])
F70K = binary(rand(70000))
add("1.3.2", "A 70000-byte binary frame whose 14-byte header is written one byte at a time. "
    "(RFC6455 5.2)", [Chop(F70K[:14], 1), F70K[14:]], [("binary", rand(70000))])
add("1.3.3", "Three messages in a single write are echoed in order. (RFC6455 5.6)",
    [text(b"one") + binary(b"two") + text(b"three")],
    [("text", b"one"), ("binary", b"two"), ("text", b"three")])
add("1.3.4", "100 small messages in one write are echoed in order. (RFC6455 5.6)",
    [b"".join(text(b"m%d" % i) for i in range(100))], [("text", b"m%d" % i) for i in range(100)])
add("1.3.5", "A frame masked with the key 00000000 is echoed. (RFC6455 5.3)",
    [text(b"zero key", key=b"\0\0\0\0")], [("text", b"zero key")])
add("1.3.6", "Binary payloads need not be UTF-8. (RFC6455 5.6)",
    [binary(b"\xff\xfe\xc0\xaf\xed\xa0\x80")], [("binary", b"\xff\xfe\xc0\xaf\xed\xa0\x80")])
add("1.4.1", "A text frame that is not masked fails the connection. (RFC6455 5.1)",
    [text(b"unmasked", mask=False)], end=P1002)
add("1.4.2", "A binary frame that is not masked fails the connection. (RFC6455 5.1)",
    [binary(b"unmasked", mask=False)], end=P1002)
add("1.4.3", "A ping that is not masked fails the connection. (RFC6455 5.1)",
    [ping(b"unmasked", mask=False)], end=P1002)
add("1.4.4", "A close that is not masked fails the connection. (RFC6455 5.1)",
    [close(1000, mask=False)], end=P1002)
add("1.4.5", "An echoed message, then an unmasked frame: echo, then close 1002. (RFC6455 5.1)",
    [text(b"first"), text(b"second", mask=False)], [("text", b"first")], end=P1002)
add("1.4.6", "An unmasked continuation frame fails the connection. (RFC6455 5.1)",
    [text(b"a", fin=False), cont(b"b", mask=False)], end=P1002)
add("1.5.1", "A 5-byte payload length in the 16-bit form fails the connection (minimal "
    "encoding). (RFC6455 5.2)", [text(b"hello", lenform=1)], end=P1002)
add("1.5.2", "A 125-byte payload length in the 16-bit form fails the connection. (RFC6455 5.2)",
    [text(pattern(125), lenform=1)], end=P1002)
add("1.5.3", "A 200-byte payload length in the 64-bit form fails the connection. (RFC6455 5.2)",
    [binary(rand(200), lenform=2)], end=P1002)
add("1.5.4", "A 65535-byte payload length in the 64-bit form fails the connection. (RFC6455 5.2)",
    [binary(rand(65535), lenform=2)], end=P1002)
add("1.5.5", "A 0-byte payload length in the 64-bit form fails the connection. (RFC6455 5.2)",
    [binary(b"", lenform=2)], end=P1002)
add("1.5.6", "A 64-bit length with the most significant bit set fails the connection. "
    "(RFC6455 5.2)", [frame(BINARY, b"", length=2**63 + 5, lenform=2)], end=P1002)
add("1.5.7", "A ping with a 16-bit length (payload 126, too long for a control frame) fails "
    "the connection. (RFC6455 5.5)", [ping(pattern(126))], end=P1002)

# 2. Ping and pong.

add("2.1", "A ping without payload is answered by a pong without payload. (RFC6455 5.5.2)",
    [ping()], [("pong", b"")])
add("2.2", "A ping with a text payload gets a pong with the same payload. (RFC6455 5.5.3)",
    [ping(b"Hello, world!")], [("pong", b"Hello, world!")])
add("2.3", "A ping with a binary payload gets a pong with the same payload. (RFC6455 5.5.3)",
    [ping(b"\x00\xff\xfe\xfd\xfc\xfb\x00\xff")], [("pong", b"\x00\xff\xfe\xfd\xfc\xfb\x00\xff")])
add("2.4", "A ping with a 125-byte payload gets a pong with the same payload. (RFC6455 5.5)",
    [ping(rand(125))], [("pong", rand(125))])
add("2.5", "A ping with a 126-byte payload fails the connection. (RFC6455 5.5)",
    [ping(rand(126))], end=P1002)
add("2.6", "A 125-byte ping written one byte at a time gets its pong. (RFC6455 5.5.2)",
    [Chop(ping(rand(125)), 1)], [("pong", rand(125))])
add("2.7", "An unsolicited pong without payload is ignored. (RFC6455 5.5.3)",
    [pong(), text(b"after")], [("text", b"after")])
add("2.8", "An unsolicited pong with payload is ignored. (RFC6455 5.5.3)",
    [pong(b"unsolicited"), ping(b"then")], [("pong", b"then")])
add("2.9", "An unsolicited pong, then a ping: only the ping is answered. (RFC6455 5.5.3)",
    [pong(b"p1"), ping(b"p2")], [("pong", b"p2")])
add("2.10", "10 pings in one write get 10 pongs, in order. (RFC6455 5.5.2)",
    [b"".join(ping(b"ping-%d" % i) for i in range(10))],
    [("pong", b"ping-%d" % i) for i in range(10)])
add("2.11", "10 pings written one byte at a time get 10 pongs, in order. (RFC6455 5.5.2)",
    [Chop(b"".join(ping(b"ping-%d" % i) for i in range(10)), 1)],
    [("pong", b"ping-%d" % i) for i in range(10)])
add("2.12", "A fragmented ping (FIN clear) fails the connection. (RFC6455 5.5)",
    [ping(b"frag", fin=False), cont(b"ment")], end=P1002)
add("2.13", "A pong with a 126-byte payload fails the connection. (RFC6455 5.5)",
    [pong(rand(126))], end=P1002)
add("2.14", "A fragmented pong fails the connection. (RFC6455 5.5)",
    [pong(b"frag", fin=False), cont(b"ment")], end=P1002)
add("2.15", "A ping, a message and a ping: answers in order. (RFC6455 5.5.2)",
    [ping(b"a"), text(b"msg"), ping(b"b")], [("pong", b"a"), ("text", b"msg"), ("pong", b"b")])

# 3. Reserved bits: no extension defines them without negotiation.

n = 0
for rsv in range(1, 8):
    for kind, build in [
        ("text frame", lambda r: [text(b"Hello", rsv=r)]),
        ("binary frame", lambda r: [binary(b"\x00\xff", rsv=r)]),
        ("ping", lambda r: [ping(b"Hello", rsv=r)]),
        ("close frame", lambda r: [close(1000, rsv=r)]),
        ("continuation frame", lambda r: [text(b"frag", fin=False), cont(b"ment", rsv=r)]),
    ]:
        n += 1
        add("3.%d" % n, "RSV bits %s on a %s, no extension negotiated: the connection fails. "
            "(RFC6455 5.2)" % (format(rsv, "03b"), kind), build(rsv), end=P1002)
add("3.%d" % (n + 1), "A message is echoed, then a frame with RSV2 fails the connection: the "
    "echo comes first. (RFC6455 5.2)", [text(b"ok"), text(b"bad", rsv=2), ping(b"never")],
    [("text", b"ok")], end=P1002)
add("3.%d" % (n + 2), "RSV1 on a text frame written one byte at a time. (RFC6455 5.2)",
    [Chop(text(b"Hello", rsv=4), 1)], end=P1002)

# 4. Opcodes.

for i, op in enumerate([3, 4, 5, 6, 7, 11, 12, 13, 14, 15], 1):
    add("4.1.%d" % i, "Reserved opcode %d, no payload: the connection fails. (RFC6455 5.2)" % op,
        [frame(op, b"")], end=P1002)
    add("4.2.%d" % i, "A message, then reserved opcode %d with a payload, then a ping: echo, "
        "then close 1002. (RFC6455 5.2)" % op,
        [text(b"before"), frame(op, b"reserved"), ping(b"after")], [("text", b"before")],
        end=P1002)

# 5. Fragmentation.

add("5.1", "A text message in 2 fragments is echoed whole. (RFC6455 5.4)",
    [text(b"frag", fin=False), cont(b"ment")], [("text", b"fragment")])
add("5.2", "A binary message in 2 fragments is echoed whole. (RFC6455 5.4)",
    [binary(b"\x01\x02", fin=False), cont(b"\x03\x04")], [("binary", b"\x01\x02\x03\x04")])
add("5.3", "A text message in 5 fragments is echoed whole. (RFC6455 5.4)",
    [fragments(TEXT, b"abcdefghijklmnopqrstuvwxy", [5, 5, 5, 5])],
    [("text", b"abcdefghijklmnopqrstuvwxy")])
add("5.4", "A text message in 1000 one-byte fragments is echoed whole. (RFC6455 5.4)",
    [fragments(TEXT, pattern(1000), [1] * 999)], [("text", pattern(1000))])
add("5.5", "A message in fragments with empty payloads (first, middle, last) is echoed. "
    "(RFC6455 5.4)", [text(b"", fin=False), cont(b"ab", fin=False), cont(b"", fin=False),
                      cont(b"cd", fin=False), cont(b"")], [("text", b"abcd")])
add("5.6", "A message of only empty fragments is an empty message. (RFC6455 5.4)",
    [binary(b"", fin=False), cont(b"", fin=False), cont(b"")], [("binary", b"")])
add("5.7", "Fragments written as separate writes with pauses are echoed whole. (RFC6455 5.4)",
    [text(b"one-", fin=False), Pause(0.05), cont(b"two-", fin=False), Pause(0.05),
     cont(b"three")], [("text", b"one-two-three")])
add("5.8", "A ping between two fragments is answered at once; the message is echoed after. "
    "(RFC6455 5.4, 5.5)", [text(b"frag", fin=False), ping(b"between"), cont(b"ment")],
    [("pong", b"between"), ("text", b"fragment")])
add("5.9", "A pong between two fragments is ignored. (RFC6455 5.4)",
    [text(b"frag", fin=False), pong(b"between"), cont(b"ment")], [("text", b"fragment")])
add("5.10", "Pings between each of 10 fragments, written one byte at a time. (RFC6455 5.4)",
    [Chop(b"".join(
        [text(b"f0", fin=False)] + [ping(b"p%d" % i) + cont(b"f%d" % i, fin=(i == 9))
                                     for i in range(1, 10)]), 1)],
    [("pong", b"p%d" % i) for i in range(1, 10)] + [("text", b"".join(b"f%d" % i
                                                                    for i in range(10)))])
add("5.11", "Pings between fragments with pauses. (RFC6455 5.4)",
    [text(b"a", fin=False), Pause(0.05), ping(b"1"), Pause(0.05), cont(b"b", fin=False),
     ping(b"2"), Pause(0.05), cont(b"c")], [("pong", b"1"), ("pong", b"2"), ("text", b"abc")])
add("5.12", "A continuation frame with FIN and no message started fails the connection. "
    "(RFC6455 5.4)", [cont(b"orphan")], end=P1002)
add("5.13", "A continuation frame without FIN and no message started fails the connection. "
    "(RFC6455 5.4)", [cont(b"orphan", fin=False)], end=P1002)
add("5.14", "A continuation after a complete message fails the connection (after the echo). "
    "(RFC6455 5.4)", [text(b"done"), cont(b"late")], [("text", b"done")], end=P1002)
add("5.15", "A text frame inside a fragmented text message fails the connection. "
    "(RFC6455 5.4)", [text(b"frag", fin=False), text(b"new")], end=P1002)
add("5.16", "A binary frame (FIN clear) inside a fragmented text message fails the "
    "connection. (RFC6455 5.4)", [text(b"frag", fin=False), binary(b"new", fin=False)],
    end=P1002)
add("5.17", "A close frame with FIN clear fails the connection. (RFC6455 5.5)",
    [close(1000, fin=False)], end=P1002)
add("5.18", "A fragmented ping between data fragments fails the connection. (RFC6455 5.5)",
    [text(b"a", fin=False), ping(b"x", fin=False), cont(b"b")], end=P1002)
add("5.19", "Continuation frames without FIN, a pause, then the final continuation written "
    "alone: one message. (RFC6455 5.4)",
    [binary(b"1", fin=False), cont(b"2", fin=False), Pause(0.1), cont(b"3")],
    [("binary", b"123")])
add("5.20", "Two fragmented messages one after the other are echoed separately. (RFC6455 5.4)",
    [text(b"a", fin=False), cont(b"b"), binary(b"c", fin=False), cont(b"d")],
    [("text", b"ab"), ("binary", b"cd")])

# 6. UTF-8 (RFC 3629; Markus Kuhn's classes of test text: boundaries,
# malformed sequences, overlong forms, surrogates).

VALID = [
    ("Latin-1 and ASCII mix", "Hello-\u00b5@\u00df\u00f6\u00e4\u00fc\u00e0\u00e1-UTF-8!!".encode()),
    ("Greek word kosme", "\u03ba\u1f79\u03c3\u03bc\u03b5".encode()),
    ("first 1-byte code point U+0000", b"\x00"),
    ("first 2-byte code point U+0080", b"\xc2\x80"),
    ("first 3-byte code point U+0800", b"\xe0\xa0\x80"),
    ("first 4-byte code point U+10000", b"\xf0\x90\x80\x80"),
    ("last 1-byte code point U+007F", b"\x7f"),
    ("last 2-byte code point U+07FF", b"\xdf\xbf"),
    ("last 3-byte code point U+FFFF", b"\xef\xbf\xbf"),
    ("last code point U+10FFFF", b"\xf4\x8f\xbf\xbf"),
    ("U+D7FF, below the surrogates", b"\xed\x9f\xbf"),
    ("U+E000, above the surrogates", b"\xee\x80\x80"),
    ("U+FFFD replacement character", b"\xef\xbf\xbd"),
    ("noncharacters U+FFFE U+FDD0 U+1FFFE", b"\xef\xbf\xbe\xef\xb7\x90\xf0\x9f\xbf\xbe"),
    ("CJK, kana and an emoji", "\u65e5\u672c\u8a9e\u30c6\u30ad\u30b9\u30c8 \U0001f389".encode()),
    ("every 2-byte lead byte", b"".join(bytes([b, 0x80]) for b in range(0xc2, 0xe0))),
    ("3-byte forms around E0, ED, EF", b"\xe0\xbf\xbf\xe1\x80\x80\xec\xbf\xbf\xed\x80\x80\xef\x80\x80"),
    ("4-byte forms around F0, F4", b"\xf0\xbf\xbf\xbf\xf1\x80\x80\x80\xf3\xbf\xbf\xbf\xf4\x80\x80\x80"),
    ("ASCII control characters", bytes(range(0, 32)) + b"\x7f"),
    ("a long mixed text (3000 bytes)", ("a\u00e9\u20ac\U0001f600" * 300).encode()),
]
INVALID = [
    ("lone continuation byte 0x80", b"\x80"),
    ("lone continuation byte 0xBF", b"\xbf"),
    ("two continuation bytes", b"\x80\xbf"),
    ("seven continuation bytes", b"\x80\xbf\x80\xbf\x80\xbf\x80"),
    ("all 64 continuation bytes", bytes(range(0x80, 0xc0))),
    ("2-byte lead then space", b"\xc2\x20"),
    ("3-byte lead then space", b"\xe1\x20"),
    ("4-byte lead then space", b"\xf1\x20"),
    ("5-byte lead F8 then space", b"\xf8\x20"),
    ("6-byte lead FC then space", b"\xfc\x20"),
    ("2-byte sequence missing its last byte (end of message)", b"\xdf"),
    ("3-byte sequence missing its last byte", b"\xef\xbf"),
    ("4-byte sequence missing its last byte", b"\xf4\x8f\xbf"),
    ("3-byte sequence missing 2 bytes", b"\xe0"),
    ("concatenated truncated sequences", b"\xc2\xe0\xa0\xf0\x90\x80\xdf\xef\xbf"),
    ("impossible byte FE", b"\xfe"),
    ("impossible byte FF", b"\xff"),
    ("impossible bytes FE FE FF FF", b"\xfe\xfe\xff\xff"),
    ("overlong '/' in 2 bytes", b"\xc0\xaf"),
    ("overlong '/' in 3 bytes", b"\xe0\x80\xaf"),
    ("overlong '/' in 4 bytes", b"\xf0\x80\x80\xaf"),
    ("overlong '/' in 5 bytes", b"\xf8\x80\x80\x80\xaf"),
    ("overlong '/' in 6 bytes", b"\xfc\x80\x80\x80\x80\xaf"),
    ("largest overlong 2-byte form C1 BF", b"\xc1\xbf"),
    ("largest overlong 3-byte form E0 9F BF", b"\xe0\x9f\xbf"),
    ("largest overlong 4-byte form F0 8F BF BF", b"\xf0\x8f\xbf\xbf"),
    ("overlong NUL C0 80", b"\xc0\x80"),
    ("overlong NUL E0 80 80", b"\xe0\x80\x80"),
    ("high surrogate U+D800", b"\xed\xa0\x80"),
    ("high surrogate U+DB7F", b"\xed\xad\xbf"),
    ("high surrogate U+DB80", b"\xed\xae\x80"),
    ("high surrogate U+DBFF", b"\xed\xaf\xbf"),
    ("low surrogate U+DC00", b"\xed\xb0\x80"),
    ("low surrogate U+DF80", b"\xed\xbe\x80"),
    ("low surrogate U+DFFF", b"\xed\xbf\xbf"),
    ("surrogate pair U+D800 U+DC00", b"\xed\xa0\x80\xed\xb0\x80"),
    ("surrogate pair U+DBFF U+DFFF", b"\xed\xaf\xbf\xed\xbf\xbf"),
    ("U+110000, above the last code point", b"\xf4\x90\x80\x80"),
    ("F5 lead byte", b"\xf5\x80\x80\x80"),
    ("F7 BF BF BF", b"\xf7\xbf\xbf\xbf"),
    ("valid text, a surrogate, valid text", "\u03ba\u1f79\u03c3\u03bc\u03b5".encode()
     + b"\xed\xa0\x80" + b"edited"),
    ("invalid byte after 1000 bytes of ASCII", pattern(1000) + b"\xff"),
]
for i, (what, data) in enumerate(VALID, 1):
    add("6.1.%d" % i, "Valid UTF-8 (%s) in a text message is echoed. (RFC6455 8.1)" % what,
        [text(data)], [("text", data)])
for i, (what, data) in enumerate(INVALID, 1):
    add("6.2.%d" % i, "Invalid UTF-8 (%s) in a text message fails the connection with 1007. "
        "(RFC6455 8.1)" % what, [text(data)], end=P1007)
# Valid text split at every byte position across two fragments.
SPLIT_VALID = [VALID[0][1], VALID[1][1], VALID[5][1], VALID[9][1], VALID[14][1]]
n = 0
for data in SPLIT_VALID:
    for pos in range(1, len(data)):
        n += 1
        add("6.3.%d" % n, "Valid UTF-8 %s split after byte %d across two fragments is echoed "
            "(a code point may straddle fragments). (RFC6455 5.6)" % (data.hex(), pos),
            [text(data[:pos], fin=False), cont(data[pos:])], [("text", data)])
add("6.3.%d" % (n + 1), "Valid UTF-8, one fragment per byte. (RFC6455 5.6)",
    [fragments(TEXT, VALID[1][1], [1] * (len(VALID[1][1]) - 1))], [("text", VALID[1][1])])
add("6.3.%d" % (n + 2), "Valid 4-byte code points, one fragment per byte, written one byte at a "
    "time. (RFC6455 5.6)", [Chop(fragments(TEXT, b"\xf0\x9f\x8e\x89" * 3, [1] * 11), 1)],
    [("text", b"\xf0\x9f\x8e\x89" * 3)])
# Invalid text split at every position: the message must fail whatever the split.
BAD = VALID[1][1] + b"\xed\xa0\x80" + b"edited"
for pos in range(1, len(BAD)):
    add("6.4.%d" % pos, "Invalid UTF-8 %s split after byte %d across two fragments fails with "
        "1007. (RFC6455 8.1)" % (BAD.hex(), pos), [text(BAD[:pos], fin=False), cont(BAD[pos:])],
        end=P1007)
# Fail fast: the invalid bytes are in a fragment of a message never finished.
FAST = [
    ("U+110000", b"\xf4\x90\x80\x80"),
    ("byte FF", b"kosme\xff"),
    ("overlong C0 AF", b"\xc0\xaf"),
    ("surrogate ED A0 80", b"\xed\xa0\x80"),
    ("lead F0 90 then a space in the next fragment", None),
    ("E0 then an overlong continuation 80 in the next fragment", None),
    ("ED then A0 (a surrogate) in the next fragment", None),
]
for i, (what, data) in enumerate(FAST, 1):
    if data is not None:
        send = [text(data, fin=False), Pause(0.1), ping(b"still-open?")]
    else:
        a, b = {5: (b"\xf0\x90", b" "), 6: (b"\xe0", b"\x80"), 7: (b"\xed", b"\xa0")}[i]
        send = [text(b"ok" + a, fin=False), cont(b, fin=False), Pause(0.1), ping(b"still-open?")]
    add("6.5.%d" % i, "Invalid UTF-8 (%s) in the first fragments of a text message never "
        "finished: 1007 at once, before the message ends (incremental check). (RFC6455 8.1)"
        % what, send, end=P1007, timeout=3)
add("6.5.8", "Invalid UTF-8 in a text frame written one byte at a time. (RFC6455 8.1)",
    [Chop(text(b"abc\xed\xa0\x80def"), 1)], end=P1007)
add("6.5.9", "Invalid UTF-8 in a continuation of a binary message is fine (binary is not "
    "text). (RFC6455 5.6)", [binary(b"\xc0", fin=False), cont(b"\xaf")],
    [("binary", b"\xc0\xaf")])
add("6.5.10", "A text message that ends inside a code point (the last fragment is cut) fails "
    "with 1007. (RFC6455 8.1)", [text(b"abc\xe2\x82", fin=False), cont(b"")], end=P1007)

# 7. Close.

add("7.1.1", "A close with no payload is answered with close 1000, then the server closes the "
    "TCP connection. (RFC6455 5.5.1, 7.1.5)", [close()], end=(1000,))
add("7.1.2", "A close 1000 with no reason is echoed. (RFC6455 5.5.1)", [close(1000)], end=(1000,))
add("7.1.3", "A close 1000 with a reason is echoed. (RFC6455 5.5.1)",
    [close(1000, b"Going away now")], end=(1000,))
add("7.1.4", "A close with a 123-byte reason (125-byte payload) is echoed. (RFC6455 5.5)",
    [close(1000, pattern(123))], end=(1000,))
add("7.1.5", "A close with a 124-byte reason (126-byte payload) fails the connection. "
    "(RFC6455 5.5)", [close(1000, pattern(124))], end=P1002)
add("7.1.6", "A close with a 1-byte payload fails the connection. (RFC6455 5.5.1)",
    [frame(CLOSE, b"\x03")], end=P1002)
add("7.1.7", "A close with a valid UTF-8 reason (Greek) is echoed. (RFC6455 5.5.1)",
    [close(1000, VALID[1][1])], end=(1000,))
add("7.1.8", "A close reason that is not UTF-8 (byte FF) fails with 1007. (RFC6455 5.5.1, 8.1)",
    [close(1000, b"bad\xff")], end=P1007)
add("7.1.9", "A close reason with a surrogate fails with 1007. (RFC6455 5.5.1, 8.1)",
    [close(1000, b"\xed\xa0\x80")], end=P1007)
add("7.1.10", "A close reason ending inside a code point fails with 1007. (RFC6455 5.5.1)",
    [close(1000, b"abc\xe2\x82")], end=P1007)
add("7.1.11", "A close reason with an overlong form fails with 1007. (RFC6455 5.5.1)",
    [close(1000, b"\xc0\xaf")], end=P1007)
add("7.2.1", "Data after the client's close is not answered: only the close echo comes. "
    "(RFC6455 5.5.1)", [close(1000), text(b"after close")], end=(1000,))
add("7.2.2", "A ping after the client's close is not answered. (RFC6455 5.5.1)",
    [close(1000), ping(b"after close")], end=(1000,))
add("7.2.3", "A second close after the first is not answered again. (RFC6455 5.5.1)",
    [close(1000), close(1001)], end=(1000,))
add("7.2.4", "A message then a close in one write: echo, then the close echo. (RFC6455 5.5.1)",
    [text(b"last words") + close(1000)], [("text", b"last words")], end=(1000,))
add("7.2.5", "A close in the middle of a fragmented message is answered. (RFC6455 5.4, 5.5.1)",
    [text(b"frag", fin=False), close(1000)], end=(1000,))
add("7.2.6", "A close written one byte at a time is echoed. (RFC6455 5.5.1)",
    [Chop(close(1000, b"bye"), 1)], end=(1000,))
VALID_CODES = [1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014,
               3000, 3999, 4000, 4999]
for i, code in enumerate(VALID_CODES, 1):
    add("7.3.%d" % i, "Close code %d is valid: echoed. (RFC6455 7.4)" % code,
        [close(code, b"")], end=(code,), error=False)
INVALID_CODES = [0, 999, 1004, 1005, 1006, 1015, 1016, 1100, 2000, 2999, 5000, 65535]
for i, code in enumerate(INVALID_CODES, 1):
    add("7.4.%d" % i, "Close code %d must not be sent: the connection fails. (RFC6455 7.4)" % code,
        [close(code, b"")], end=P1002)

# 8. Limits (max_frame_size covers the whole message, RFC 6455 7.4.1 1009).

K64 = 65536
add("8.1.1", "A 65535-byte text message on /ws/small (limit 65536) is echoed. (RFC6455 7.4.1)",
    [text(pattern(K64 - 1))], [("text", pattern(K64 - 1))], path="/ws/small")
add("8.1.2", "A 65536-byte text message on /ws/small (at the limit) is echoed. (RFC6455 7.4.1)",
    [text(pattern(K64))], [("text", pattern(K64))], path="/ws/small")
add("8.1.3", "A 65537-byte text message on /ws/small fails with 1009. (RFC6455 7.4.1)",
    [text(pattern(K64 + 1))], end=P1009, path="/ws/small")
add("8.1.4", "A 65536-byte binary message on /ws/small is echoed. (RFC6455 7.4.1)",
    [binary(rand(K64))], [("binary", rand(K64))], path="/ws/small")
add("8.1.5", "A 65537-byte binary message on /ws/small fails with 1009. (RFC6455 7.4.1)",
    [binary(rand(K64 + 1))], end=P1009, path="/ws/small")
add("8.1.6", "Two fragments totalling 65536 bytes on /ws/small are echoed. (RFC6455 7.4.1)",
    [binary(rand(K64)[:32768], fin=False), cont(rand(K64)[32768:])], [("binary", rand(K64))],
    path="/ws/small")
add("8.1.7", "Two fragments totalling 65537 bytes on /ws/small fail with 1009. (RFC6455 7.4.1)",
    [binary(rand(32768), fin=False), cont(rand(32769))], end=P1009, path="/ws/small")
add("8.1.8", "Many fragments of 1000 bytes passing 65536 in total fail with 1009. "
    "(RFC6455 7.4.1)", [fragments(BINARY, rand(70000), [1000] * 69)], end=P1009,
    path="/ws/small")
add("8.1.9", "A frame announcing 2^62 bytes fails with 1009 before any payload. "
    "(RFC6455 7.4.1)", [frame(BINARY, b"", length=2**62, lenform=2)], end=P1009,
    path="/ws/small")
add("8.1.10", "A frame header announcing 100000 bytes fails with 1009 before its payload "
    "arrives. (RFC6455 7.4.1)", [frame(BINARY, rand(100000))[:14]], end=P1009,
    path="/ws/small", timeout=3)
add("8.1.11", "Control frames between fragments do not count toward the limit. "
    "(RFC6455 7.4.1)", [binary(rand(32768), fin=False), ping(rand(125)), cont(rand(32768)[:32768])],
    [("pong", rand(125)), ("binary", rand(32768) + rand(32768))], path="/ws/small")
M1 = 1 << 20
add("8.2.1", "A 1 MiB - 1 text message on /ws (default limit 1 MiB) is echoed. (RFC6455 7.4.1)",
    [text(pattern(M1 - 1))], [("text", pattern(M1 - 1))])
add("8.2.2", "A 1 MiB text message on /ws (at the default limit) is echoed. (RFC6455 7.4.1)",
    [text(pattern(M1))], [("text", pattern(M1))])
add("8.2.3", "A 1 MiB + 1 text message on /ws fails with 1009. (RFC6455 7.4.1)",
    [text(pattern(M1 + 1))], end=P1009)
add("8.2.4", "A 1 MiB + 1 binary message in 17 fragments on /ws fails with 1009. "
    "(RFC6455 7.4.1)", [fragments(BINARY, rand(M1 + 1), [K64] * 16)], end=P1009)
add("8.2.5", "A 1 MiB binary message in 16 fragments on /ws is echoed. (RFC6455 7.4.1)",
    [fragments(BINARY, rand(M1), [K64] * 15)], [("binary", rand(M1))])
add("8.3.1", "A 32 MiB + 1 message on /ws/big fails with 1009. (RFC6455 7.4.1)",
    [frame(BINARY, b"", length=(32 << 20) + 1)], end=P1009, path="/ws/big")


# 9. permessage-deflate negotiation (RFC 7692 7.1): the response, then a
# compressed echo with the negotiated parameters.

def pmd_echo():
    msg = ("The quick brown fox jumps over the lazy dog. " * 20).encode()
    far = rand(300) + pattern(200) + rand(300)    # repeats 500 bytes back
    return ([Deflate(TEXT, msg), Deflate(TEXT, msg), Deflate(BINARY, far + far)],
            [("text", msg), ("text", msg), ("binary", far + far)])


NEG_OK = [
    "permessage-deflate",
    "permessage-deflate; server_no_context_takeover",
    "permessage-deflate; client_no_context_takeover",
    "permessage-deflate; server_no_context_takeover; client_no_context_takeover",
] + ["permessage-deflate; server_max_window_bits=%d" % b for b in range(8, 16)] + [
    "permessage-deflate; client_max_window_bits",
] + ["permessage-deflate; client_max_window_bits=%d" % b for b in range(8, 16)] + [
    "permessage-deflate; server_no_context_takeover; client_no_context_takeover; "
    "server_max_window_bits=10; client_max_window_bits=10",
    "permessage-deflate; client_max_window_bits; server_max_window_bits=9",
    'permessage-deflate; server_max_window_bits="10"',
    "permessage-deflate;server_no_context_takeover;client_max_window_bits=12",
]
for i, offer in enumerate(NEG_OK, 1):
    send, expect = pmd_echo()
    add("9.1.%d" % i, "Offer '%s' is accepted within RFC 7692 7.1, and compressed messages are "
        "echoed with the negotiated parameters. (RFC7692 7.1)" % offer, send, expect,
        path="/ws/deflate", offer=offer)
NEG_BAD = [
    "permessage-deflate; server_max_window_bits=7",
    "permessage-deflate; server_max_window_bits=16",
    "permessage-deflate; server_max_window_bits=0",
    "permessage-deflate; server_max_window_bits=010",
    "permessage-deflate; server_max_window_bits=abc",
    "permessage-deflate; server_max_window_bits",
    "permessage-deflate; client_max_window_bits=7",
    "permessage-deflate; client_max_window_bits=16",
    "permessage-deflate; server_no_context_takeover=1",
    "permessage-deflate; client_no_context_takeover=true",
    "permessage-deflate; unknown_parameter",
    "permessage-deflate; server_no_context_takeover; server_no_context_takeover",
    "permessage-deflate; server_max_window_bits=10; server_max_window_bits=11",
]
for i, offer in enumerate(NEG_BAD, 1):
    add("9.2.%d" % i, "Invalid offer '%s' is declined: 101 without an extension, and "
        "uncompressed messages are echoed. (RFC7692 5, 7.1)" % offer,
        [text(b"plain"), binary(b"\x00\x01")], [("text", b"plain"), ("binary", b"\x00\x01")],
        path="/ws/deflate", offer=offer, neg="declined")
add("9.3.1", "An invalid offer then a valid one: the valid one is accepted. (RFC7692 5)",
    *pmd_echo(), path="/ws/deflate", offer="permessage-deflate; server_max_window_bits=7, "
    "permessage-deflate; client_no_context_takeover", neg=Accept(1))
add("9.3.2", "An unknown extension then permessage-deflate: permessage-deflate is accepted, "
    "the unknown one is not. (RFC6455 9.1, RFC7692 5)", *pmd_echo(), path="/ws/deflate",
    offer="x-unknown-extension; foo=bar, permessage-deflate", neg=Accept(1))
add("9.3.3", "Only an unknown extension offered: no extension in the response. (RFC6455 9.1)",
    [text(b"plain")], [("text", b"plain")], path="/ws/deflate", offer="x-unknown-extension",
    neg="declined")
add("9.3.4", "permessage-deflate offered to a route without compress: declined, and RSV1 then "
    "fails the connection. (RFC7692 5, RFC6455 5.2)", [text(b"x", rsv=4)], end=P1002,
    path="/ws", offer="permessage-deflate", neg="declined")
add("9.3.5", "Two valid offers: the first is accepted. (RFC7692 5)", *pmd_echo(),
    path="/ws/deflate", offer="permessage-deflate; server_max_window_bits=10, "
    "permessage-deflate", neg=Accept(0))
add("9.3.6", "The offer split over two header lines: the first offer is accepted. (RFC7692 5)",
    *pmd_echo(), path="/ws/deflate", offer="permessage-deflate; client_no_context_takeover",
    extra_headers=[("sec-websocket-extensions", "permessage-deflate")], neg=Accept(0))

# 10. permessage-deflate messages.

D = "/ws/deflate"
PMD = "permessage-deflate"
LOREM = ("Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor "
         "incididunt ut labore et dolore magna aliqua. ").encode()
n = 0
for size in [0, 1, 16, 125, 126, 1000, 65535, 65536, 300000]:
    for op, data in [(TEXT, (LOREM * (size // len(LOREM) + 1))[:size]), (BINARY, rand(size))]:
        n += 1
        add("10.1.%d" % n, "A compressed %s message of %d bytes is echoed. (RFC7692 6, 7.2)"
            % ("text" if op == TEXT else "binary", size), [Deflate(op, data)],
            [("text" if op == TEXT else "binary", data)], path=D, offer=PMD)
add("10.2.1", "10 compressed messages sharing the client's context are echoed (context "
    "takeover). (RFC7692 7.2.3.2)", [Deflate(TEXT, LOREM + b"%d" % i) for i in range(10)],
    [("text", LOREM + b"%d" % i) for i in range(10)], path=D, offer=PMD)
add("10.2.2", "With client_no_context_takeover the client resets its context per message: "
    "echoed. (RFC7692 7.1.1.2)", [Deflate(TEXT, LOREM + b"%d" % i) for i in range(10)],
    [("text", LOREM + b"%d" % i) for i in range(10)], path=D,
    offer=PMD + "; client_no_context_takeover")
add("10.2.3", "With server_no_context_takeover each server message inflates alone (checked "
    "with a fresh inflater). (RFC7692 7.1.1.1)",
    [Deflate(TEXT, LOREM + b"%d" % i) for i in range(10)],
    [("text", LOREM + b"%d" % i) for i in range(10)], path=D,
    offer=PMD + "; server_no_context_takeover")
add("10.2.4", "An empty compressed message after a non-empty one (shared context) is echoed, "
    "and the server compresses its empty echo after a non-empty one. (RFC7692 7.2.3.6)",
    [Deflate(TEXT, LOREM), Deflate(TEXT, b""), Deflate(BINARY, b"x")],
    [("text", LOREM), ("text", b""), ("binary", b"x")], path=D, offer=PMD)
add("10.2.5", "An uncompressed empty message after a compressed one is echoed. (RFC7692 6.1)",
    [Deflate(TEXT, LOREM), text(b""), binary(b"")],
    [("text", LOREM), ("text", b""), ("binary", b"")], path=D, offer=PMD)
add("10.2.6", "Two empty compressed messages in a row are echoed. (RFC7692 7.2.3.6)",
    [Deflate(BINARY, b""), Deflate(BINARY, b""), Deflate(TEXT, b"end")],
    [("binary", b""), ("binary", b""), ("text", b"end")], path=D, offer=PMD)
for i, bits in enumerate([8, 9, 10, 12], 1):
    far = rand(200) + pattern(600) + rand(100)
    data = far + far + far
    add("10.3.%d" % i, "server_max_window_bits=%d: the server's messages inflate with a %d-bit "
        "window. (RFC7692 7.1.2.1)" % (bits, bits),
        [Deflate(BINARY, data), Deflate(BINARY, data)], [("binary", data), ("binary", data)],
        path=D, offer=PMD + "; server_max_window_bits=%d" % bits)
for i, pieces in enumerate([2, 3, 10, 100], 1):
    add("10.4.%d" % i, "A compressed message in %d fragments (RSV1 on the first only) is "
        "echoed. (RFC7692 6.1)" % pieces, [Deflate(TEXT, LOREM * 20, pieces=pieces)],
        [("text", LOREM * 20)], path=D, offer=PMD)
add("10.4.5", "A compressed message in 3 fragments with a ping between them: pong, then the "
    "echo. (RFC7692 6.1, RFC6455 5.4)", [Deflate(TEXT, LOREM * 5, pieces=3, between=ping(b"p"))],
    [("pong", b"p"), ("pong", b"p"), ("text", LOREM * 5)], path=D, offer=PMD)
add("10.4.6", "A compressed message written one byte at a time. (RFC7692 6.1)",
    [Chop(Deflate(TEXT, LOREM * 3, pieces=4), 1)], [("text", LOREM * 3)], path=D, offer=PMD)
add("10.5.1", "An uncompressed message (RSV1 clear) on a deflate connection is echoed. "
    "(RFC7692 6.1)", [text(b"not compressed"), Deflate(TEXT, b"compressed"),
                      binary(b"\x00raw")],
    [("text", b"not compressed"), ("text", b"compressed"), ("binary", b"\x00raw")],
    path=D, offer=PMD)
add("10.5.2", "A compressed empty message as the single byte 00 is echoed. (RFC7692 7.2.3.6)",
    [Deflate(TEXT, b"", raw=b"\x00")], [("text", b"")], path=D, offer=PMD)
add("10.5.3", "A message ending with a final block (BFINAL) is echoed, and the next message "
    "too. (RFC7692 7.2.3.3)", [Deflate(TEXT, LOREM, bfinal=True), Deflate(TEXT, b"next",
                                                                          bfinal=True)],
    [("text", LOREM), ("text", b"next")], path=D, offer=PMD + "; client_no_context_takeover")
add("10.5.4", "A message of stored (uncompressed) deflate blocks is echoed. (RFC7692 7.2.3.4)",
    [Deflate(BINARY, b"", raw=b"\x00\x05\x00\xfa\xffhello")], [("binary", b"hello")],
    path=D, offer=PMD)
add("10.5.5", "A compressed text message whose inflated bytes are not UTF-8 fails with 1007. "
    "(RFC6455 8.1)", [Deflate(TEXT, b"abc\xed\xa0\x80def")], end=P1007, path=D, offer=PMD)
add("10.5.6", "Compressed data that is not a deflate stream (reserved block type) fails the "
    "connection with 1007. (RFC7692 8)", [Deflate(BINARY, b"", raw=b"\x07\xff\xff\xff")],
    end=P1007, path=D, offer=PMD)
add("10.6.1", "RSV1 on a ping fails the connection. (RFC7692 6.1)", [ping(b"x", rsv=4)],
    end=P1002, path=D, offer=PMD)
add("10.6.2", "RSV1 on a close fails the connection. (RFC7692 6.1)", [close(1000, rsv=4)],
    end=P1002, path=D, offer=PMD)
add("10.6.3", "RSV1 on a pong fails the connection. (RFC7692 6.1)", [pong(b"x", rsv=4)],
    end=P1002, path=D, offer=PMD)
add("10.6.4", "RSV1 on a continuation frame fails the connection. (RFC7692 6.1)",
    [Deflate(TEXT, LOREM * 4, pieces=2, rsv_all=True)], end=P1002, path=D, offer=PMD)
add("10.6.5", "RSV2 on a data frame with deflate negotiated fails the connection. "
    "(RFC6455 5.2)", [Deflate(TEXT, LOREM, rsv=2)], end=P1002, path=D, offer=PMD)
add("10.6.6", "RSV3 on a compressed data frame fails the connection. (RFC6455 5.2)",
    [Deflate(TEXT, LOREM, rsv=4 | 1)], end=P1002, path=D, offer=PMD)
BOMB = zlib.compressobj(9, zlib.DEFLATED, -15)
BOMB = BOMB.compress(b"\0" * (64 << 20)) + BOMB.flush(zlib.Z_SYNC_FLUSH)
BOMB = BOMB[:-4] if BOMB.endswith(b"\x00\x00\xff\xff") else BOMB
add("10.7.1", "A zip bomb (%d bytes inflating to 64 MiB) fails with 1009 (limit 1 MiB). "
    "(RFC7692 8, RFC6455 7.4.1)" % len(BOMB), [Deflate(BINARY, b"", raw=BOMB)], end=P1009,
    path=D, offer=PMD, timeout=10)
add("10.7.2", "The zip bomb in 8 fragments fails with 1009. (RFC7692 8)",
    [Deflate(BINARY, b"", raw=BOMB, pieces=8)], end=P1009, path=D, offer=PMD, timeout=10)
add("10.7.3", "A compressed message inflating to exactly 1 MiB is echoed. (RFC6455 7.4.1)",
    [Deflate(BINARY, b"\x01" * M1)], [("binary", b"\x01" * M1)], path=D, offer=PMD)
add("10.7.4", "A compressed message inflating to 1 MiB + 1 fails with 1009. (RFC6455 7.4.1)",
    [Deflate(BINARY, b"\x01" * (M1 + 1))], end=P1009, path=D, offer=PMD)
add("10.7.5", "A compressed text message of 1 MiB in 16 fragments is echoed. (RFC7692 6.1)",
    [Deflate(TEXT, pattern(M1), pieces=16)], [("text", pattern(M1))], path=D, offer=PMD)

# 11. Handshake variations (HTTP/1.1 upgrade only).

add("11.1", "Upgrade token and Connection value in other cases: accepted. (RFC6455 4.2.1)",
    [text(b"hi")], [("text", b"hi")], h1_only=True,
    extra_headers=[("__upgrade", "WebSocket"), ("__connection", "keep-alive, UPGRADE")])
add("11.2", "Bytes sent right after the request, in the same write, before the 101, are "
    "read as the first frame (robustness: RFC6455 4.1 tells clients to wait for the 101, but "
    "bytes the server has already read must not be lost).", [], [("text", b"early")], h1_only=True,
    extra_headers=[("__early", text(b"early").hex())])


def by_id():
    return {c.id: c for c in CASES}


if __name__ == "__main__":
    from collections import Counter
    counts = Counter(c.section for c in CASES)
    for sec in SECTIONS.values():
        print("%-22s %d" % (sec, counts[sec]))
    print("%-22s %d" % ("total", len(CASES)))
