"""HTTP client side of clients_SUITE, with the standard library's http.client.

    httpclient_client.py get PORT          GET /
    httpclient_client.py keepalive PORT N  N GETs of / on one HTTPConnection
    httpclient_client.py post PORT         POST /echo
    httpclient_client.py chunked PORT      POST /read_body with a chunked body
    httpclient_client.py stream PORT       GET /stream

Prints results on stdout, one per line; the suite compares them exactly.
"""
import http.client
import sys


def connect(port):
    return http.client.HTTPConnection("127.0.0.1", port, timeout=10)


def get(port):
    conn = connect(port)
    conn.request("GET", "/")
    r = conn.getresponse()
    print(r.status, r.reason, r.version)
    print(r.getheader("content-type"), r.getheader("content-length"))
    print(r.read().decode())
    conn.close()


def keepalive(port, n):
    conn = connect(port)
    local_ports, results = set(), set()
    for _ in range(n):
        conn.request("GET", "/")
        r = conn.getresponse()
        results.add((r.status, r.read().decode()))
        # http.client reconnects silently: count the local ports used.
        local_ports.add(conn.sock.getsockname()[1])
    conn.close()
    for status, body in sorted(results):
        print(status, body)
    print("connections", len(local_ports))


def post(port):
    data = b"x=1&y=\xff\x00" * 1000
    conn = connect(port)
    conn.request("POST", "/echo", body=data, headers={"content-type": "text/x-test"})
    r = conn.getresponse()
    body = r.read()
    print(r.status, r.getheader("content-type"), body == data, len(body))
    conn.close()


def chunked(port):
    conn = connect(port)
    conn.request("POST", "/read_body", body=iter([b"a" * 1000] * 5), encode_chunked=True)
    r = conn.getresponse()
    print(r.status, r.read().decode())
    conn.close()


def stream(port):
    conn = connect(port)
    conn.request("GET", "/stream")
    r = conn.getresponse()
    print(r.status, r.getheader("transfer-encoding"))
    print(r.read().decode(), end="")
    conn.close()


def main():
    cmd, port = sys.argv[1], int(sys.argv[2])
    if cmd == "get":
        get(port)
    elif cmd == "keepalive":
        keepalive(port, int(sys.argv[3]))
    elif cmd == "post":
        post(port)
    elif cmd == "chunked":
        chunked(port)
    elif cmd == "stream":
        stream(port)
    else:
        sys.exit(f"unknown command {cmd}")


if __name__ == "__main__":
    main()
