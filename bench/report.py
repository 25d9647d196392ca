#!/usr/bin/env python3
"""Turn the raw outputs of bench/run.sh into a table, derived targets and
PASS/FAIL lines (stdlib only).

    bench/report.py _bench/results-YYYYmmdd-HHMMSS

Raw files are named <workload>-<server>.txt (wrk for W1*, h2load for W3*).
Servers: "nginx", "mustang" (MUSTANG_REQUEST_PROCESS=false) and "mustang-rp"
(MUSTANG_REQUEST_PROCESS=true). Writes results.json beside them and prints
the report on stdout.
"""
import json
import os
import re
import sys

# BENCH.md reference figures (Cowboy 2.13 and nginx measured in one sitting).
NGINX_REF_W1C = 176_700.0
COWBOY = {  # workload -> (value, unit of comparison)
    "W1a": (9_900.0, "req/s"),
    "W1b": (40_600.0, "req/s"),
    "W1c": (45_100.0, "req/s"),
    "W3a": (1252.0, "MB/s"),
    "W3b": (2076.0, "MB/s"),
}
COWBOY_W1A_P99_MS = 0.79
COWBOY_W1C_P99_MS = 3.9
# Acceptance for the issue (first version of the server).
ACC_W1C_X_NGINX = 0.45
ACC_W3A_X_COWBOY = 1.5
# Long-term targets from BENCH.md (informational).
GOAL_W1C_X_COWBOY = 2.0
GOAL_W1A_X_COWBOY = 1.7
GOAL_W3_X_COWBOY = 1.8

WORKLOADS = ["W1a", "W1b", "W1c", "W3a", "W3b"]
SERVER_ORDER = ["nginx", "mustang", "mustang-rp"]
SERVER_LABEL = {
    "nginx": "nginx",
    "mustang": "mustang rp=false",
    "mustang-rp": "mustang rp=true",
}
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


def parse_h2load(text):
    r = {"tool": "h2load", "errors": []}
    m = re.search(r"^finished in ([\d.]+)(us|ms|s), ([\d.]+) req/s", text, re.M)
    if m:
        r["req_s"] = float(m.group(3))
        # MB/s of request bodies: each request carries one 1 MiB body.
        r["mb_s"] = r["req_s"] * BODY_MB
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


def load(resdir):
    """One result per (workload, server): the median of the rounds
    (files W1c-nginx.r1.txt, W1c-nginx.r2.txt, ...; a plain W1c-nginx.txt
    is one round), metric by metric, with every round's errors kept."""
    rounds = {}
    for name in sorted(os.listdir(resdir)):
        m = re.match(r"^(W\d[a-z])-([a-z0-9-]+?)(?:\.r(\d+))?\.txt$", name)
        if not m:
            continue
        wl, server, _ = m.groups()
        with open(os.path.join(resdir, name), errors="replace") as f:
            text = ANSI.sub("", f.read())
        r = parse_h2load(text) if "h2load" in text.splitlines()[0] else parse_wrk(text)
        m = re.search(r"^# exit: (\d+)", text, re.M)
        if m and m.group(1) != "0":
            r["errors"].append("exit %s" % m.group(1))
        if "req_s" not in r:
            r["errors"].append("no result parsed")
        rounds.setdefault(wl, {}).setdefault(server, []).append(r)
    results = {}
    for wl, servers in rounds.items():
        for server, rs in servers.items():
            merged = {"errors": [e for r in rs for e in r["errors"]], "rounds": len(rs)}
            for key in set(k for r in rs for k in r if k != "errors"):
                values = sorted(r[key] for r in rs if isinstance(r.get(key), (int, float)))
                if values:
                    merged[key] = values[len(values) // 2] if len(values) % 2 else \
                        (values[len(values) // 2 - 1] + values[len(values) // 2]) / 2
            results.setdefault(wl, {})[server] = merged
    return results


def fmt(v, spec, none="-"):
    return none if v is None else format(v, spec)


def main():
    resdir = sys.argv[1]
    results = load(resdir)
    servers = [s for s in SERVER_ORDER if any(s in results.get(w, {}) for w in WORKLOADS)]
    servers += sorted({s for w in results.values() for s in w} - set(servers))

    ngx_w1c = results.get("W1c", {}).get("nginx", {}).get("req_s")
    scale = ngx_w1c / NGINX_REF_W1C if ngx_w1c else None

    def cowboy_scaled(wl):
        return COWBOY[wl][0] * scale if (scale and wl in COWBOY) else None

    def x_cowboy(wl, r):
        cb = cowboy_scaled(wl)
        if cb is None:
            return None
        v = r.get("req_s") if COWBOY[wl][1] == "req/s" else r.get("mb_s")
        return v / cb if v is not None else None

    def x_nginx(wl, r):
        ref = results.get(wl, {}).get("nginx", {}).get("req_s")
        v = r.get("req_s")
        return v / ref if (ref and v is not None) else None

    out = []
    p = out.append
    hdr = ("%-5s %-17s %11s %9s %9s %8s %9s  %s"
           % ("work", "server/mode", "req/s", "MB/s", "p99 ms", "x nginx", "x Cowboy*", "errors"))
    p(hdr)
    p("-" * len(hdr))
    rows = []
    for wl in WORKLOADS + sorted(set(results) - set(WORKLOADS)):
        for s in servers:
            r = results.get(wl, {}).get(s)
            if r is None:
                continue
            xn = x_nginx(wl, r) if s != "nginx" else None
            xc = x_cowboy(wl, r) if s != "nginx" else None
            rows.append({"workload": wl, "server": s, **r, "x_nginx": xn, "x_cowboy_scaled": xc})
            p("%-5s %-17s %11s %9s %9s %8s %9s  %s" % (
                wl, SERVER_LABEL.get(s, s), fmt(r.get("req_s"), ".0f"),
                fmt(r.get("mb_s"), ".1f"), fmt(r.get("p99_ms"), ".3f"),
                fmt(xn, ".2f"), fmt(xc, ".2f"), "; ".join(r["errors"]) or "-"))
    p("")
    rounds = max((r.get("rounds", 1) for servers in results.values() for r in servers.values()), default=1)
    p("Figures are medians of %d round(s) of the whole sequence (BENCH_ROUNDS)." % rounds)
    p("MB/s: W1* = wrk Transfer/sec (responses, MiB/s); W3* = h2load req/s x 1.048576"
      " (1 MiB request bodies, in MB/s). p99 from wrk --latency (h2load gives none).")
    p("* x Cowboy = ratio to Cowboy 2.13's BENCH.md figure scaled by nginx W1c in this run"
      " (req/s for W1, MB/s for W3).")
    p("")

    if scale is None:
        p("Derived targets: n/a (no nginx W1c result in this run)")
    else:
        p("Derived targets (nginx W1c this run = %.0f req/s; scale = %.0f / 176.7k = %.3f):"
          % (ngx_w1c, ngx_w1c, scale))
        p("  W1c target          = 0.45 x nginx W1c      = %.0f req/s" % (ACC_W1C_X_NGINX * ngx_w1c))
        p("  Cowboy 2.13 scaled: W1a %.0f req/s (p99 %.2f ms, unscaled), W1b %.0f req/s,"
          " W1c %.0f req/s (p99 %.1f ms), W3a %.0f MB/s, W3b %.0f MB/s"
          % (cowboy_scaled("W1a"), COWBOY_W1A_P99_MS, cowboy_scaled("W1b"),
             cowboy_scaled("W1c"), COWBOY_W1C_P99_MS, cowboy_scaled("W3a"),
             cowboy_scaled("W3b")))
    p("")

    verdicts = {}
    for s in servers:
        if s == "nginx":
            continue
        res = {w: results.get(w, {}).get(s) for w in WORKLOADS}
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
        check("W1a p99 <= Cowboy 2.13's 0.79 ms",
              None if p99 is None else p99 <= COWBOY_W1A_P99_MS,
              "-" if p99 is None else "p99 %.3f ms" % p99)
        r = res["W3a"]
        xc = x_cowboy("W3a", r) if r else None
        check("W3a >= 1.5 x scaled Cowboy W3a",
              None if xc is None else xc >= ACC_W3A_X_COWBOY,
              "-" if xc is None else "%.2fx (%.0f MB/s vs target %.0f MB/s)"
              % (xc, r["mb_s"], ACC_W3A_X_COWBOY * cowboy_scaled("W3a")))
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
            p("  BENCH.md long-term goals (x Cowboy 2.13 scaled): " + ", ".join(goals))
        p("")

    with open(os.path.join(resdir, "results.json"), "w") as f:
        json.dump({"nginx_w1c": ngx_w1c, "scale": scale, "rows": rows,
                   "acceptance": verdicts}, f, indent=1)
    print("\n".join(out))


if __name__ == "__main__":
    main()
