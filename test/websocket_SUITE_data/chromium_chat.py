"""Interop: headless Chromium on the chat page (/chat, whose script talks to
/ws/chat), driven through the DevTools protocol, plus a Python websockets
client in the same chat.

  chromium_chat.py --chromium EXE --profile DIR --page URL --ws URL --version V

Tab A loads PAGE?auto=from-tab-A (the page sends that once connected); tab
B loads PAGE and types "from-tab-B" into #msg and clicks #send; the Python
client sends "from-python". Every member must see every message (the chat
sends each message to all, the sender included), and each tab's first
message from the server must be "joined over V": the test handler tells
which protocol carried the Websocket (without --version, for the demo's
chat, that is not checked and no such message is expected). With
--prefixed (examples/websocket_chat), messages arrive as "name: text" and
are compared without the name. Prints "ok ..." / "FAIL ..." lines;
exit 0 when all passed."""
import argparse
import json
import os
import shutil
import signal
import ssl
import subprocess
import sys
import time
import warnings
import urllib.request

from websockets.sync.client import connect

warnings.filterwarnings("ignore", category=DeprecationWarning)

ap = argparse.ArgumentParser()
ap.add_argument("--chromium")
ap.add_argument("--profile")
ap.add_argument("--page")
ap.add_argument("--ws")
ap.add_argument("--version")
ap.add_argument("--prefixed", action="store_true")
opts = ap.parse_args()
failed = False


def check(name, cond, why=""):
    global failed
    if cond:
        print("ok " + name, flush=True)
    else:
        failed = True
        print("FAIL %s: %s" % (name, why), flush=True)
    return cond


def text_of(message):
    """A chat line without its "name: " when the chat prefixes names."""
    if opts.prefixed and ": " in message:
        return message.split(": ", 1)[1]
    return message


def wait_for(what, fn, timeout=20):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        ok, last = fn()
        if ok:
            return True, last
        time.sleep(0.1)
    return False, last


class Tab:
    def __init__(self, devtools_port, url):
        req = urllib.request.Request("http://127.0.0.1:%d/json/new?%s" % (devtools_port, url),
                                     method="PUT")
        info = json.load(urllib.request.urlopen(req, timeout=10))
        self.ws = connect(info["webSocketDebuggerUrl"], max_size=None, compression=None)
        self.next_id = 0

    def eval(self, expr):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": "Runtime.evaluate",
                                 "params": {"expression": expr, "returnByValue": True}}))
        while True:
            msg = json.loads(self.ws.recv(timeout=10))
            if msg.get("id") == self.next_id:
                return msg.get("result", {}).get("result", {}).get("value")

    def log(self):
        return [text_of(m) for m in self.eval("Array.from(document.querySelectorAll('#log li'))"
                                              ".map(li => li.textContent)") or []]

    def status(self):
        e = self.eval("(document.getElementById('status') || {}).textContent")
        return e

    def wait_log(self, name, text):
        ok, last = wait_for(name, lambda: (text in (l := self.log()), l))
        return check(name, ok, "log is %r, status %r" % (last, self.status()))


ctx = None
if opts.ws.startswith("wss:"):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE

shutil.rmtree(opts.profile, ignore_errors=True)
os.makedirs(opts.profile)
browser = subprocess.Popen(
    [opts.chromium, "--headless", "--no-sandbox", "--disable-gpu", "--ignore-certificate-errors",
     "--no-first-run", "--user-data-dir=" + opts.profile, "--remote-debugging-port=0",
     "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    start_new_session=True)
try:
    port_file = os.path.join(opts.profile, "DevToolsActivePort")
    ok, _ = wait_for("devtools", lambda: (os.path.exists(port_file)
                                          and len(open(port_file).read().split()) >= 1, None))
    if not check("Chromium started its DevTools endpoint", ok, "no %s in 20 s" % port_file):
        sys.exit(1)
    devtools_port = int(open(port_file).read().split()[0])

    peer = connect(opts.ws, ssl=ctx, open_timeout=10)
    if opts.version:
        first = peer.recv(timeout=10)
        check("the Python client joined over HTTP/1.1", first == "joined over HTTP/1.1",
              repr(first))

    a = Tab(devtools_port, opts.page + "?auto=from-tab-A")
    a.wait_log("tab A got its own message", "from-tab-A")
    b = Tab(devtools_port, opts.page)
    ok, st = wait_for("tab B connected", lambda: ((s := b.status()) == "connected", s))
    check("tab B connected", ok, "status %r" % st)
    b.eval("document.getElementById('msg').value = 'from-tab-B';"
           "document.getElementById('send').click()")
    b.wait_log("tab B got its own message (typed and sent with the button)", "from-tab-B")
    a.wait_log("tab A got tab B's message", "from-tab-B")
    got = []
    deadline = time.monotonic() + 10
    while not {"from-tab-A", "from-tab-B"} <= set(got) and time.monotonic() < deadline:
        try:
            got.append(text_of(peer.recv(timeout=max(0.1, deadline - time.monotonic()))))
        except TimeoutError:
            break
    check("the Python client got both tabs' messages", {"from-tab-A", "from-tab-B"} <= set(got),
          "got %r" % got)
    peer.send("from-python")
    a.wait_log("tab A got the Python client's message", "from-python")
    b.wait_log("tab B got the Python client's message", "from-python")
    for name, tab in (("A", a), ("B", b)) if opts.version else ():
        log = tab.log()
        check("tab %s's Websocket ran over %s" % (name, opts.version),
              bool(log) and log[0] == "joined over " + opts.version, "log %r" % log)
    peer.close()
finally:
    try:
        os.killpg(browser.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    browser.wait()
sys.exit(1 if failed else 0)
