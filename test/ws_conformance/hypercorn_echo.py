"""Reference echo server for the RFC 8441 (and HTTP/1.1) cases: a tiny ASGI
app served by hypercorn, which speaks Websocket over HTTP/2 with extended
CONNECT on h2c (prior knowledge) and over an HTTP/1.1 upgrade.

  hypercorn_echo.py PORT      hypercorn prints "Running on http://127.0.0.1:PORT"
                              once it accepts connections (PORT 0: the system
                              picks the port, and that line tells which)

Routes and limits are those of Mustang's test listener (/ws 1 MiB, /ws/small
64 KiB, /ws/big 32 MiB, /ws/deflate 1 MiB). hypercorn has one global message
size limit, so it is set to the largest route's and the app closes with 1009
past the route's own. hypercorn negotiates permessage-deflate on every route
(wsproto), not only /ws/deflate.
"""
import asyncio
import sys

from hypercorn.asyncio import serve
from hypercorn.config import Config

LIMITS = {"/ws": 1 << 20, "/ws/small": 65536, "/ws/big": 32 << 20, "/ws/deflate": 1 << 20}


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        while True:
            msg = await receive()
            if msg["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif msg["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    if scope["type"] == "http":
        await receive()
        await send({"type": "http.response.start", "status": 404, "headers": []})
        await send({"type": "http.response.body", "body": b""})
        return
    limit = LIMITS.get(scope["path"])
    msg = await receive()
    if msg["type"] != "websocket.connect" or limit is None:
        await send({"type": "websocket.close", "code": 1008})
        return
    await send({"type": "websocket.accept"})
    while True:
        msg = await receive()
        if msg["type"] == "websocket.disconnect":
            return
        data = msg.get("text")
        size = len(data.encode()) if data is not None else len(msg.get("bytes") or b"")
        if size > limit:
            await send({"type": "websocket.close", "code": 1009})
            return
        if data is not None:
            await send({"type": "websocket.send", "text": data})
        else:
            await send({"type": "websocket.send", "bytes": msg.get("bytes") or b""})


async def main(port):
    config = Config()
    config.bind = ["127.0.0.1:%d" % port]
    config.websocket_max_message_size = 33 << 20
    config.h2_max_inbound_frame_size = 16384
    # hypercorn closes a connection that has no open stream after
    # keep_alive_timeout (5 s by default). Over HTTP/2 it forgets the stream
    # of a Websocket that failed without telling the client, so that timer
    # would drop the TCP connection about when run.py's 5 s wait for the close
    # ends, and the case would pass or fail by a few milliseconds.
    config.keep_alive_timeout = 600
    config.accesslog = None
    config.errorlog = "-"
    await serve(app, config)


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1])))
