#!/usr/bin/env python3
"""Turn the raw outputs of bench/run.sh into a table, derived targets and
PASS/FAIL lines (stdlib only).

    bench/report.py _bench/results-YYYYmmdd-HHMMSS [BASELINE_DIR]

Raw files are named <workload>-<server>.r<round>.txt (wrk for W1*, h2load
for W2*, W3*, W4*, curl for W5*, bench/wsload for W6* and, with -mode
paced, W7; W7's connection curve is scaling/w7-<conns>-<server>.txt; the
one-core phase's (BENCH_PIN) are onecore/<workload>-<server>.r<round>.txt,
client and server on one CPU). Servers: "nginx",
"mustang" (MUSTANG_REQUEST_PROCESS=false), "mustang-rp"
(MUSTANG_REQUEST_PROCESS=true) and "wsref" (the Websocket reference server).
With BASELINE_DIR (an earlier results directory, e.g. the previous commit's
run), every figure also gets its ratio to that run's figure ("x base").
Writes results.json beside them and prints the report on stdout.
"""
import json
import os
import re
import sys

# BENCH.md reference figures (Cowboy 2.13 and nginx measured in one sitting).
NGINX_REF_W1C = 176_700.0
NGINX_REF_W2A = 147_900.0
COWBOY = {  # workload -> (value, unit of comparison)
    "W1a": (9_900.0, "req/s"),
    "W1b": (40_600.0, "req/s"),
    "W1c": (45_100.0, "req/s"),
    "W2a": (59_300.0, "req/s"),
    "W2b": (13_400.0, "req/s"),
    "W3a": (1252.0, "MB/s"),
    "W3b": (2076.0, "MB/s"),
    "W4a": (1586.0, "MB/s"),
    "W4b": (1640.0, "MB/s"),
    "W5a": (1.49, "s"),
    "W5b": (0.90, "s"),
}
# Which nginx figure of this run scales a Cowboy figure: HTTP/1.1 workloads
# use nginx W1c (x / 176.7k), HTTP/2 ones nginx W2a (x / 147.9k). When the
# preferred one was not run, the other is used (and the report says so).
H2_WORKLOADS = ("W2a", "W2b", "W4a", "W4b", "W5b", "W5c")
W5_BYTES = 1073741824  # the Cowboy W5 figures are for a 1 GiB upload
COWBOY_W1A_P99_MS = 0.79
COWBOY_W1C_P99_MS = 3.9
# Acceptance for the issue (first version of the server).
ACC_W1C_X_NGINX = 0.45
ACC_W3A_X_COWBOY = 1.5
# Issue 3 (HTTP/2): the 1 GB h2c upload within 1.5x the HTTP/1.1 time.
ACC_W5B_OVER_W5A = 1.5
# Long-term goals from BENCH.md (informational), older than issue 11: its
# targets, with other figures, are ISSUE_TARGETS ("Targets (issue 11)").
OLD_GOALS = "BENCH.md goals (older than issue 11; its targets: \"Targets (issue 11)\")"
GOAL_W1C_X_COWBOY = 2.0
GOAL_W1A_X_COWBOY = 1.7
GOAL_W3_X_COWBOY = 1.8
GOAL_W2A_X_COWBOY = 1.5
GOAL_W4_X_COWBOY = 1.3
GOAL_W5_X_COWBOY = 1.2

# W7 (BENCH.md): paced GET /sleep (100 ms handler), one request per
# connection per second; target p99 <= 101.5 ms with 10,000 connections.
W7_TARGET_P99_MS = 101.5
W7_TARGET_CONNS = 10000
W7_SERVERS = ["mustang", "cowboy", "elli"]
W7_ERROR_KINDS = ("connect", "reset", "timeout", "status", "length")

# Websocket (BENCH.md W6a-W6f, Cowboy 2.13 beside nginx W1c 176.7k): frames/s,
# or MB/s for the 64 KiB ones (BENCH.md does not say which MB; read as 10^6
# bytes of payload per second, the unit wsload reports).
WS_COWBOY = {
    "W6a": (16_200.0, "frames/s"),
    "W6b": (97_000.0, "frames/s"),
    "W6c": (64_600.0, "frames/s"),
    "W6d": (273.0, "MB/s"),
    "W6e": (78.0, "MB/s"),
    "W6f": (47_200.0, "frames/s"),
}
WS_GOALS = {"W6a": 1.3, "W6b": 2.0, "W6c": 2.5, "W6d": 2.0, "W6e": 2.5, "W6f": 1.3}
WS_LABEL = {"wsref": "reference", "mustang": "mustang", "cowboy": "cowboy"}  # Websocket: rp=false only
WS_BENCH = ["W6a", "W6b", "W6c", "W6d", "W6e", "W6f"]
WS_BENCH_DESC = {
    "W6a": "echo 1 KiB binary",
    "W6b": "send 1 KiB binary",
    "W6c": "send 1 KiB utf8 text",
    "W6d": "send 64 KiB binary",
    "W6e": "send 64 KiB utf8 text",
    "W6f": "echo 1KiB binary 10 conns",
}
# The matrix, in report order (same as bench/run.sh).
WS_MATRIX = ["W6m-%s-%s-%s-%s-%s" % (mode, kind, size, proto, defl)
             for defl in ("plain", "deflate") for proto in ("h1", "h2")
             for mode in ("echo", "send") for size in ("1k", "64k")
             for kind in ("binary", "ascii", "mixed", "utf8")]

WORKLOADS = ["W1a", "W1b", "W1c", "W2a", "W2b", "W3a", "W3b", "W4a", "W4b",
             "W5a", "W5b", "W5c"]
SERVER_ORDER = ["mustang", "mustang-rp", "cowboy", "elli", "nginx"]
SERVER_LABEL = {
    "nginx": "nginx",
    "mustang": "mustang",
    "mustang-rp": "mustang rp=true",
    "cowboy": "cowboy 2.13",
    "elli": "elli 3.3",
    "wsref": "reference",
}
# The single-connection rows, run again in the one-core phase (bench/run.sh
# BENCH_PIN: each server alone under taskset -c N, the client on N too), and
# the issue's targets on them: (workload, peer, Mustang / peer at least).
SINGLE = ["W1a", "W2b", "W3a", "W4a", "W6a"]
SINGLE_TARGETS = [("W1a", "cowboy", 1.5), ("W1a", "elli", 1.2), ("W2b", "cowboy", 1.5),
                  ("W4a", "cowboy", 1.3), ("W6a", "cowboy", 1.3)]
SINGLE_BASIS = ("The checks use the one-core figures when the one-core phase ran (BENCH_PIN:"
                " they are the reproducible ones), else the kernel-placed ones.")
# Figures whose spread (min-max over the rounds) the report shows.
SPREAD_KEYS = ("req_s", "mb_s", "frames_s", "seconds", "p99_ms")
# The peers measured in the same run (bench/run.sh, MUSTANG_PEERS).
PEERS = ("cowboy", "elli")
MIB = 1048576
BODY_MB = MIB / 1e6  # one 1 MiB request body in MB (10^6 bytes): 1.048576

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def to_ms(num, unit):
    return float(num) * {"us": 1e-3, "ms": 1.0, "s": 1e3, "m": 6e4, "h": 3.6e6}[unit]


def to_mib(num, unit):
    # wrk prints binary units: B, KB, MB, GB, TB with a 1024 base.
    return float(num) * {"B": 1, "KB": 1024, "MB": MIB, "GB": MIB * 1024,
                         "TB": MIB * MIB}[unit] / MIB


def parse_wrk(text):
    r = {"tool": "wrk", "errors": []}
    m = re.search(r"^Requests/sec:\s+([\d.]+)", text, re.M)
    if m:
        r["req_s"] = float(m.group(1))
    m = re.search(r"^Transfer/sec:\s+([\d.]+)([KMGT]?B)", text, re.M)
    if m:
        r["mb_s"] = to_mib(m.group(1), m.group(2))
    m = re.search(r"^\s+99%\s+([\d.]+)(us|ms|s|m|h)\s*$", text, re.M)
    if m:
        r["p99_ms"] = to_ms(m.group(1), m.group(2))
    m = re.search(r"^\s+50%\s+([\d.]+)(us|ms|s|m|h)\s*$", text, re.M)
    if m:
        r["p50_ms"] = to_ms(m.group(1), m.group(2))
    m = re.search(r"^\s+(\d+) requests in ([\d.]+)(us|ms|s|m|h)", text, re.M)
    if m:
        r["requests"] = int(m.group(1))
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    if m:
        n = sum(int(x) for x in m.groups())
        if n:
            r["errors"].append("socket errors %s" % "/".join(m.groups()))
    m = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    if m and int(m.group(1)):
        r["errors"].append("%s non-2xx" % m.group(1))
    return r


def median(values):
    values = sorted(v for v in values if isinstance(v, (int, float)))
    if not values:
        return None
    n = len(values)
    return values[n // 2] if n % 2 else (values[n // 2 - 1] + values[n // 2]) / 2


def parse_h2load(text):
    r = {"tool": "h2load", "errors": []}
    cmd = text.splitlines()[0]
    m = re.search(r"^finished in ([\d.]+)(us|ms|s), ([\d.]+) req/s, ([\d.]+)([KMGT]?B)/s", text, re.M)
    if m:
        r["req_s"] = float(m.group(3))
        if " -d " in cmd:
            # MB/s of request bodies: each request carries one 1 MiB body.
            r["mb_s"] = r["req_s"] * BODY_MB
        else:
            # received bytes per second (h2load's units are 1024-based)
            r["mb_s"] = to_mib(m.group(4), m.group(5))
    # The protocol really spoken: h2load falls back to HTTP/1.1 when a
    # server refuses h2 (or ALPN picks http/1.1).
    want = "http/1.1" if " --h1 " in cmd else ("h2" if "https://" in cmd else "h2c")
    m = re.search(r"^Application protocol: (\S+)", text, re.M)
    if m:
        r["protocol"] = m.group(1)
        if m.group(1) != want:
            r["errors"].append("protocol %s, not %s" % (m.group(1), want))
    m = re.search(r"^requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, "
                  r"(\d+) failed, (\d+) errored, (\d+) timeout", text, re.M)
    if m:
        total, _, done, ok, failed, errored, timeout = (int(x) for x in m.groups())
        r["requests"] = done
        if ok != total or failed or errored or timeout:
            r["errors"].append("%d/%d succeeded, %d failed, %d errored, %d timeout"
                               % (ok, total, failed, errored, timeout))
    m = re.search(r"^status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx", text, re.M)
    if m:
        bad = sum(int(x) for x in m.groups()[1:])
        if bad:
            r["errors"].append("%d non-2xx" % bad)
    return r


def parse_curl(text):
    """A timed upload (bench/lib.sh upload_run): seconds, and errors when the
    status is not 200, the protocol is not the expected one or the answer
    is not the byte count sent."""
    r = {"tool": "curl", "errors": []}
    f = dict(re.findall(r"^([a-z_]+): ?(.*)$", text, re.M))
    expected = int(f.get("expected_bytes", "0") or 0)
    r["bytes"] = expected
    if f.get("http_code") != "200":
        r["errors"].append("status %s" % (f.get("http_code") or "none"))
    if f.get("http_version") != f.get("expected_version"):
        r["errors"].append("HTTP/%s, not HTTP/%s" % (f.get("http_version") or "?",
                                                       f.get("expected_version")))
    if f.get("response", "").strip() != str(expected):
        r["errors"].append("answered %r, not %d" % (f.get("response", "")[:24], expected))
    if f.get("size_upload") and f["size_upload"] != str(expected):
        r["errors"].append("sent %s bytes" % f["size_upload"])
    if "time_total" in f and not r["errors"]:
        r["seconds"] = float(f["time_total"])
        if r["seconds"] > 0:
            r["mb_s"] = expected / 1e6 / r["seconds"]
    return r


def parse_wsload(text):
    """bench/wsload's JSON line: frames/s, MB/s (10^6 bytes of payload echoed
    per second), latency percentiles, and errors (a mismatched echo, a
    refused handshake or deflate, a closed connection)."""
    r = {"tool": "wsload", "errors": []}
    line = next((l for l in text.splitlines() if l.startswith("{")), None)
    if line is None:
        r["errors"].append("no wsload output")
        return r
    try:
        d = json.loads(line)
    except ValueError:
        r["errors"].append("unreadable wsload output")
        return r
    if d.get("errors"):
        r["errors"].append("%s error(s): %s" % (d["errors"], d.get("error", "?")[:160]))
        return r
    for key in ("frames_s", "mb_s", "p50_us", "p99_us", "frames", "seconds"):
        if isinstance(d.get(key), (int, float)):
            r[key] = float(d[key])
    if "p99_us" in r:
        r["p99_ms"] = r["p99_us"] / 1e3
    if "p50_us" in r:
        r["p50_ms"] = r["p50_us"] / 1e3
    if d.get("extensions"):
        r["extensions"] = d["extensions"]
    if not r.get("frames"):
        r["errors"].append("no frames echoed")
    return r


def parse_paced(text):
    """bench/wsload -mode paced's JSON line (W7): completed req/s and the
    latency percentiles from the scheduled send times. The requests that
    failed (connect, reset, timeout, wrong status or length) are a figure of
    the row ("failures", with their kinds), not an error of the run: only a
    run without a result is one."""
    r = {"tool": "paced", "errors": []}
    line = next((l for l in text.splitlines() if l.startswith("{")), None)
    try:
        d = json.loads(line) if line else None
    except ValueError:
        d = None
    if not d or d.get("mode") != "paced":
        r["errors"].append(("wsload: %s" % d["error"][:160]) if d and d.get("error")
                           else "no paced result")
        return r
    for key in ("req_s", "p50_ms", "p99_ms", "p999_ms", "max_ms", "conns", "requests",
                "scheduled", "client_cpu_s", "lag_p99_ms", "connect_failed", "seconds",
                "closed_by_server"):
        if isinstance(d.get(key), (int, float)):
            r[key] = float(d[key])
    r["failures"] = float(d.get("errors") or 0)
    for kind in W7_ERROR_KINDS:
        r["fail_" + kind] = float(d.get("errors_" + kind) or 0)
    if d.get("error"):
        r["failure_text"] = d["error"]
    m = re.search(r"^# loadavg: ([\d.]+)", text, re.M)
    if m:
        r["loadavg"] = float(m.group(1))
    m = re.search(r"^# server_cpu_s: ([\d.]+)", text, re.M)
    if m:
        r["server_cpu_s"] = float(m.group(1))
    if not r.get("requests"):
        r["errors"].append("no request completed")
    return r


RAW_NAME = re.compile(r"^(W6m-[a-z]+-[a-z0-9]+-[0-9]+k-h[12]-[a-z]+|W\d[a-z]?)-([a-z0-9-]+?)"
                      r"(?:\.r(\d+))?\.txt$")


def load(resdir):
    """One result per (workload, server): the median of the rounds
    (files W1c-nginx.r1.txt, W1c-nginx.r2.txt, ...; a plain W1c-nginx.txt
    is one round), metric by metric, with every round's errors kept."""
    rounds = {}
    for name in sorted(os.listdir(resdir)):
        m = RAW_NAME.match(name)
        if not m:
            continue
        wl, server, _ = m.groups()
        with open(os.path.join(resdir, name), errors="replace") as f:
            text = ANSI.sub("", f.read())
        first = text.splitlines()[0] if text else ""
        if "wsload" in first and "-mode paced" in first:
            r = parse_paced(text)
        elif "wsload" in first:
            r = parse_wsload(text)
        elif "h2load" in first:
            r = parse_h2load(text)
        elif "curl" in first:
            r = parse_curl(text)
        else:
            r = parse_wrk(text)
        m = re.search(r"^# exit: (\d+)", text, re.M)
        if m and m.group(1) != "0":
            r["errors"].append("exit %s" % m.group(1))
        m = re.search(r"^# placement: (.+)$", text, re.M)
        if m:
            r["placement"] = m.group(1).strip()
        if ("req_s" not in r and "seconds" not in r and "frames_s" not in r
                and not r["errors"]):
            r["errors"].append("no result parsed")
        rounds.setdefault(wl, {}).setdefault(server, []).append(r)
    results = {}
    for wl, servers in rounds.items():
        for server, rs in servers.items():
            # A round with errors (e.g. the server was killed under it) is
            # no figure: the median is over the other rounds, and the row
            # is an error only when no round is clean. The failed rounds'
            # errors are kept as "failed".
            ok = [r for r in rs if not r["errors"]]
            failed = [e for r in rs for e in r["errors"]]
            merged = {"errors": [] if ok else failed, "rounds": len(ok or rs),
                      "failed": failed if ok else []}
            rs = ok or rs
            for key in set(k for r in rs for k in r if k != "errors"):
                vals = [r.get(key) for r in rs if isinstance(r.get(key), (int, float))]
                v = median(vals)
                if v is not None:
                    merged[key] = v
                    if key in SPREAD_KEYS:
                        merged.setdefault("min", {})[key] = min(vals)
                        merged.setdefault("max", {})[key] = max(vals)
                elif key in ("extensions", "failure_text", "placement"):
                    merged[key] = next(r[key] for r in rs if key in r)
            results.setdefault(wl, {})[server] = merged
    return results


def header(p, hdr):
    """A text table's header line and its rule."""
    p(hdr)
    p("-" * len(hdr))


def present(results, order, servers):
    """(workload, server, row) for each row of results, in that order."""
    for wl in order:
        for s in servers:
            r = results.get(wl, {}).get(s)
            if r is not None:
                yield wl, s, r


def fmt(v, spec, none="-"):
    return none if v is None else format(v, spec)


def errors_text(r):
    """A row's errors, or those of its failed rounds (left out of the median)."""
    if r["errors"]:
        return "; ".join(r["errors"])
    if r.get("failed"):
        return "%d round(s) left out: %s" % (len(r["failed"]), "; ".join(r["failed"])[:120])
    return "-"


def main_figure(r):
    """The figure a row is compared on: (key, value), a rate (frames/s,
    req/s) or, for W5 uploads, seconds; (None, None) when there is none."""
    for key in ("frames_s", "req_s", "seconds"):
        if r and isinstance(r.get(key), (int, float)) and r[key] > 0:
            return key, r[key]
    return None, None


def ratio(r, q):
    """r over q on their main figure, ratio of the medians, >1 = r better:
    rates divided, times inverted. None when either has errors."""
    if not r or not q or r["errors"] or q["errors"]:
        return None
    key, v = main_figure(r)
    if key is None or not q.get(key):
        return None
    return q[key] / v if key == "seconds" else v / q[key]


def x_peer(results, wl, s, peer):
    """Server s over a peer measured in the same run on the same workload."""
    if s == peer:
        return None
    return ratio(results.get(wl, {}).get(s), results.get(wl, {}).get(peer))


def spread(r, spec):
    """min-max over the rounds of a row's main figure."""
    key, _ = main_figure(r)
    if key is None or key not in r.get("min", {}):
        return "-"
    if r["min"][key] == r["max"][key]:
        return format(r["min"][key], spec)
    return "%s-%s" % (format(r["min"][key], spec), format(r["max"][key], spec))


def h2_checks(p, s, res, x_nginx, x_cowboy):
    """Issue 3 (HTTP/2): W5 answers, W5b/W5a <= 1.5, and BENCH.md's HTTP/2
    goals for information."""
    lines = []
    out, p = p, lines.append
    w5a, w5b, w5c = (res[w] for w in ("W5a", "W5b", "W5c"))
    for wl, r in (("W5a", w5a), ("W5b", w5b), ("W5c", w5c)):
        if r and r["errors"]:
            p("  [FAIL] %s upload: %s" % (wl, "; ".join(r["errors"])))
    ta = w5a.get("seconds") if w5a else None
    tb = w5b.get("seconds") if w5b else None
    tc = w5c.get("seconds") if w5c else None
    if w5b:
        ok = None if (ta is None or tb is None) else tb <= ACC_W5B_OVER_W5A * ta
        p("  [%s] %-38s %s" % ("n/a " if ok is None else ("PASS" if ok else "FAIL"),
                               "W5b h2c time <= 1.5 x W5a h1 time",
                               "-" if ok is None else "W5b/W5a = %.2f (%.3f s / %.3f s)"
                               % (tb / ta, tb, ta)))
        if ok is not None:
            p("  => %s" % ("PASS" if ok else "FAIL"))
    if tc is not None and ta:
        p("  W5c (h2/TLS) %.3f s = %.2f x W5a" % (tc, tc / ta))
    goals = []
    for wl, goal in (("W2a", GOAL_W2A_X_COWBOY), ("W4a", GOAL_W4_X_COWBOY),
                     ("W4b", GOAL_W4_X_COWBOY), ("W5a", GOAL_W5_X_COWBOY),
                     ("W5b", GOAL_W5_X_COWBOY)):
        xc = x_cowboy(wl, res[wl]) if res[wl] else None
        if xc is not None:
            goals.append("%s %.2fx/%.1fx %s" % (wl, xc, goal, "met" if xc >= goal else "not met"))
    if goals:
        p("  " + OLD_GOALS + " HTTP/2, x Cowboy 2.13: " + ", ".join(goals))
    xn = x_nginx("W2a", res["W2a"]) if res["W2a"] else None
    if xn is not None:
        p("  W2a %.2fx nginx (BENCH.md goal >= 0.60x)" % xn)
    if lines:
        out("HTTP/2 and uploads, %s:" % SERVER_LABEL.get(s, s))
        for line in lines:
            out(line)
        out("")


def is_ws(wl):
    return wl.startswith("W6")


def base_ratio(base, wl, s, r):
    """Ratio of a figure to the baseline run's (>1 = better now): rates
    (req/s, frames/s) divided, times (W5 seconds) inverted."""
    b = (base or {}).get(wl, {}).get(s)
    if not b or b["errors"] or not r or r["errors"]:
        return None
    for key in ("frames_s", "req_s"):
        if r.get(key) and b.get(key):
            return r[key] / b[key]
    if r.get("seconds") and b.get("seconds"):
        return b["seconds"] / r["seconds"]
    return None


def main():
    resdir = sys.argv[1]
    results = load(resdir)
    basedir = sys.argv[2] if len(sys.argv) > 2 and sys.argv[2] else None
    base = load(basedir) if basedir else None
    http_wls = [w for w in results if not is_ws(w) and w != "W7"]
    servers = [s for s in SERVER_ORDER if any(s in results.get(w, {}) for w in WORKLOADS)]
    servers += sorted({s for w in http_wls for s in results[w]} - set(servers))

    ngx_w1c = results.get("W1c", {}).get("nginx", {}).get("req_s")
    scale = ngx_w1c / NGINX_REF_W1C if ngx_w1c else None
    ngx_w2a = results.get("W2a", {}).get("nginx", {}).get("req_s")
    scale_h2 = ngx_w2a / NGINX_REF_W2A if ngx_w2a else None
    fallbacks = set()
    measured = set()  # workloads compared with Cowboy measured in this run

    def scale_for(wl):
        own, other = (scale_h2, scale) if wl in H2_WORKLOADS else (scale, scale_h2)
        if own is None and other is not None:
            fallbacks.add(wl)
        return own if own is not None else other

    def cowboy_scaled(wl):
        sc = scale_for(wl)
        if not sc or wl not in COWBOY:
            return None
        value, unit = COWBOY[wl]
        # a faster machine (bigger nginx figure) means a shorter time
        return value / sc if unit == "s" else value * sc

    def x_cowboy(wl, r):
        """Ratio to Cowboy measured in this run (bench/run.sh with the peers),
        else to its BENCH.md figure scaled by nginx (marked "*")."""
        if "cowboy" in results.get(wl, {}):
            measured.add(wl)
            return ratio(r, results[wl]["cowboy"]) if r is not results[wl]["cowboy"] else None
        if wl not in COWBOY or not r:
            return None
        unit = COWBOY[wl][1]
        if unit == "s" and r.get("bytes") != W5_BYTES:
            return None  # Cowboy's figure is for 1 GiB
        cb = cowboy_scaled(wl)
        if cb is None:
            return None
        if unit == "s":
            v = r.get("seconds")
            return cb / v if v else None
        v = r.get("req_s") if unit == "req/s" else r.get("mb_s")
        return v / cb if v else None

    def x_nginx(wl, r):
        q = results.get(wl, {}).get("nginx")
        return ratio(r, q) if q is not r else None

    def cowboy_fig(wl, key):
        """Cowboy's figure for a target: measured in this run, else scaled."""
        q = results.get(wl, {}).get("cowboy")
        if q is not None:
            return q.get(key)
        return cowboy_scaled(wl) if key != "p99_ms" else None

    out = []
    p = out.append
    if base is not None:
        p("Baseline (x base = this run / that run, >1 = better now): %s" % basedir)
    bcol = " %7s" % "x base" if base is not None else ""
    hdr = ("%-5s %-15s %9s %-13s %8s %8s %13s %8s %6s %6s%s  %s"
           % ("work", "server", "req/s", "min-max", "MB/s", "p99 ms", "seconds", "x Cowboy",
              "x Elli", "x nginx", bcol, "errors"))
    rows = []
    http_order = [w for w in WORKLOADS if w in results] + sorted(set(http_wls) - set(WORKLOADS))
    if http_order:
        header(p, hdr)
    for wl, s, r in present(results, http_order, servers):
        mine = s.startswith("mustang")
        xn = x_nginx(wl, r) if mine else None
        xc = x_cowboy(wl, r) if mine else None
        xe = x_peer(results, wl, s, "elli") if mine else None
        xb = base_ratio(base, wl, s, r)
        scaled = xc is not None and wl not in measured
        rows.append({"workload": wl, "server": s, **r, "x_nginx": xn, "x_cowboy": xc,
                     "x_cowboy_scaled": scaled, "x_elli": xe, "x_base": xb})
        sec = r.get("seconds")
        p("%-5s %-15s %9s %-13s %8s %8s %13s %8s %6s %6s%s  %s" % (
            wl, SERVER_LABEL.get(s, s), fmt(r.get("req_s"), ".0f"),
            spread(r, ".0f") if sec is None else "", fmt(r.get("mb_s"), ".1f"),
            fmt(r.get("p99_ms"), ".3f"),
            "-" if sec is None else "%.3f %s" % (sec, spread(r, ".2f")),
            fmt(xc, ".2f") + ("*" if scaled else ""), fmt(xe, ".2f"), fmt(xn, ".2f"),
            " %7s" % fmt(xb, ".2f") if base is not None else "",
            errors_text(r)))
    p("")
    if http_order:
        rounds = max((r.get("rounds", 1) for servers in results.values() for r in servers.values()), default=1)
        p("Figures are medians of %d interleaved round(s) (BENCH_ROUNDS); min-max: the"
          " spread of req/s (seconds for W5) over the rounds. x Cowboy, x Elli, x nginx:"
          " Mustang's median / the peer's median in this run (>1 = Mustang better; W5: time"
          " inverted); Cowboy serves W2, W4 and W5b on its port with the HTTP/2 frame-rate"
          " limit raised." % rounds)
        p("MB/s: W1* = wrk Transfer/sec, W2* = h2load's received bytes/s (responses, MiB/s);"
          " W3*, W4* = h2load req/s x 1.048576 (1 MiB request bodies, in MB/s);"
          " W5* = bytes uploaded / seconds (MB/s). p99 from wrk --latency (h2load gives none).")
        p("seconds: W5* wall time of the whole curl upload (curl time_total).")
        p("* (only without Cowboy in the run) x Cowboy = Cowboy 2.13's BENCH.md figure scaled by nginx in this run, compared on"
          " req/s (W1, W2), MB/s (W3, W4) or seconds (W5: Cowboy time / Mustang time);"
          " >1 = faster than Cowboy. Scale: nginx W1c / 176.7k for HTTP/1.1, nginx W2a /"
          " 147.9k for HTTP/2 (W2, W4, W5b).")
        if any(results.get(w, {}).get("nginx") for w in ("W4a", "W4b")):
            p("  nginx W4: POST /read_body reads the whole body (mirror_request_body, see"
              " bench/nginx.conf) and answers 200 \"ok\".")
        if fallbacks:
            p("  NOTE: %s scaled by the other protocol's nginx figure (the preferred one was"
              " not run)." % ", ".join(sorted(fallbacks)))
        p("")

        if measured:
            pass  # Cowboy ran beside Mustang: no need for scaled figures
        elif scale is None:
            p("Derived targets: n/a (no nginx W1c result in this run)")
        else:
            p("Derived targets (nginx W1c this run = %.0f req/s; scale = %.0f / 176.7k = %.3f):"
              % (ngx_w1c, ngx_w1c, scale))
            p("  W1c target          = 0.45 x nginx W1c      = %.0f req/s" % (ACC_W1C_X_NGINX * ngx_w1c))
            p("  Cowboy 2.13 scaled: W1a %.0f req/s (p99 %.2f ms, unscaled), W1b %.0f req/s,"
              " W1c %.0f req/s (p99 %.1f ms), W3a %.0f MB/s, W3b %.0f MB/s, W5a %.2f s"
              % (cowboy_scaled("W1a"), COWBOY_W1A_P99_MS, cowboy_scaled("W1b"),
                 cowboy_scaled("W1c"), COWBOY_W1C_P99_MS, cowboy_scaled("W3a"),
                 cowboy_scaled("W3b"), cowboy_scaled("W5a")))
        if scale_h2 is not None and not measured:
            p("Derived HTTP/2 targets (nginx W2a this run = %.0f req/s; scale = %.0f / 147.9k = %.3f):"
              % (ngx_w2a, ngx_w2a, scale_h2))
            p("  Cowboy 2.13 scaled: W2a %.0f req/s (goal 1.5x = %.0f), W2b %.0f req/s,"
              " W4a %.0f MB/s, W4b %.0f MB/s, W5b %.2f s"
              % (cowboy_scaled("W2a"), GOAL_W2A_X_COWBOY * cowboy_scaled("W2a"),
                 cowboy_scaled("W2b"), cowboy_scaled("W4a"), cowboy_scaled("W4b"),
                 cowboy_scaled("W5b")))
        p("")

    verdicts = {}
    for s in servers:
        if not s.startswith("mustang"):
            continue  # the checks are Mustang's
        res = {w: results.get(w, {}).get(s) for w in WORKLOADS}
        if any(res[w] for w in ("W2a", "W2b", "W4a", "W4b", "W5a", "W5b", "W5c")):
            h2_checks(p, s, res, x_nginx, x_cowboy)
        if not any(res[w] for w in ("W1a", "W1b", "W1c", "W3a", "W3b")):
            continue
        p("Acceptance, %s:" % SERVER_LABEL.get(s, s))
        checks = []

        def check(name, ok, detail):
            status = "n/a " if ok is None else ("PASS" if ok else "FAIL")
            checks.append((name, ok))
            p("  [%s] %-38s %s" % (status, name, detail))

        r = res["W1c"]
        xn = x_nginx("W1c", r) if r else None
        check("W1c >= 0.45 x nginx W1c",
              None if xn is None else xn >= ACC_W1C_X_NGINX,
              "-" if xn is None else "%.2fx nginx (%.0f vs target %.0f req/s)"
              % (xn, r["req_s"], ACC_W1C_X_NGINX * ngx_w1c))
        r = res["W1a"]
        p99 = r.get("p99_ms") if r else None
        cb_p99 = cowboy_fig("W1a", "p99_ms") or COWBOY_W1A_P99_MS
        check("W1a p99 <= Cowboy 2.13's (%.2f ms)" % cb_p99,
              None if p99 is None else p99 <= cb_p99,
              "-" if p99 is None else "p99 %.3f ms" % p99)
        r = res["W3a"]
        xc = x_cowboy("W3a", r) if r else None
        check("W3a >= 1.5 x Cowboy W3a",
              None if xc is None else xc >= ACC_W3A_X_COWBOY,
              "-" if xc is None else "%.2fx (%.0f MB/s vs target %.0f MB/s)"
              % (xc, r["mb_s"], ACC_W3A_X_COWBOY * cowboy_fig("W3a", "mb_s")))
        errs = [w for w, r in res.items() if r and r["errors"]]
        if errs:
            p("  [WARN] errors in %s: see the table" % ", ".join(errs))
        if any(ok is None for _, ok in checks):
            verdict = "INCOMPLETE"
        else:
            verdict = "PASS" if all(ok for _, ok in checks) else "FAIL"
        verdicts[s] = verdict
        p("  => %s" % verdict)

        goals = []
        for wl, goal in (("W1a", GOAL_W1A_X_COWBOY), ("W1c", GOAL_W1C_X_COWBOY),
                         ("W3a", GOAL_W3_X_COWBOY), ("W3b", GOAL_W3_X_COWBOY)):
            xc = x_cowboy(wl, res[wl]) if res[wl] else None
            if xc is not None:
                goals.append("%s %.2fx/%.1fx %s" % (wl, xc, goal, "met" if xc >= goal else "not met"))
        if goals:
            p("  " + OLD_GOALS + ", x Cowboy 2.13: " + ", ".join(goals))
        p("")

    ws_rows = ws_report(p, resdir, results, base, basedir, scale_for, fallbacks)
    onedir = os.path.join(resdir, "onecore")
    one = load(onedir) if os.path.isdir(onedir) else {}
    onecore_rows, onecore_cpu = onecore_report(p, one)
    single = single_targets(p, results, one)
    w7_rows, w7_target, w7_scale = w7_report(p, resdir, results)
    idle_path = idle_report_path(resdir)
    targets = issue_targets(p, results, one, single, w7_target, load_idle(idle_path), idle_path)

    with open(os.path.join(resdir, "results.json"), "w") as f:
        json.dump({"nginx_w1c": ngx_w1c, "scale": scale, "nginx_w2a": ngx_w2a,
                   "scale_h2": scale_h2, "rows": rows, "ws_rows": ws_rows,
                   "w7_rows": w7_rows, "w7_target": w7_target, "w7_scale": w7_scale,
                   "onecore_rows": onecore_rows, "onecore_cpu": onecore_cpu,
                   "single_targets": single, "issue_targets": targets,
                   "baseline": basedir, "acceptance": verdicts}, f, indent=1)
    print("\n".join(out))


def ws_report(p, resdir, results, base, basedir, scale_for, fallbacks):
    """The Websocket table (W6a-W6f, then the W6m matrix): frames/s and MB/s
    with ratios to the reference server (same workload, same run), to
    Mustang's own HTTP/1.1 row (h2 rows, which have no reference), to Cowboy
    2.13 scaled by nginx (W6a-W6f), and to the baseline run."""
    order = [w for w in WS_BENCH + WS_MATRIX if w in results]
    order += sorted(w for w in results if is_ws(w) and w not in order)
    if not order:
        return []
    fell_back = set()
    measured = set()
    ws_servers = ["mustang", "cowboy", "wsref"]
    ws_servers += sorted({s for w in order for s in results[w]} - set(ws_servers))

    def cowboy(wl):
        if wl not in WS_COWBOY:
            return None
        sc = scale_for(wl)
        if sc is None:
            return None
        if wl in fallbacks:
            fell_back.add(wl)
        return WS_COWBOY[wl][0] * sc

    def x_cowboy(wl, r):
        if "cowboy" in results.get(wl, {}):
            measured.add(wl)
            return ratio(r, results[wl]["cowboy"]) if r is not results[wl]["cowboy"] else None
        cb = cowboy(wl)
        if cb is None or not r or r["errors"]:
            return None
        v = r.get("frames_s") if WS_COWBOY[wl][1] == "frames/s" else r.get("mb_s")
        return v / cb if v else None

    def fig(wl, s, key="frames_s"):
        r = results.get(wl, {}).get(s)
        return r.get(key) if r and not r["errors"] else None

    bcol = " %6s" % "x base" if base is not None else ""
    hdr = ("%-30s %-9s %9s %-13s %8s %8s %8s %6s %6s %9s%s  %s"
           % ("work", "server", "frames/s", "min-max", "MB/s", "p50 ms", "p99 ms", "x ref",
              "x h1", "x Cowboy", bcol, "errors"))
    p("Websocket (bench/wsload; rows without deflate unless named -deflate; HTTP/1.1 unless -h2):")
    header(p, hdr)
    rows = []
    for wl, s, r in present(results, order, ws_servers):
        ref = fig(wl, "wsref")
        v = fig(wl, s)
        xr = v / ref if (s == "mustang" and ref and v) else None
        xh = None
        if "-h2-" in wl:
            h1 = fig(wl.replace("-h2-", "-h1-"), s)
            xh = v / h1 if (h1 and v) else None
        xc = x_cowboy(wl, r) if s == "mustang" else None
        scaled = xc is not None and wl not in measured
        xb = base_ratio(base, wl, s, r)
        name = wl if wl not in WS_BENCH_DESC else "%s %s" % (wl, WS_BENCH_DESC[wl])
        rows.append({"workload": wl, "server": s, **r, "x_ref": xr, "x_h1": xh,
                     "x_cowboy": xc, "x_cowboy_scaled": scaled, "x_base": xb})
        p("%-30s %-9s %9s %-13s %8s %8s %8s %6s %6s %9s%s  %s" % (
            name[:30], WS_LABEL.get(s, s), fmt(r.get("frames_s"), ".0f"), spread(r, ".0f"),
            fmt(r.get("mb_s"), ".1f"), fmt(r.get("p50_ms"), ".3f"),
            fmt(r.get("p99_ms"), ".3f"), fmt(xr, ".2f"), fmt(xh, ".2f"),
            fmt(xc, ".2f") + ("*" if scaled else ""),
            " %6s" % fmt(xb, ".2f") if base is not None else "",
            errors_text(r)))
    p("")
    rounds = max((r.get("rounds", 1) for w in order for r in results[w].values()), default=1)
    p("Medians of %d round(s) (BENCH_ROUNDS)." % rounds)
    p("frames/s: messages echoed per second (each verified byte for byte); MB/s: payload bytes"
      " echoed per second (10^6); p50/p99: from a message's write to its echo. echo = one"
      " message in flight; send = a window of messages in flight (256 of 1 KiB, 16 of 64 KiB).")
    p("x ref: / the reference server (bench/wsref, HTTP/1.1 only) in this run; x h1: h2 row /"
      " the same workload over HTTP/1.1 on the same server (no reference speaks RFC 8441).")
    p("x Cowboy: / Cowboy 2.13 measured in this run (frames/s), or, marked *, / its BENCH.md"
      " figure x (nginx W1c this run / 176.7k), on frames/s (W6a, W6b, W6c, W6f) or MB/s (W6d, W6e).")
    lib = None
    try:
        with open(os.path.join(resdir, "meta.txt")) as f:
            m = re.search(r"BENCH_WSREF_LIB=(\S+)", f.read())
            lib = m.group(1) if m else None
    except OSError:
        pass
    if any("wsref" in results[w] for w in order):
        p("  reference: %s" % {
            "auto": "bench/wsref -lib auto: gorilla/websocket, or coder/websocket (context takeover"
                    " both ways) on -deflate rows",
            "gorilla": "bench/wsref -lib gorilla (deflate without context takeover)",
            "coder": "bench/wsref -lib coder (deflate with context takeover)",
            "node": "Node ws (bench/wsref/ws_node.js; deflate with context takeover)",
        }.get(lib, "see meta.txt (BENCH_WSREF_LIB)"))
    goals, notes = [], []
    for wl in WS_BENCH:
        r = results.get(wl, {}).get("mustang")
        xc = x_cowboy(wl, r) if r else None
        if xc is not None:
            goals.append("%s %.2fx/%.1fx %s" % (wl, xc, WS_GOALS[wl], "met" if xc >= WS_GOALS[wl] else "not met"))
        elif r and not r["errors"] and cowboy(wl) is None:
            notes.append(wl)
    if goals:
        p("  " + OLD_GOALS + " Websocket, mustang x Cowboy 2.13: " + ", ".join(goals))
    for b, t, key, unit in (("W6b", "W6c", "frames_s", "frames/s"), ("W6d", "W6e", "mb_s", "MB/s")):
        vb, vt = fig(b, "mustang", key), fig(t, "mustang", key)
        if vb and vt:
            p("  text within 1.5x of binary: %s/%s = %.2f (%s) %s" % (
                b, t, vb / vt, unit, "met" if vb / vt <= 1.5 else "not met"))
    if fell_back:
        p("  NOTE: %s scaled by nginx W2a / 147.9k (no nginx W1c in this run)." % ", ".join(sorted(fell_back)))
    if notes:
        p("  NOTE: no nginx W1c or W2a in this run: no Cowboy ratio for %s (add W1c)." % ", ".join(notes))
    if base is not None:
        missing = [w for w in order if w not in base]
        if missing:
            p("  baseline %s has no %s" % (basedir, ", ".join(missing[:6]) + (" ..." if len(missing) > 6 else "")))
    p("")
    return rows


def onecore_report(p, one):
    """The one-core phase's table (bench/run.sh BENCH_PIN): the same figures
    as the kernel-placed tables, with Mustang's ratios to each server
    measured in that phase. Returns its rows and the CPU ("0"), or None."""
    order = [w for w in SINGLE if w in one] + sorted(set(one) - set(SINGLE))
    if not order:
        return [], None
    places = {r.get("placement") for w in order for r in one[w].values()} - {None}
    cpus = sorted(m.group(1) for m in (re.search(r"cpu=(\S+)", x) for x in places) if m)
    cpu = ",".join(cpus) if cpus else None
    servers = [s for s in SERVER_ORDER + ["wsref"] if any(s in one[w] for w in order)]
    servers += sorted({s for w in order for s in one[w]} - set(servers))
    hdr = ("%-5s %-15s %9s %-8s %-13s %8s %8s %8s %6s %6s %6s  %s"
           % ("work", "server", "median", "unit", "min-max", "MB/s", "p99 ms", "x Cowboy",
              "x Elli", "x nginx", "x ref", "errors"))
    p("Single connection, one core (client and server on CPU %s, BENCH_PIN):" % (cpu or "?"))
    header(p, hdr)
    rows = []
    for wl, s, r in present(one, order, servers):
        mine = s == "mustang"
        xs = {k: x_peer(one, wl, s, peer) if mine else None
              for k, peer in (("x_cowboy", "cowboy"), ("x_elli", "elli"), ("x_nginx", "nginx"),
                              ("x_ref", "wsref"))}
        rows.append({"workload": wl, "server": s, **r, **xs})
        key, v = main_figure(r)
        p("%-5s %-15s %9s %-8s %-13s %8s %8s %8s %6s %6s %6s  %s" % (
            wl, SERVER_LABEL.get(s, s), fmt(v, ".0f"),
            {"frames_s": "frames/s", "req_s": "req/s", "seconds": "s"}.get(key, "-"),
            spread(r, ".0f"), fmt(r.get("mb_s"), ".1f"), fmt(r.get("p99_ms"), ".3f"),
            fmt(xs["x_cowboy"], ".2f"), fmt(xs["x_elli"], ".2f"), fmt(xs["x_nginx"], ".2f"),
            fmt(xs["x_ref"], ".2f"), errors_text(r)))
    p("")
    rounds = max((r.get("rounds", 1) for w in order for r in one[w].values()), default=1)
    p("Medians of %d round(s); in each round every server ran alone, started under taskset -c %s"
      " (a VM then runs one scheduler), with the client on the same CPU; server order rotated."
      " Ratios: Mustang's median / the other server's median in this phase." % (rounds, cpu or "?"))
    p("")
    return rows, cpu


def single_targets(p, results, one):
    """The issue's single-connection targets (SINGLE_TARGETS), each with its
    kernel-placed ratio (the interleaved rounds) and its one-core ratio; the
    check is on the one-core ratio when the one-core phase ran that workload,
    else on the kernel-placed one. Returns one dict per target."""
    out = []
    todo = [t for t in SINGLE_TARGETS if t[0] in results or t[0] in one]
    if not todo:
        return out
    p("Single-connection targets, mustang (Mustang / peer, medians; kernel-placed: the"
      " interleaved rounds; one-core: BENCH_PIN):")
    for wl, peer, goal in todo:
        kernel = x_peer(results, wl, "mustang", peer)
        onec = x_peer(one, wl, "mustang", peer)
        basis = "one-core" if wl in one else "kernel-placed"
        x = onec if basis == "one-core" else kernel
        ok = None if x is None else x >= goal
        out.append({"workload": wl, "peer": peer, "goal": goal, "kernel": kernel,
                    "one_core": onec, "basis": basis, "pass": ok})
        p("  [%s] %-38s kernel-placed %s, one-core %s: checked on %s" % (
            "n/a " if ok is None else ("PASS" if ok else "FAIL"),
            "%s >= %.1fx %s" % (wl, goal, SERVER_LABEL.get(peer, peer)),
            fmt(kernel, ".2f", "-") + ("x" if kernel is not None else ""),
            fmt(onec, ".2f", "-") + ("x" if onec is not None else ""), basis))
    p("  " + SINGLE_BASIS)
    p("")
    return out


# Issue 11 point 3, every target in the issue's order: (section of
# bench/targets.md, workload, kind, peer, goal). Kinds: "single" (the
# SINGLE_TARGETS check: one-core when the one-core phase ran the workload,
# else kernel-placed), "ratio" (Mustang / peer, the interleaved rounds),
# "p99" (Mustang's p99 / the peer's, at most goal), "w7" (W7's target) and
# "idle" (bench/idle_memory.sh's Mustang / Cowboy at 3 s, protocol as workload).
# The single-connection goals are SINGLE_TARGETS' own.
SINGLE_GOAL = {(wl, peer): goal for wl, peer, goal in SINGLE_TARGETS}
ISSUE_TARGETS = [
    ("W1a", "W1a", "single", "cowboy", SINGLE_GOAL["W1a", "cowboy"]),
    ("W1a", "W1a", "single", "elli", SINGLE_GOAL["W1a", "elli"]),
    ("W1c", "W1c", "ratio", "cowboy", 2.5), ("W1c", "W1c", "p99", "cowboy", 0.5),
    ("W2b", "W2b", "single", "cowboy", SINGLE_GOAL["W2b", "cowboy"]),
    ("W2a", "W2a", "ratio", "cowboy", 2.5), ("W3b", "W3b", "ratio", "cowboy", 1.5),
    ("W4a", "W4a", "single", "cowboy", SINGLE_GOAL["W4a", "cowboy"]),
    ("W4b", "W4b", "ratio", "cowboy", 1.3),
    ("W6a", "W6a", "single", "cowboy", SINGLE_GOAL["W6a", "cowboy"]),
    ("W6f", "W6f", "ratio", "cowboy", 1.3)]
ISSUE_TARGETS += [("W6b-W6e", wl, "ratio", "cowboy", 2.0) for wl in ("W6b", "W6c", "W6d", "W6e")]
ISSUE_TARGETS += [("W7", "W7", "w7", None, W7_TARGET_P99_MS)]
ISSUE_TARGETS += [("idle memory", proto, "idle", "cowboy", 0.5) for proto in ("h1", "h2c", "ws")]
PEER_NAME = {"cowboy": "Cowboy 2.13", "elli": "Elli 3.3"}
NOT_MEASURED = "not measured in this run"
ISSUE_BASIS = ("Ratios of Mustang's median to the peer's median in this run. Basis: one-core"
               " (the BENCH_PIN phase) or kernel-placed (the interleaved rounds); W1a, W2b, W4a"
               " and W6a are checked on one-core when that phase ran them.")
NO_ANALYSIS = "no analysis in bench/targets.md"


def targets_md_path():
    """The hand-written analysis of the targets not met: BENCH_TARGETS_MD,
    else bench/targets.md beside this script."""
    return (os.environ.get("BENCH_TARGETS_MD")
            or os.path.join(os.path.dirname(os.path.abspath(__file__)), "targets.md"))


def analysis_sections(path=None):
    """{heading: text} of the "## heading" sections of bench/targets.md (text
    stripped, "" when empty); {} without the file."""
    try:
        with open(path or targets_md_path()) as f:
            lines = f.read().splitlines()
    except OSError:
        return {}
    sections, cur = {}, None
    for line in lines:
        m = re.match(r"^## (.+?)\s*$", line)
        if m:
            cur = m.group(1)
            sections[cur] = []
        elif cur is not None:
            sections[cur].append(line)
    return {k: "\n".join(v).strip() for k, v in sections.items()}


def unmet_sections(targets):
    """The sections of bench/targets.md of the targets not met, once each,
    in the targets' order."""
    out = []
    for t in targets:
        if t["pass"] is False and t["section"] not in out:
            out.append(t["section"])
    return out


def idle_report_path(resdir):
    """bench/idle_memory.sh's report.md for the idle-memory targets:
    BENCH_IDLE_REPORT, else idle_memory.md in the results directory; None
    when neither exists."""
    path = os.environ.get("BENCH_IDLE_REPORT") or os.path.join(resdir, "idle_memory.md")
    return path if os.path.isfile(path) else None


def load_idle(path):
    """{protocol: (Mustang/Cowboy at 3 s, Mustang KiB, Cowboy KiB)} from
    bench/idle_memory.sh's table (columns "mustang 3 s", "cowboy 3 s",
    "mustang/cowboy 3 s"); a ratio the script could not give ("n/a
    (closed)") is None."""
    out = {}
    if not path:
        return out
    with open(path, errors="replace") as f:
        lines = f.read().splitlines()
    cols = None
    for line in lines:
        if not line.startswith("|"):
            cols = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0] == "protocol":
            cols = cells
        elif cols and len(cells) == len(cols) and not cells[0].startswith("---"):
            row = dict(zip(cols, cells))
            out[cells[0]] = tuple(
                float(m.group(1)) if m else None
                for m in (re.match(r"^(-?[\d.]+)", row.get(k, ""))
                          for k in ("mustang/cowboy 3 s", "mustang 3 s", "cowboy 3 s")))
    return out


def issue_targets(p, results, one, single, w7_target, idle, idle_path):
    """Every target of issue 11 point 3 (ISSUE_TARGETS) with its basis,
    measured figure and result (pass True / False, None: not measured),
    and which of the targets not met have an analysis in bench/targets.md."""
    out = []
    for section, wl, kind, peer, goal in ISSUE_TARGETS:
        name = PEER_NAME.get(peer, peer)
        basis, value, measured, note, row = "kernel-placed", None, "-", None, None
        if kind == "single":
            # single_targets/3 checked it already: its basis, figure and verdict
            text = "%s >= %.1fx %s" % (wl, goal, name)
            row = next((t for t in single if (t["workload"], t["peer"]) == (wl, peer)), None)
            basis = row["basis"] if row else "-"
            value = row and (row["one_core"] if basis == "one-core" else row["kernel"])
        elif kind == "ratio":
            text = "%s >= %.1fx %s" % (wl, goal, name)
            value = x_peer(results, wl, "mustang", peer)
        elif kind == "p99":
            text = "%s p99 <= %.1fx %s's p99" % (wl, goal, name)
            m, q = (results.get(wl, {}).get(s) for s in ("mustang", peer))
            if m and q and not m["errors"] and not q["errors"] and m.get("p99_ms") and q.get("p99_ms"):
                value = m["p99_ms"] / q["p99_ms"]
                measured = "%.2fx (%.2f vs %.2f ms)" % (value, m["p99_ms"], q["p99_ms"])
        elif kind == "w7":
            text = "W7 p99 <= %.1f ms at %d conns, no failure" % (goal, W7_TARGET_CONNS)
            basis = "-"
            if w7_target and w7_target["p99_ms"] is not None:
                value = w7_target["p99_ms"]
                measured = "p99 %.2f ms, %.0f conns, %.0f failed" % (
                    value, w7_target["conns"] or 0, w7_target["failures"] or 0)
                if w7_target["pass"] is None:
                    note = "the target is for %d connections (BENCH_W7_CONNS)" % W7_TARGET_CONNS
        else:
            text = "idle memory %s at 3 s <= %.1fx %s" % (wl, goal, name)
            basis = "bench/idle_memory.sh"
            value, mine, theirs = idle.get(wl, (None, None, None))
            if value is not None:
                measured = "%.2fx (%.1f vs %.1f KiB)" % (value, mine, theirs)
            else:
                note = "bench/idle_memory.sh"
        if value is None:
            basis = "-"
        elif kind in ("single", "ratio"):
            measured = "%.2fx" % value
        if value is None or note:
            ok = None
        elif kind == "w7":
            ok = w7_target["pass"]
        elif kind == "single":
            ok = row["pass"]
        elif kind in ("p99", "idle"):
            ok = value <= goal
        else:
            ok = value >= goal
        if ok is None and note is None:
            r = results.get(wl, {}).get("mustang") if kind != "idle" else None
            note = "errors: see the table" if r and r["errors"] else None
        result = ({True: "met", False: "not met"}[ok] if ok is not None
                  else NOT_MEASURED + (" (%s)" % note if note else ""))
        out.append({"section": section, "workload": wl, "kind": kind, "peer": peer, "goal": goal,
                    "target": text, "basis": basis, "value": value, "measured": measured,
                    "pass": ok, "result": result})
    hdr = "%-46s %-20s %-34s %s" % ("target", "basis", "measured", "result")
    p("Targets (issue 11), mustang:")
    header(p, hdr)
    for t in out:
        p("%-46s %-20s %-34s %s" % (t["target"], t["basis"], t["measured"], t["result"]))
    p("  " + ISSUE_BASIS)
    if idle_path:
        p("  idle memory: %s" % idle_path)
    unmet = unmet_sections(out)
    if unmet:
        sections = analysis_sections()
        have = [s for s in unmet if sections.get(s)]
        lacking = [s for s in unmet if not sections.get(s)]
        p("  Analysis of the targets not met (report.md, from %s): %s%s" % (
            targets_md_path(), ", ".join(have) or "none",
            "; %s for %s" % (NO_ANALYSIS, ", ".join(lacking)) if lacking else ""))
    else:
        p("  Every target measured in this run is met.")
    p("")
    return out


def failures_text(r):
    """A W7 row's failed requests: count and kinds, e.g. "12 (timeout 10, reset 2)"."""
    n = r.get("failures")
    if not n:
        return "0"
    kinds = ["%s %.0f" % (k, r["fail_" + k]) for k in W7_ERROR_KINDS if r.get("fail_" + k)]
    return "%.0f (%s)" % (n, ", ".join(kinds))


def w7_scale_load(resdir):
    """W7's connection curve: {conns: {server: row}} from scaling/w7-<n>-<server>.txt."""
    d = os.path.join(resdir, "scaling")
    curve = {}
    if not os.path.isdir(d):
        return curve
    for name in sorted(os.listdir(d)):
        m = re.match(r"w7-(\d+)-([a-z0-9-]+)\.txt$", name)
        if not m:
            continue
        with open(os.path.join(d, name), errors="replace") as f:
            r = parse_paced(ANSI.sub("", f.read()))
        curve.setdefault(int(m.group(1)), {})[m.group(2)] = r
    return curve


def w7_report(p, resdir, results):
    """W7, paced latency: one row per server (medians of the rounds of
    completed req/s, p50, p99 with its min-max, p99.9, max, failed
    requests), the target line (Mustang's p99 <= 101.5 ms at 10,000
    connections, no failed request) and the connection curve."""
    res = results.get("W7", {})
    curve = w7_scale_load(resdir)
    if not res and not curve:
        return [], None, {}
    rows = []
    target = None
    servers = [s for s in W7_SERVERS if s in res] + sorted(set(res) - set(W7_SERVERS))
    hdr = ("%-12s %6s %8s %8s %-22s %9s %9s %-28s %7s %7s %5s  %s"
           % ("server", "conns", "req/s", "p50 ms", "p99 ms (min-max)", "p99.9 ms", "max ms",
              "failed requests", "srv CPU", "cli CPU", "load", "errors"))
    p("W7 paced latency (wsload -mode paced: keep-alive HTTP/1.1, each connection GET /sleep"
      " once a second; latency from the scheduled send time):")
    header(p, hdr)
    for s in servers:
        r = res[s]
        rows.append({"workload": "W7", "server": s, **r})
        p99 = fmt(r.get("p99_ms"), ".2f")
        if r.get("min", {}).get("p99_ms") is not None and r["min"]["p99_ms"] != r["max"]["p99_ms"]:
            p99 += " (%.1f-%.1f)" % (r["min"]["p99_ms"], r["max"]["p99_ms"])
        p("%-12s %6s %8s %8s %-22s %9s %9s %-28s %7s %7s %5s  %s" % (
            SERVER_LABEL.get(s, s), fmt(r.get("conns"), ".0f"), fmt(r.get("req_s"), ".0f"),
            fmt(r.get("p50_ms"), ".2f"), p99, fmt(r.get("p999_ms"), ".2f"),
            fmt(r.get("max_ms"), ".1f"), failures_text(r)[:28], fmt(r.get("server_cpu_s"), ".1f"),
            fmt(r.get("client_cpu_s"), ".1f"),
            fmt(r.get("loadavg"), ".2f"), errors_text(r)))
    if res:
        p("")
        p("Medians of the rounds; failed requests: slots of the measured window that ended in a"
          " connect failure, reset, timeout (10 s) or wrong status/length, not in the latencies."
          " srv CPU, cli CPU: the server's and the client's CPU seconds over the run (connections,"
          " warm-up and measured seconds); load: 1-minute load average at its end.")
        m = res.get("mustang")
        if m is not None:
            ok = None
            if not m["errors"] and m.get("p99_ms") is not None:
                ok = m["p99_ms"] <= W7_TARGET_P99_MS and not m.get("failures")
            conns = m.get("conns")
            detail = "-" if ok is None else "p99 %.2f ms, %s failed request(s), %.0f connections" % (
                m["p99_ms"], failures_text(m), conns or 0)
            if ok is not None and conns != W7_TARGET_CONNS:
                detail += " (the target is for %d: BENCH_W7_CONNS)" % W7_TARGET_CONNS
                ok = None
            p("  [%s] %-38s %s" % ("n/a " if ok is None else ("PASS" if ok else "FAIL"),
                                   "W7 p99 <= %.1f ms at %d conns, no failure" % (W7_TARGET_P99_MS, W7_TARGET_CONNS),
                                   detail))
            target = {"p99_ms": m.get("p99_ms"), "conns": conns, "failures": m.get("failures"),
                      "target_p99_ms": W7_TARGET_P99_MS, "pass": ok}
            c = res.get("cowboy")
            if c and not c["errors"] and c.get("p99_ms"):
                p("  beside it, Cowboy 2.13: p99 %.2f ms, %s failed request(s)" % (c["p99_ms"], failures_text(c)))
    scale = {}
    if curve:
        p("")
        p("W7 connection curve (one run per point, scaling/w7-<conns>-<server>.txt): req/s, p99 ms, failed requests")
        ss = [s for s in W7_SERVERS if any(s in curve[n] for n in curve)]
        p("%-8s %s" % ("conns", " ".join("%-34s" % SERVER_LABEL.get(s, s) for s in ss)))
        for n in sorted(curve):
            cells = []
            for s in ss:
                r = curve[n].get(s)
                scale.setdefault(str(n), {})[s] = r
                if not r:
                    cells.append("%-34s" % "-")
                elif r["errors"]:
                    cells.append("%-34s" % ("error: " + "; ".join(r["errors"]))[:34])
                else:
                    cells.append("%-34s" % ("%.0f, p99 %.2f, %s" % (r["req_s"], r["p99_ms"], failures_text(r)))[:34])
            p("%-8d %s" % (n, " ".join(cells)))
    p("")
    return rows, target, scale


if __name__ == "__main__":
    main()
