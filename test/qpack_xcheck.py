"""ls-qpack (through pylsqpack), an independent QPACK implementation, as a
port program for test/mustang_qpack_interop_tests.erl.

Requests and replies are packets with a 4-byte big-endian length (Erlang's
{packet, 4}). A request is one command byte and its arguments; integers are
big-endian (u32, or u64 for stream ids), byte strings are a u32 length and
the bytes, header lists a u32 count and each name and value as byte
strings.

  D cap:u32 blocked:u32          a new decoder      -> o
  F bytes                        encoder stream in  -> o control unblocked
  H sid:u64 bytes                a field section    -> o control 1 sid headers | b
  C sid:u64                      stream cancelled   -> o control
  E cap:u32 blocked:u32          a new encoder      -> o encoder-stream-bytes
  e sid:u64 headers              encode             -> o encoder-stream-bytes block
  d bytes                        decoder stream in  -> o

where unblocked is a u32 count of (sid:u64 headers). Errors reply
e followed by the exception's name and message.
"""
import struct
import sys

import pylsqpack


def read_exact(n):
    data = b""
    while len(data) < n:
        chunk = sys.stdin.buffer.read(n - len(data))
        if not chunk:
            sys.exit(0)
        data += chunk
    return data


def reply(payload):
    sys.stdout.buffer.write(struct.pack(">I", len(payload)) + payload)
    sys.stdout.buffer.flush()


class Reader:
    def __init__(self, data):
        self.data = data
        self.pos = 0

    def u32(self):
        (v,) = struct.unpack_from(">I", self.data, self.pos)
        self.pos += 4
        return v

    def u64(self):
        (v,) = struct.unpack_from(">Q", self.data, self.pos)
        self.pos += 8
        return v

    def bytes(self):
        n = self.u32()
        v = self.data[self.pos:self.pos + n]
        self.pos += n
        return v

    def headers(self):
        return [(self.bytes(), self.bytes()) for _ in range(self.u32())]


def b(v):
    return struct.pack(">I", len(v)) + v


def hs(headers):
    return struct.pack(">I", len(headers)) + b"".join(b(n) + b(v) for n, v in headers)


def main():
    decoder = None
    encoder = None
    while True:
        (length,) = struct.unpack(">I", read_exact(4))
        r = Reader(read_exact(length))
        cmd = r.data[:1]
        r.pos = 1
        try:
            if cmd == b"D":
                decoder = pylsqpack.Decoder(r.u32(), r.u32())
                reply(b"o")
            elif cmd == b"F":
                control = b""
                out = []
                for sid in decoder.feed_encoder(r.bytes()):
                    c, headers = decoder.resume_header(sid)
                    control += c
                    out.append(struct.pack(">Q", sid) + hs(headers))
                reply(b"o" + b(control) + struct.pack(">I", len(out)) + b"".join(out))
            elif cmd == b"H":
                sid = r.u64()
                try:
                    control, headers = decoder.feed_header(sid, r.bytes())
                except pylsqpack.StreamBlocked:
                    reply(b"b")
                    continue
                reply(b"o" + b(control) + struct.pack(">IQ", 1, sid) + hs(headers))
            elif cmd == b"C":
                reply(b"o" + b(decoder.cancel_stream(r.u64())))
            elif cmd == b"E":
                encoder = pylsqpack.Encoder()
                reply(b"o" + b(encoder.apply_settings(r.u32(), r.u32())))
            elif cmd == b"e":
                sid = r.u64()
                enc, block = encoder.encode(sid, r.headers())
                reply(b"o" + b(enc) + b(block))
            elif cmd == b"d":
                encoder.feed_decoder(r.bytes())
                reply(b"o")
            else:
                reply(b"eUnknownCommand " + cmd)
        except Exception as e:  # report every ls-qpack error to the test
            reply(b"e" + type(e).__name__.encode() + b" " + str(e).encode())


if __name__ == "__main__":
    main()
