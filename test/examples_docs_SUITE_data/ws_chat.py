#!/usr/bin/env python3
"""Two chat clients for examples_docs_SUITE (websocket_chat), with the
websockets package. Prints one JSON object: what each client received, in
order, once each has seen the other's message.

    ws_chat.py URL        (ws://host:port/ws)

alice joins, then bob; alice sends "hello from alice", bob answers
"hello from bob" once he has seen it; then bob leaves and alice waits for
"* bob left".
"""
import asyncio
import json
import sys

import websockets


async def until(ws, seen, wanted):
    while wanted not in seen:
        seen.append(await asyncio.wait_for(ws.recv(), 10))


async def main(url):
    alice_seen, bob_seen = [], []
    async with websockets.connect(url + "?name=alice") as alice:
        await until(alice, alice_seen, "* alice joined")
        async with websockets.connect(url + "?name=bob") as bob:
            await until(alice, alice_seen, "* bob joined")
            await alice.send("hello from alice")
            await until(bob, bob_seen, "alice: hello from alice")
            await bob.send("hello from bob")
            await until(alice, alice_seen, "bob: hello from bob")
            await until(bob, bob_seen, "bob: hello from bob")
        await until(alice, alice_seen, "* bob left")
    print(json.dumps({"alice": alice_seen, "bob": bob_seen}), flush=True)


asyncio.run(main(sys.argv[1]))
