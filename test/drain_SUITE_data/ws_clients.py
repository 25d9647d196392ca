"""Websocket clients for drain_SUITE: N clients connect to URL and echo
messages until the server closes; prints "ready" once all are connected,
then, at the end, one line per client: "close CODE ECHOED"."""
import asyncio
import sys

import websockets


async def client(url, ready):
    async with websockets.connect(url, open_timeout=10, close_timeout=10,
                                  ping_interval=None) as ws:
        ready.release()
        echoed = 0
        try:
            while True:
                await ws.send("ping %d" % echoed)
                reply = await ws.recv()
                assert reply == "ping %d" % echoed, reply
                echoed += 1
                await asyncio.sleep(0.02)
        except websockets.ConnectionClosed:
            pass
        return ws.close_code, echoed


async def main(url, n):
    ready = asyncio.Semaphore(0)
    tasks = [asyncio.create_task(client(url, ready)) for _ in range(n)]
    for _ in range(n):
        await ready.acquire()
    print("ready", flush=True)
    for result in await asyncio.gather(*tasks, return_exceptions=True):
        if isinstance(result, tuple):
            print("close %s %d" % result, flush=True)
        else:
            print("error %r" % (result,), flush=True)


asyncio.run(main(sys.argv[1], int(sys.argv[2])))
