"""Anti-amplification (RFC 9000 8.1): a client that sends one Initial and
never answers must get back at most three times what it sent.

    amplification.py PORT SECONDS

Builds the Initial with aioquic's QUIC state machine, sends it from a plain
UDP socket, then only listens. Prints {"sent": N, "received": N}.
"""
import json
import socket
import ssl
import sys
import time

from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.connection import QuicConnection


def main():
    port, secs = int(sys.argv[1]), float(sys.argv[2])
    cfg = QuicConfiguration(is_client=True, alpn_protocols=["h3"], verify_mode=ssl.CERT_NONE)
    conn = QuicConnection(configuration=cfg)
    addr = ("127.0.0.1", port)
    conn.connect(addr, now=time.time())
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sent = 0
    for data, _ in conn.datagrams_to_send(now=time.time()):
        sock.sendto(data, addr)
        sent += len(data)
    received = 0
    sizes = []
    sock.settimeout(0.2)
    end = time.time() + secs
    while time.time() < end:
        try:
            data, _ = sock.recvfrom(65536)
            received += len(data)
            sizes.append(len(data))
        except socket.timeout:
            pass
    print(json.dumps({"sent": sent, "received": received, "sizes": sizes}))


main()
