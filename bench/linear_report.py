#!/usr/bin/env python3
"""Table of bench/h2_linear.sh (W5lin): upload seconds and seconds per MiB
for each socket buffer, protocol and size (stdlib only).

    bench/linear_report.py DIR [RATIO]

Raw files are b<buffer>-<protocol>-<size>.r<round>.txt (curl uploads, see
bench/lib.sh upload_run). A buffer/protocol is FLAGged when its s/MiB at
the largest size is more than RATIO (1.5) x its s/MiB at the smallest size:
upload time should grow linearly with the size. IRREG: the ends pass but
s/MiB varies more than RATIO over the sizes (a stall at one size hides in
the ends-only ratio). A wrong answer (status, protocol, byte count) is an
ERROR, not a figure.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report import parse_curl, median  # noqa: E402

MIB = 1048576


def main():
    resdir = sys.argv[1]
    ratio_max = float(sys.argv[2]) if len(sys.argv) > 2 else 1.5
    points = {}  # (buffer, proto) -> {bytes: [results]}
    for name in sorted(os.listdir(resdir)):
        m = re.match(r"^b(\d+)-([a-z0-9]+)-([^.]+)\.r(\d+)\.txt$", name)
        if not m:
            continue
        with open(os.path.join(resdir, name), errors="replace") as f:
            r = parse_curl(f.read())
        key = (int(m.group(1)), m.group(2))
        points.setdefault(key, {}).setdefault(r.get("bytes", 0), []).append(r)

    out = []
    p = out.append
    p("W5lin: upload time against body size (MUSTANG_SOCKET_BUFFER = bytes per socket read)")
    hdr = "%-8s %-5s %10s %10s %10s %8s  %s" % ("buffer", "proto", "size MiB", "seconds",
                                                 "s/MiB", "MiB/s", "errors")
    p(hdr)
    p("-" * len(hdr))
    verdicts = []
    for (buf, proto) in sorted(points, key=lambda k: (k[0], k[1] != "h2c", k[1])):
        sizes = points[(buf, proto)]
        per_mib = {}
        for size in sorted(sizes):
            rs = sizes[size]
            errors = [e for r in rs for e in r["errors"]]
            secs = median([r["seconds"] for r in rs if "seconds" in r])
            mib = size / MIB
            spm = secs / mib if (secs and mib and not errors) else None
            if spm is not None:
                per_mib[size] = spm
            p("%-8d %-5s %10.2f %10s %10s %8s  %s" % (
                buf, proto, mib, "-" if secs is None else "%.3f" % secs,
                "-" if spm is None else "%.4f" % spm,
                "-" if spm is None else "%.1f" % (1 / spm),
                "; ".join(errors) or "-"))
            if errors:
                verdicts.append("  ERROR  buffer %d %s %.2f MiB: %s"
                                % (buf, proto, mib, "; ".join(errors)))
        if len(per_mib) >= 2 and min(sizes) in per_mib and max(sizes) in per_mib:
            small, large = per_mib[min(sizes)], per_mib[max(sizes)]
            ratio = large / small
            # A stall at one size (a timer firing, a lost window update)
            # can hide in the ends-only ratio: also flag a spread of s/MiB
            # over all sizes above the same threshold.
            spread = max(per_mib.values()) / min(per_mib.values())
            verdict = "FLAG" if ratio > ratio_max else ("IRREG" if spread > ratio_max else "ok")
            verdicts.append("  %-5s  buffer %d %s: s/MiB at %g MiB / at %g MiB = %.2f"
                            " (flag above %.2f); max/min s/MiB over the sizes = %.2f"
                            % (verdict, buf, proto, round(max(sizes) / MIB, 3),
                               round(min(sizes) / MIB, 3), ratio, ratio_max, spread))
        else:
            verdicts.append("  n/a    buffer %d %s: not enough valid sizes" % (buf, proto))
    p("")
    p("Linearity (median of the rounds per point):")
    out.extend(verdicts)
    print("\n".join(out))


if __name__ == "__main__":
    main()
