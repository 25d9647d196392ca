"""HTTP client side of clients_SUITE, with httpx.

    httpx_client.py keepalive BASE_URL N   N GETs of / on one httpx.Client
    httpx_client.py stream BASE_URL        GET /stream, read as a stream
    httpx_client.py post BASE_URL          POST /echo and POST /read_body
    httpx_client.py tls BASE_URL           GET / without certificate checks

Prints results on stdout, one per line; the suite compares them exactly.
"""
import sys

import httpx


def keepalive(base, n):
    statuses, bodies, clients = {}, set(), set()
    with httpx.Client(http1=True, http2=False) as client:
        for _ in range(n):
            r = client.get(base + "/")
            statuses[r.status_code] = statuses.get(r.status_code, 0) + 1
            bodies.add(r.text)
            # The local address of the connection: one connection, one address.
            clients.add(r.extensions["network_stream"].get_extra_info("client_addr"))
    for status, count in sorted(statuses.items()):
        print(f"status {status} x{count}")
    for body in sorted(bodies):
        print(f"body {body}")
    print(f"connections {len(clients)}")


def stream(base):
    with httpx.Client() as client:
        with client.stream("GET", base + "/stream") as r:
            chunks = list(r.iter_bytes())
            print(r.status_code)
            print(r.headers.get("transfer-encoding"))
            print(b"".join(chunks).decode(), end="")


def post(base):
    data = bytes(range(256)) * 4096  # 1 MiB
    with httpx.Client() as client:
        r = client.post(base + "/echo", content=data,
                        headers={"content-type": "application/x-test"})
        print(r.status_code, r.headers["content-type"], r.content == data, len(r.content))
        r = client.post(base + "/read_body", content=data)
        print(r.status_code, r.text)


def tls(base):
    with httpx.Client(verify=False) as client:
        r = client.get(base + "/")
        print(r.status_code, r.http_version, r.text)


def main():
    cmd, base = sys.argv[1], sys.argv[2]
    if cmd == "keepalive":
        keepalive(base, int(sys.argv[3]))
    elif cmd == "stream":
        stream(base)
    elif cmd == "post":
        post(base)
    elif cmd == "tls":
        tls(base)
    else:
        sys.exit(f"unknown command {cmd}")


if __name__ == "__main__":
    main()
