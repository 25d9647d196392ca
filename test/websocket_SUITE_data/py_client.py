"""Interop: the Python websockets client against an echo route.

  py_client.py URL --deflate|--no-deflate

Prints "ok <check>" or "FAIL <check>: <why>" per check; exit 0 when all
passed."""
import os
import ssl
import sys
import time
import warnings

from websockets.sync.client import connect

warnings.filterwarnings("ignore", category=DeprecationWarning)

url, mode = sys.argv[1], sys.argv[2]
deflate = mode == "--deflate"
failed = False


def check(name, cond, why=""):
    global failed
    if cond:
        print("ok " + name, flush=True)
    else:
        failed = True
        print("FAIL %s: %s" % (name, why), flush=True)


ctx = None
if url.startswith("wss:"):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
try:
    ws = connect(url, ssl=ctx, compression="deflate" if deflate else None,
                 max_size=2 << 20, open_timeout=10, close_timeout=5)
except Exception as e:
    print("FAIL connect %s: %r" % (url, e), flush=True)
    sys.exit(1)
ext = ws.response.headers.get("Sec-WebSocket-Extensions")
if deflate:
    check("permessage-deflate negotiated", ext is not None and "permessage-deflate" in ext,
          "response extensions %r" % ext)
else:
    check("no extension", ext is None, "response extensions %r" % ext)


def echo(name, msg):
    t0 = time.monotonic()
    try:
        ws.send(msg)
        got = ws.recv(timeout=10)
    except Exception as e:
        check("%s echoed" % name, False, "%r (close frame received: %s)" % (e, ws.close_code))
        raise
    check("%s echoed (%.0f ms)" % (name, (time.monotonic() - t0) * 1000), got == msg,
          "sent %d %s, got %r" % (len(msg), type(msg).__name__,
                                  got if len(got) < 80 else "%d %s" % (len(got), type(got).__name__)))


try:
    echo("text", "hello")
    echo("UTF-8 text", "\u03ba\u1f79\u03c3\u03bc\u03b5 \U0001f389")
    echo("binary", bytes(range(256)))
    echo("empty text", "")
    echo("1 MB text", "x" * 500000 + "y" * 500000)
    echo("1 MB binary", os.urandom(1000000))
    for i in range(20):
        ws.send("burst-%d" % i)
    got = [ws.recv(timeout=10) for _ in range(20)]
    check("20 messages in a burst echoed in order", got == ["burst-%d" % i for i in range(20)],
          repr(got))
    pong = ws.ping(b"py-ping")
    check("ping answered by a pong", pong.wait(5), "no pong in 5 s")
    ws.close()
    check("close answered with 1000", ws.close_code == 1000,
          "close code %r" % ws.close_code)
except Exception as e:
    check("the exchange went on", False, repr(e))
sys.exit(1 if failed else 0)
