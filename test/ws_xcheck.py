"""Third-party cross-check for mustang_ws_frame and mustang_ws_deflate,
run by mustang_ws_python_tests. Uses wsproto (frames, permessage-deflate as a
client) and websockets (checks our negotiation responses as a client would).

  ws_xcheck.py offers        print one Sec-WebSocket-Extensions offer per
                             deflate configuration: "<idx> <offer>"
  ws_xcheck.py check < IN    IN has lines written by the Erlang side:
                               server <hex>                 server frames (no extension)
                               deflate <idx> <hex> <resp>   compressed server frames,
                                                            negotiated with response <resp>
                             and prints:
                               client <hex>                 masked client frames
                               expect <opcode> <sha256>     their messages, in order
                               server-msg <opcode> <sha256> what we decoded from `server`
                               resp-ok <idx> | resp-bad <idx> <error>
                               deflate-msg <idx> <opcode> <sha256>
                               deflate-client <idx> <hex>   compressed client frames
                               deflate-expect <idx> <opcode> <sha256>
Payloads are compared by SHA-256 so that large ones stay off the report.
"""
import hashlib
import random
import sys
import zlib

from wsproto.extensions import PerMessageDeflate
from wsproto.frame_protocol import FrameProtocol, Opcode
from websockets.extensions.permessage_deflate import ClientPerMessageDeflateFactory
from websockets.headers import parse_extension

# (wsproto kwargs, websockets kwargs) for each offer: the websockets client
# factory must describe the same offer as wsproto makes (wsproto always
# offers both window sizes, 15 by default).
CONFIGS = [
    ({}, {"client_max_window_bits": 15, "server_max_window_bits": 15}),
    (dict(client_max_window_bits=12),
     {"client_max_window_bits": 12, "server_max_window_bits": 15}),
    (dict(client_max_window_bits=9, server_max_window_bits=10),
     {"client_max_window_bits": 9, "server_max_window_bits": 10}),
    (dict(server_no_context_takeover=True, client_no_context_takeover=True),
     {"server_no_context_takeover": True, "client_no_context_takeover": True,
      "client_max_window_bits": 15, "server_max_window_bits": 15}),
    (dict(server_max_window_bits=9, client_max_window_bits=9),
     {"server_max_window_bits": 9, "client_max_window_bits": 9}),
    # wsproto and websockets refuse 8-bit windows: this offer is written by
    # hand, our response is not checked by websockets, and our frames are
    # read by read_deflated() with Python's zlib.
    (None, None),
]
OFFER_8 = "permessage-deflate; server_max_window_bits=8; client_max_window_bits=8"



def sha(data):
    if isinstance(data, str):
        data = data.encode("utf-8")
    return hashlib.sha256(bytes(data)).hexdigest()


def text(size):
    data = ("0123456789abcdef\u20ac" * (size // 17 + 1)).encode("utf-8")[:size]
    while True:
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            data = data[:-1]


def client_messages():
    """(opcode name, payload) of each message, in the order sent."""
    rnd = random.Random(6455)
    msgs = []
    for size in (0, 1, 125, 126, 127, 65535, 65536, 65537, 1 << 20):
        msgs.append(("text", text(size)))
        msgs.append(("binary", rnd.randbytes(size)))
    return msgs


def deflate_messages():
    rnd = random.Random(7692)
    rand = rnd.randbytes(70000)
    return [("binary", b""), ("text", "Hello"), ("text", "Hello" * 100),
            ("binary", rand), ("binary", rand),
            ("text", "h\u00e9llo w\u00f6rld " * 1000), ("text", "h\u00e9llo w\u00f6rld " * 1000)]


def offers():
    for idx, (kwargs, _) in enumerate(CONFIGS):
        if kwargs is None:
            print(idx, OFFER_8)
        else:
            offer = PerMessageDeflate(**kwargs).offer()
            print(idx, "permessage-deflate" + ("; " + offer if offer else ""))


def read_deflated(data, wbits):
    """Messages in unmasked server frames, inflated with an 8-bit window
    kept across messages (RFC 7692 7.2.2), frames joined."""
    inflater = zlib.decompressobj(wbits=-wbits)
    out, parts, opcode, compressed = [], [], None, False
    while data:
        b0, b1 = data[0], data[1]
        length, pos = b1 & 0x7F, 2
        if length == 126:
            length, pos = int.from_bytes(data[2:4], "big"), 4
        elif length == 127:
            length, pos = int.from_bytes(data[2:10], "big"), 10
        payload, data = data[pos:pos + length], data[pos + length:]
        op = b0 & 0x0F
        if op >= 8:
            out.append((Opcode(op).name.lower(), sha(payload)))
            continue
        if op != 0:
            opcode, compressed = Opcode(op).name.lower(), bool(b0 & 0x40)
        parts.append(payload)
        if b0 & 0x80:
            message = b"".join(parts)
            if compressed:
                message = inflater.decompress(message + b"\x00\x00\xff\xff")
            out.append((opcode, sha(message)))
            parts = []
    return out


def decode(proto, data):
    """Messages in data: (opcode name, sha256), frames joined."""
    proto.receive_bytes(data)
    out, parts, opcode = [], [], None
    for frame in proto.received_frames():
        if frame.opcode == Opcode.CLOSE:
            code, reason = frame.payload
            out.append(("close", sha(b"%d:" % code + reason.encode("utf-8"))))
            continue
        if frame.opcode in (Opcode.PING, Opcode.PONG):
            out.append((frame.opcode.name.lower(), sha(frame.payload)))
            continue
        if frame.opcode != Opcode.CONTINUATION:
            opcode = frame.opcode.name.lower()
        parts.append(frame.payload.encode("utf-8") if isinstance(frame.payload, str)
                     else bytes(frame.payload))
        if frame.message_finished:
            out.append((opcode, sha(b"".join(parts))))
            parts = []
    return out


def encode(proto, msgs):
    out = bytearray()
    for _, payload in msgs:
        if len(payload) > 1000:
            # In three fragments, a ping between the first two.
            third = len(payload) // 3
            out += proto.send_data(payload[:third], False)
            out += proto.ping(b"between")
            out += proto.send_data(payload[third:2 * third], False)
            out += proto.send_data(payload[2 * third:], True)
        else:
            out += proto.send_data(payload, True)
    return out


def check():
    # Client frames, no extension.
    msgs = client_messages()
    proto = FrameProtocol(client=True, extensions=[])
    frames = encode(proto, msgs)
    frames += proto.ping(b"ping!") + proto.pong(b"") + proto.close(1000, "bye \u263a")
    print("client", frames.hex())
    for opcode, payload in msgs:
        if len(payload) > 1000:
            print("expect ping", sha(b"between"))
        print("expect", opcode, sha(payload))
    print("expect ping", sha(b"ping!"))
    print("expect pong", sha(b""))
    print("expect close", sha("1000:bye \u263a"))

    for line in sys.stdin:
        words = line.split(" ", 3)
        if words[0] == "server":
            proto = FrameProtocol(client=True, extensions=[])
            for opcode, digest in decode(proto, bytes.fromhex(words[1].strip())):
                print("server-msg", opcode, digest)
        elif words[0] == "deflate":
            idx, data, response = int(words[1]), bytes.fromhex(words[2]), words[3].strip()
            wsproto_kwargs, websockets_kwargs = CONFIGS[idx]
            # websockets checks the response as its client would.
            if websockets_kwargs is None:
                print("resp-unchecked", idx)
            else:
              try:
                [(name, params)] = parse_extension(response)
                assert name == "permessage-deflate"
                ClientPerMessageDeflateFactory(**websockets_kwargs).process_response_params(params, [])
                print("resp-ok", idx)
              except Exception as exc:  # noqa: BLE001 - report any refusal
                print("resp-bad", idx, repr(exc).replace("\n", " "))
            if wsproto_kwargs is None:
                for opcode, digest in read_deflated(data, 8):
                    print("deflate-msg", idx, opcode, digest)
                continue
            # wsproto's client takes the response, reads our frames and sends its own.
            ext = PerMessageDeflate(**wsproto_kwargs)
            ext.finalize(response)
            proto = FrameProtocol(client=True, extensions=[ext])
            for opcode, digest in decode(proto, data):
                print("deflate-msg", idx, opcode, digest)
            msgs = deflate_messages()
            print("deflate-client", idx, encode(proto, msgs).hex())
            for opcode, payload in msgs:
                if len(payload) > 1000:
                    print("deflate-expect", idx, "ping", sha(b"between"))
                print("deflate-expect", idx, opcode, sha(payload))
        sys.stdout.flush()


if __name__ == "__main__":
    {"offers": offers, "check": check}[sys.argv[1]]()
