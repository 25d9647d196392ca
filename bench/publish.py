#!/usr/bin/env python3
"""The Markdown report and PNG charts of a bench/run.sh results directory.

    bench/publish.py _bench/results-YYYYmmdd-HHMMSS

Reads results.json (written by bench/report.py: medians, min-max and ratios
per workload and server), meta.txt and the raw outputs of the scaling
curves (scaling/, bench/scaling.sh), and writes into the same directory:
report.md, throughput.png and p99.png (bar charts per workload per server,
the bars' whiskers are the min-max over the rounds), onecore.png (the same
bars for the one-core phase, BENCH_PIN), scaling_conns.png
(req/s and p99 against connections), scaling_body.png (upload time
against body size) and w7.png (W7's latency percentiles per server, and its
p99 against connections with the target). Charts need matplotlib (in _tools/venv, installed by
scripts/setup.sh); without it the report is written without them.
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report  # noqa: E402  (bench/report.py: the raw-output parsers)

SERVERS = ["mustang", "mustang-rp", "cowboy", "elli", "nginx", "wsref"]
LABEL = {"mustang": "Mustang", "mustang-rp": "Mustang rp=true", "cowboy": "Cowboy 2.13",
         "elli": "Elli 3.3", "nginx": "nginx", "wsref": "Go reference (wsref)"}
COLOR = {"mustang": "#d62728", "mustang-rp": "#ff9896", "cowboy": "#1f77b4",
         "elli": "#2ca02c", "nginx": "#7f7f7f", "wsref": "#9467bd"}
DESC = {
    "W1a": "HTTP/1.1 hello, 1 conn", "W1b": "HTTP/1.1 hello, 10 conns",
    "W1c": "HTTP/1.1 hello, 100 conns", "W2a": "h2c hello, c10 m10", "W2b": "h2c hello, c1 m1",
    "W3a": "1 MiB bodies h1, 1 conn", "W3b": "1 MiB bodies h1, 10 conns",
    "W4a": "1 MiB bodies h2c, 1 conn", "W4b": "1 MiB bodies h2c, 10 conns",
    "W5a": "1 GiB upload h1", "W5b": "1 GiB upload h2c", "W5c": "1 GiB upload h2/TLS",
    "W6a": "WS echo 1 KiB, 1 conn", "W6b": "WS send 1 KiB binary", "W6c": "WS send 1 KiB UTF-8",
    "W6d": "WS send 64 KiB binary", "W6e": "WS send 64 KiB UTF-8", "W6f": "WS echo 1 KiB, 10 conns",
}
MIB = 1048576


def unit_of(wl):
    """The figure shown for a workload: (key in a row, unit, spread key)."""
    if wl.startswith("W5"):
        return "seconds", "s", "seconds"
    if wl.startswith("W6"):
        return "frames_s", "frames/s", "frames_s"
    if wl[:2] in ("W3", "W4"):
        return "mb_s", "MB/s", "req_s"
    return "req_s", "req/s", "req_s"


def human(v):
    if v is None:
        return "–"
    if v >= 100_000:
        return "%.0fk" % (v / 1000)
    if v >= 10_000:
        return "%.1fk" % (v / 1000)
    if v >= 100:
        return "%.0f" % v
    if v >= 10:
        return "%.1f" % v
    return "%.3g" % v


def cell(row, wl):
    """median (min–max) of a row, or its errors."""
    if row is None:
        return "–"
    if row.get("errors"):
        return "error: " + "; ".join(row["errors"])[:60]
    key, _, skey = unit_of(wl)
    v = row.get(key)
    lo, hi = row.get("min", {}).get(skey), row.get("max", {}).get(skey)
    if v is None:
        return "–"
    if lo is not None and skey != key and row.get(skey):
        # W3/W4: the spread is kept on req/s; MB/s is proportional
        lo, hi = lo * v / row[skey], hi * v / row[skey]
    mark = " †" if row.get("failed") else ""  # rounds left out (see "Errors and incidents")
    if lo is None or lo == hi:
        return human(v) + mark
    return "%s (%s–%s)%s" % (human(v), human(lo), human(hi), mark)


def xfmt(v, scaled=False):
    return "–" if v is None else "%.2fx%s" % (v, "*" if scaled else "")


def table_head(p, cols):
    """A Markdown table's header and rule."""
    p("| " + " | ".join(cols) + " |")
    p("|" + "---|" * len(cols))


def ratio_table(p, order, rows, servers, ratios):
    """A Markdown table: per workload, each server's cell and Mustang's
    ratios (the x_... keys of its row, with their column names)."""
    table_head(p, ["workload", "unit"] + [LABEL[s] for s in servers] + [n for _, n in ratios])
    for wl in order:
        m = rows[wl].get("mustang", {})
        p("| %s %s | %s | %s | %s |" % (
            wl, DESC.get(wl, ""), unit_of(wl)[1],
            " | ".join(cell(rows[wl].get(s), wl) for s in servers),
            " | ".join(xfmt(m.get(k), k == "x_cowboy" and m.get("x_cowboy_scaled"))
                       for k, _ in ratios)))
    p("")


def image(p, made, name, alt):
    if name in made:
        p("![%s](%s)" % (alt, name))
        p("")


def load_json(resdir):
    with open(os.path.join(resdir, "results.json")) as f:
        return json.load(f)


def read_meta(resdir):
    try:
        with open(os.path.join(resdir, "meta.txt")) as f:
            return f.read()
    except OSError:
        return ""


def by_workload(rows):
    out = {}
    for r in rows:
        out.setdefault(r["workload"], {})[r["server"]] = r
    return out


def scaling(resdir):
    """Parsed scaling outputs: conns[n][server] = wrk row;
    bodies[(server, proto)][bytes] = median seconds (None when a run failed)."""
    conns, bodies, errors = {}, {}, []
    d = os.path.join(resdir, "scaling")
    if not os.path.isdir(d):
        return conns, bodies, errors
    times = {}
    for name in sorted(os.listdir(d)):
        with open(os.path.join(d, name), errors="replace") as f:
            text = report.ANSI.sub("", f.read())
        m = re.match(r"conns-(\d+)-([a-z0-9-]+)\.txt$", name)
        if m:
            r = report.parse_wrk(text)
            ex = re.search(r"^# exit: (\d+)", text, re.M)
            if ex and ex.group(1) != "0":
                r["errors"].append("exit %s" % ex.group(1))
            conns.setdefault(int(m.group(1)), {})[m.group(2)] = r
            continue
        m = re.match(r"body-(\d+)-([a-z0-9-]+)-(h1|h2c)\.r\d+\.txt$", name)
        if m:
            r = report.parse_curl(text)
            key = (m.group(2), m.group(3))
            if r["errors"]:
                errors.append("%s: %s" % (name, "; ".join(r["errors"])))
            times.setdefault(key, {}).setdefault(int(m.group(1)), []).append(r.get("seconds"))
    for key, sizes in times.items():
        for size, ts in sizes.items():
            ok = [t for t in ts if t is not None]
            bodies.setdefault(key, {})[size] = report.median(ok) if len(ok) == len(ts) else None
    return conns, bodies, errors


def size_label(b):
    for unit, n in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= n and b % n == 0:
            return "%d %s" % (b // n, unit)
    return "%d B" % b


def pyplot():
    """matplotlib.pyplot (headless), or None without matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    return plt


def save_figure(plt, fig, resdir, name, title):
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(os.path.join(resdir, name), dpi=90)
    plt.close(fig)
    return name


def charts(resdir, wls, rows, conns, bodies, onecore):
    """Writes the PNGs; returns their names (none without matplotlib)."""
    plt = pyplot()
    if plt is None:
        return []
    made = []

    def bars(name, metric, title, ylabel_of, rows=rows, wls=wls):
        todo = [w for w in wls if any(metric(r) is not None for r in rows[w].values())]
        if not todo:
            return
        cols = 4
        nrows = (len(todo) + cols - 1) // cols
        fig, axes = plt.subplots(nrows, cols, figsize=(4 * cols, 3.2 * nrows), squeeze=False)
        for ax in axes.flat[len(todo):]:
            ax.axis("off")
        for ax, wl in zip(axes.flat, todo):
            ss = [s for s in SERVERS if s in rows[wl] and metric(rows[wl][s]) is not None]
            vals = [metric(rows[wl][s])[0] for s in ss]
            lo = [v - metric(rows[wl][s])[1] for v, s in zip(vals, ss)]
            hi = [metric(rows[wl][s])[2] - v for v, s in zip(vals, ss)]
            ax.bar(range(len(ss)), vals, yerr=[lo, hi], capsize=3,
                   color=[COLOR.get(s, "#333333") for s in ss])
            ax.set_xticks(range(len(ss)))
            ax.set_xticklabels([LABEL.get(s, s).replace(" ", "\n", 1) for s in ss], fontsize=7)
            ax.set_title("%s %s" % (wl, DESC.get(wl, "")), fontsize=9)
            ax.set_ylabel(ylabel_of(wl), fontsize=8)
            ax.tick_params(axis="y", labelsize=7)
        fig.suptitle(title, fontsize=11)
        fig.tight_layout()
        fig.savefig(os.path.join(resdir, name), dpi=90)
        plt.close(fig)
        made.append(name)

    def throughput(r):
        if r.get("errors"):
            return None
        wl = r["workload"]
        key, _, skey = unit_of(wl)
        v = r.get(key)
        if v is None:
            return None
        lo, hi = r.get("min", {}).get(skey, v), r.get("max", {}).get(skey, v)
        if skey != key and r.get(skey):
            lo, hi = lo * v / r[skey], hi * v / r[skey]
        return v, lo, hi

    def p99(r):
        v = r.get("p99_ms")
        if r.get("errors") or v is None:
            return None
        return v, r.get("min", {}).get("p99_ms", v), r.get("max", {}).get("p99_ms", v)

    bars("throughput.png", throughput,
         "Throughput per workload (median of the rounds, whiskers min-max; W5: seconds, lower is better)",
         lambda wl: unit_of(wl)[1])
    bars("p99.png", p99, "p99 latency per workload, ms (lower is better; wrk and wsload only)",
         lambda wl: "p99 ms")
    if onecore:
        bars("onecore.png", throughput, "Single connection, one core: client and server on one CPU"
             " (BENCH_PIN; median of the rounds, whiskers min-max)",
             lambda wl: unit_of(wl)[1], rows=onecore, wls=[w for w in report.SINGLE if w in onecore])

    if conns:
        ns = sorted(conns)
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 4.2))
        for s in SERVERS:
            pts = [(n, conns[n][s]) for n in ns if s in conns[n] and conns[n][s].get("req_s")]
            if not pts:
                continue
            a1.plot([n for n, _ in pts], [r["req_s"] for _, r in pts], "o-", color=COLOR[s], label=LABEL[s])
            q = [(n, r["p99_ms"]) for n, r in pts if r.get("p99_ms") is not None]
            a2.plot([n for n, _ in q], [v for _, v in q], "o-", color=COLOR[s], label=LABEL[s])
        for ax, yl in ((a1, "req/s"), (a2, "p99 ms")):
            ax.set_xscale("log")
            ax.set_xlabel("connections (wrk, HTTP/1.1 hello)")
            ax.set_ylabel(yl)
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize=8)
        a2.set_yscale("log")
        made.append(save_figure(plt, fig, resdir, "scaling_conns.png", "Scaling with connections"))

    if bodies:
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 4.2))
        for (s, proto), pts in sorted(bodies.items()):
            xs = sorted(b for b, t in pts.items() if t)
            style = "o-" if proto == "h1" else "s--"
            lab = "%s %s" % (LABEL.get(s, s), proto)
            a1.plot(xs, [pts[b] for b in xs], style, color=COLOR.get(s, "#333"), label=lab)
            a2.plot(xs, [b / MIB / pts[b] for b in xs], style, color=COLOR.get(s, "#333"), label=lab)
        big = [b for pts in bodies.values() for b, t in pts.items() if t]
        if big:
            # slope-1 guide through the largest Mustang h1 point: linear time
            ref = bodies.get(("mustang", "h1"), {})
            top = max((b for b, t in ref.items() if t), default=None)
            if top:
                lo = min(big)
                a1.plot([lo, top], [ref[top] * lo / top, ref[top]], ":", color="black",
                        label="time proportional to size")
        a1.set_xscale("log")
        a1.set_yscale("log")
        a1.set_ylabel("seconds (curl time_total)")
        a2.set_xscale("log")
        a2.set_ylabel("MiB/s")
        for ax in (a1, a2):
            ax.set_xlabel("body size, bytes (POST /read_body)")
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize=7)
        made.append(save_figure(plt, fig, resdir, "scaling_body.png",
                                "Upload time against body size (median of the repeats)"))
    return made


def w7_chart(resdir, rows, curve):
    """w7.png: W7's p50/p99/p99.9 per server (the rounds' medians) and p99
    against connections (the curve), with the 101.5 ms target; the name,
    or None without matplotlib or figures."""
    plt = pyplot()
    if plt is None:
        return None
    rows = [r for r in rows if not r.get("errors") and r.get("p99_ms") is not None]
    if not rows and not curve:
        return None
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 4.2))
    keys = (("p50_ms", "p50"), ("p99_ms", "p99"), ("p999_ms", "p99.9"))
    for k, r in enumerate(rows):
        a1.bar([k * 4 + j for j in range(3)], [r.get(key) or 0 for key, _ in keys],
               color=COLOR.get(r["server"], "#333"), label=LABEL.get(r["server"], r["server"]))
    a1.set_xticks([k * 4 + j for k in range(len(rows)) for j in range(3)])
    a1.set_xticklabels([n for _ in rows for _, n in keys], fontsize=7)
    a1.set_ylim(bottom=95)
    a1.set_title("%s connections, median of the rounds" % ", ".join(
        sorted({"%.0f" % r["conns"] for r in rows if r.get("conns")})), fontsize=9)
    for s in SERVERS:
        pts = [(int(n), curve[n][s]) for n in curve if s in curve[n]]
        pts = sorted((n, r["p99_ms"]) for n, r in pts if not r.get("errors") and r.get("p99_ms"))
        if pts:
            a2.plot([n for n, _ in pts], [v for _, v in pts], "o-", color=COLOR[s], label=LABEL[s])
    a2.set_xlabel("connections (one GET /sleep per second each)")
    a2.set_xscale("log")
    for ax in (a1, a2):
        ax.axhline(report.W7_TARGET_P99_MS, color="black", linestyle=":", label="target p99 101.5 ms")
        ax.set_ylabel("ms from the scheduled send")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    return save_figure(plt, fig, resdir, "w7.png", "W7 paced latency (GET /sleep, 100 ms handler)")


def onecore_section(p, data, onecore, made):
    """The one-core phase's table (BENCH_PIN) and the single-connection
    targets, each with its kernel-placed and its one-core ratio."""
    order = [w for w in report.SINGLE if w in onecore]
    if order:
        servers = [s for s in SERVERS if s != "mustang-rp" and any(s in onecore[w] for w in order)]
        ratios = [(k, n) for k, n, peer in (
            ("x_cowboy", "Mustang / Cowboy", "cowboy"), ("x_elli", "Mustang / Elli", "elli"),
            ("x_nginx", "Mustang / nginx", "nginx"), ("x_ref", "Mustang / reference", "wsref"))
            if peer in servers]
        p("## Single connection, one core (client and server on CPU %s, BENCH_PIN)"
          % (data.get("onecore_cpu") or "?"))
        p("")
        p("After the interleaved rounds, each server started alone under `taskset -c %s` (a VM"
          " then runs one scheduler, as on a one-core machine; nginx one worker) and the client"
          " ran on the same CPU, server order rotated per round. Left to the kernel, these rows"
          " have a fast and a slow mode per VM (see doc/guide/performance.md); here the spread"
          " is small." % (data.get("onecore_cpu") or "?"))
        p("")
        ratio_table(p, order, onecore, servers, ratios)
        image(p, made, "onecore.png", "throughput per single-connection workload, one core")
    targets = data.get("single_targets") or []
    if targets:
        p("## Targets: single connection")
        p("")
        table_head(p, ["target", "kernel-placed", "one core", "checked on", "result"])
        for t in targets:
            p("| %s ≥ %.1fx %s | %s | %s | %s | %s |" % (
                t["workload"], t["goal"], LABEL.get(t["peer"], t["peer"]), xfmt(t["kernel"]),
                xfmt(t["one_core"]), t["basis"],
                {True: "**met**", False: "**not met**", None: "n/a"}[t["pass"]]))
        p("")
        p(report.SINGLE_BASIS)
        p("")


def w7_section(p, data, made):
    """The W7 table, its target and its connection curve."""
    rows, curve = data.get("w7_rows") or [], data.get("w7_scale") or {}
    if not rows and not curve:
        return
    p("## W7: paced latency")
    p("")
    p("`wsload -mode paced`: keep-alive HTTP/1.1 connections, each sending `GET /sleep` (a 100 ms"
      " handler, 1 KiB answer) once a second, the send times spread evenly over the second;"
      " latency from each request's scheduled send time (a late answer delays the next request,"
      " whose latency still counts from its own slot). Warm-up excluded. Failed requests:"
      " connect failures, resets, timeouts (10 s), wrong status or length.")
    p("")
    if rows:
        table_head(p, ["server", "connections", "req/s", "p50 ms", "p99 ms", "p99.9 ms", "max ms",
                       "failed requests", "server CPU s", "client CPU s"])
        for r in rows:
            if r.get("errors"):
                p("| %s | – | error: %s | | | | | | | |" % (LABEL.get(r["server"], r["server"]),
                                                     "; ".join(r["errors"])[:60]))
                continue
            p99 = "%.2f" % r["p99_ms"]
            lo, hi = r.get("min", {}).get("p99_ms"), r.get("max", {}).get("p99_ms")
            if lo is not None and lo != hi:
                p99 += " (%.2f–%.2f)" % (lo, hi)
            p("| %s | %.0f | %s | %.2f | %s | %.2f | %.1f | %s | %s | %.1f |" % (
                LABEL.get(r["server"], r["server"]), r.get("conns", 0), human(r.get("req_s")),
                r.get("p50_ms", 0), p99, r.get("p999_ms", 0), r.get("max_ms", 0),
                report.failures_text(r), report.fmt(r.get("server_cpu_s"), ".1f", "–"),
                r.get("client_cpu_s", 0)))
        p("")
    t = data.get("w7_target")
    if t:
        verdict = {True: "**met**", False: "**not met**", None: "n/a"}[t.get("pass")]
        p("Target (BENCH.md): Mustang's p99 ≤ %.1f ms with %d connections and no failed request:"
          " %s (p99 %.2f ms at %.0f connections)." % (t["target_p99_ms"], report.W7_TARGET_CONNS,
                                                     verdict, t["p99_ms"] or 0, t["conns"] or 0))
        p("")
    if curve:
        ns = sorted(curve, key=int)
        ss = [s for s in SERVERS if any(s in curve[n] for n in ns)]
        p("Connection curve (one run per point): req/s, p99 ms, failed requests.")
        p("")
        table_head(p, ["connections"] + [LABEL[s] for s in ss])
        for n in ns:
            cells = []
            for s in ss:
                r = curve[n].get(s)
                if not r:
                    cells.append("–")
                elif r.get("errors"):
                    cells.append("error: " + "; ".join(r["errors"])[:40])
                else:
                    cells.append("%s, p99 %.2f, %s" % (human(r["req_s"]), r["p99_ms"], report.failures_text(r)))
            p("| %s | %s |" % (n, " | ".join(cells)))
        p("")
    image(p, made, "w7.png", "W7 latency per server and p99 against connections")


def targets_section(p, data):
    """Every target of issue 11 point 3 (report.py's issue_targets): target,
    basis, measured figure, result; then, for each workload with a target
    not met, its section of bench/targets.md (profile, reason, plan), or a
    visible line saying there is none."""
    targets = data.get("issue_targets") or []
    if not targets:
        return
    p("## Targets (issue 11)")
    p("")
    table_head(p, ["target", "basis", "measured", "result"])
    for t in targets:
        result = {True: "**met**", False: "**not met**"}.get(t["pass"], t["result"])
        p("| %s | %s | %s | %s |" % (t["target"].replace(">=", "≥").replace("<=", "≤"),
                                     *("–" if v == "-" else v for v in (t["basis"], t["measured"])),
                                     result))
    p("")
    p(report.ISSUE_BASIS)
    p("")
    unmet = report.unmet_sections(targets)
    if not unmet:
        p("Every target measured in this run is met.")
        p("")
        return
    sections = report.analysis_sections()
    for name in unmet:
        p("### %s: profile, reason, plan" % name)
        p("")
        text = sections.get(name)
        if text:
            # the section's own headings, one level below this one
            p("\n".join("#" + l if l.startswith("#") else l for l in text.splitlines()))
        else:
            p("**%s** (its `## %s` section is missing or empty)." % (report.NO_ANALYSIS, name))
        p("")


def main():
    resdir = sys.argv[1]
    data = load_json(resdir)
    meta = read_meta(resdir)
    rows = by_workload(data["rows"] + data["ws_rows"])
    wls = [w for w in report.WORKLOADS + report.WS_BENCH if w in rows]
    wls += sorted(w for w in rows if w not in wls)
    conns, bodies, body_errors = scaling(resdir)
    onecore = by_workload(data.get("onecore_rows") or [])
    made = charts(resdir, wls, rows, conns, bodies, onecore)
    w7png = w7_chart(resdir, data.get("w7_rows") or [], data.get("w7_scale") or {})
    if w7png:
        made.append(w7png)

    def meta_field(name):
        m = re.search(r"^%s: (.*)$" % re.escape(name), meta, re.M)
        return m.group(1) if m else "?"

    out = []
    p = out.append
    peers = meta_field("peers")
    rounds = max((r.get("rounds", 1) for r in data["rows"] + data["ws_rows"] + data.get("w7_rows", [])),
                 default=0)
    p("# Mustang benchmark results")
    p("")
    p("`make bench` (bench/run.sh) on %s, git %s, %s cores (client and servers share them), "
      "loadavg before %s. %d interleaved round(s): in each round every workload ran once against"
      " every server before the next workload, the server order rotated from round to round."
      % (meta_field("date"), meta_field("git"), meta_field("cores"), meta_field("loadavg before"),
         rounds))
    p("")
    settings = " ".join(l.strip() for l in meta.splitlines() if re.match(r"(QUICK|BENCH_)\S*=", l))
    p("Settings: `%s`. Elapsed: %s." % (settings or "?", meta_field("elapsed")))
    p("")
    if peers in ("none", "?"):
        p("**No peers in this run** (MUSTANG_PEERS=none, or no `../shared/peers`): Mustang against"
          " nginx and the Go Websocket reference only; the Cowboy ratios marked * are BENCH.md"
          " figures scaled by nginx, not measurements.")
    else:
        p("Servers: Mustang (the demo, default options; rp=true: handlers in a process per"
          " request), Cowboy 2.13 and Elli 3.3 run as black boxes from `%s` (Cowboy on :8090;"
          " its **W2, W4 and W5b rows on :8092, where its HTTP/2 frame-rate limit is raised**,"
          " since its defaults fail those runs; Elli: HTTP/1.1 rows only; Websocket rows: Cowboy"
          " only), nginx 1.22 (2 workers) and a Go Websocket echo server (gorilla) as references."
          " All with `max_keepalive` infinity." % peers)
    p("")
    p("Each cell: median (min–max over the rounds; † = a round left out, see the end). Ratios: Mustang's median / the other"
      " server's median (> 1 = Mustang better; W5 compares times, inverted).")
    p("")
    targets_section(p, data)
    ws_order = [w for w in wls if w.startswith("W6")]
    http_order = [w for w in wls if not w.startswith("W6")]
    for title, order, servers, ratios in (
            ("HTTP", http_order, ["mustang", "mustang-rp", "cowboy", "elli", "nginx"],
             (("x_cowboy", "Mustang / Cowboy"), ("x_elli", "Mustang / Elli"),
              ("x_nginx", "Mustang / nginx"))),
            ("Websocket", ws_order, ["mustang", "cowboy", "wsref"],
             (("x_cowboy", "Mustang / Cowboy"), ("x_ref", "Mustang / reference")))):
        if not order:
            continue
        servers = [s for s in servers if any(s in rows[w] for w in order)]
        p("## %s" % title)
        p("")
        ratio_table(p, order, rows, servers, ratios)
        lat = [w for w in order if any(r.get("p99_ms") is not None for r in rows[w].values())]
        if lat:
            p("p99 latency, ms (median of the rounds; wrk `--latency`, wsload; h2load gives none):")
            p("")
            table_head(p, ["workload"] + [LABEL[s] for s in servers])
            for wl in lat:
                p("| %s | %s |" % (wl, " | ".join(
                    "%.3f" % rows[wl][s]["p99_ms"] if s in rows[wl] and rows[wl][s].get("p99_ms")
                    is not None and not rows[wl][s].get("errors") else "–" for s in servers)))
            p("")
    w7_section(p, data, made)
    image(p, made, "throughput.png", "throughput per workload")
    image(p, made, "p99.png", "p99 per workload")
    onecore_section(p, data, onecore, made)
    if conns:
        ns = sorted(conns)
        ss = [s for s in SERVERS if any(s in conns[n] for n in ns)]
        p("## Scaling: connections")
        p("")
        p("wrk HTTP/1.1 hello (`-t2`, `-t1` at 1 connection, `--timeout 10s`), one run per point;"
          " each cell: req/s, p99 ms, and wrk's socket errors when any.")
        p("")
        table_head(p, ["connections"] + [LABEL[s] for s in ss])
        for n in ns:
            cells = []
            for s in ss:
                r = conns[n].get(s)
                if not r or r.get("req_s") is None:
                    cells.append("–")
                    continue
                c = "%s req/s, p99 %s ms" % (human(r["req_s"]), "%.2f" % r["p99_ms"] if r.get("p99_ms") is not None else "?")
                if r["errors"]:
                    c += " (%s)" % "; ".join(r["errors"])
                cells.append(c)
            p("| %d | %s |" % (n, " | ".join(cells)))
        p("")
        image(p, made, "scaling_conns.png", "req/s and p99 against connections")
    if bodies:
        keys = sorted(bodies)
        sizes = sorted({b for pts in bodies.values() for b in pts})
        p("## Scaling: body size")
        p("")
        p("One curl upload to `POST /read_body` per size and server (the answer is the byte count"
          " read, checked), median of the repeats; seconds and MiB/s. Small sizes measure the"
          " fixed cost of a curl run (process, connection); from a few MiB on, time grows in"
          " proportion to size when MiB/s stays flat.")
        p("")
        table_head(p, ["size"] + ["%s %s" % (LABEL.get(s, s), proto) for s, proto in keys])
        for b in sizes:
            cells = []
            for k in keys:
                t = bodies[k].get(b)
                cells.append("–" if t is None else "%.4f s, %.0f MiB/s" % (t, b / MIB / t))
            p("| %s | %s |" % (size_label(b), " | ".join(cells)))
        p("")
        lin = []
        for s, proto in keys:
            # from 4 MiB on: below, the fixed cost of a curl run dominates
            pts = {b: t for b, t in bodies[(s, proto)].items() if t and b >= 4 * MIB}
            if len(pts) >= 2:
                lo, hi = min(pts), max(pts)
                lin.append("%s %s %.2f (%s to %s)" % (LABEL.get(s, s), proto,
                                                      (pts[hi] / hi) / (pts[lo] / lo),
                                                      size_label(lo), size_label(hi)))
        if lin:
            p("Linearity, seconds per byte at the largest size / at the smallest size from 4 MiB"
              " on (1.00 = time proportional to size, above = slower per byte on big bodies): %s."
              % ", ".join(lin))
            p("")
        image(p, made, "scaling_body.png", "upload time against body size")
        for e in body_errors:
            p("- body run failed: %s" % e)
        if body_errors:
            p("")
    errs = ["%s %s: %s" % (r["workload"], r["server"], report.errors_text(r))
            for r in data["rows"] + data["ws_rows"] + data.get("w7_rows", [])
            if r.get("errors") or r.get("failed")]
    errs += ["%s %s (one core): %s" % (r["workload"], r["server"], report.errors_text(r))
             for r in data.get("onecore_rows") or [] if r.get("errors") or r.get("failed")]
    incidents = []
    try:
        with open(os.path.join(resdir, "incidents.txt")) as f:
            incidents = [l.strip() for l in f if l.strip()]
    except OSError:
        pass
    if errs or incidents:
        p("## Errors and incidents")
        p("")
        p("A row with errors has no figure; a round with errors is left out of its row's median"
          " and spread (the cell then shows the clean rounds only).")
        p("")
        for e in errs + incidents:
            p("- %s" % e)
        p("")
    if not made:
        p("(No charts: matplotlib is missing; run scripts/setup.sh.)")
        p("")
    p("Raw outputs, logs and the text report (table.txt) stay in the run's `_bench/results-<stamp>/`;"
      " see bench/README.md for the workloads and how to read them.")
    with open(os.path.join(resdir, "report.md"), "w") as f:
        f.write("\n".join(out) + "\n")
    print("publish: %s/report.md%s" % (resdir, "".join(", " + m for m in made)))


if __name__ == "__main__":
    main()
