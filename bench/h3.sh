#!/usr/bin/env bash
# HTTP/3 benchmark (issue 25): Mustang's HTTP/3 beside Mustang's own HTTP/2
# over TLS and beside quic-go's HTTP/3 server, all loaded by one client
# written against quic-go (bench/h3load: HTTP/3, or HTTP/2 over TLS with
# -h2; h2load and curl here have no HTTP/3).
#
#   bench/h3.sh            (make bench runs it when the QUIC NIF is built)
#
# Servers, on 127.0.0.1 only, with one certificate (openssl, CA:FALSE):
#   mustang-h3  the demo's HTTP/3 listener (scripts/run_demo.sh, TLS_PORT over UDP)
#   mustang-h2  the same demo's HTTPS listener (ALPN h2)
#   quicgo-h3   bench/h3ref (quic-go's http3 server: GET / hello, POST / read)
# Workloads: hello world (GET /) at H3_CONNS connections, each doing one
# request at a time for H3_SECONDS; 1 MiB uploads (POST, H3_UPLOAD_CONNS
# connections). Each run also gives the server's CPU per request (its
# process's user + system time over the run / requests) and the load
# average. Rounds are interleaved (H3_ROUNDS), the report gives medians.
#
# Env: H3_CONNS="1 10 100" H3_UPLOAD_CONNS=10 H3_SECONDS=5 H3_ROUNDS=3
#      H3_PORT=18543 (TCP and UDP for Mustang) H3_REF_PORT=18544
# Output: _bench/h3-<stamp>/ (raw JSON lines, report.txt).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
HOST=127.0.0.1
TAG=h3bench
source "$ROOT/bench/lib.sh"

CONNS=${H3_CONNS:-1 10 100}
UPLOAD_CONNS=${H3_UPLOAD_CONNS:-10}
SECS=${H3_SECONDS:-5}
ROUNDS=${H3_ROUNDS:-3}
MPORT=${H3_PORT:-18543}
REF_PORT=${H3_REF_PORT:-18544}
OUT="$ROOT/_bench/h3-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$OUT"

[[ -f "$ROOT/priv/mustang_quic.so" ]] || { say "the QUIC NIF is not built (no cargo): no HTTP/3 benchmark"; exit 0; }
take_bench_lock
go_tool h3load
go_tool h3ref
H3LOAD="$GO_BIN/h3load"

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
  -subj /CN=localhost -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
  -addext basicConstraints=critical,CA:FALSE \
  -keyout "$OUT/key.pem" -out "$OUT/cert.pem" >/dev/null 2>&1
dd if=/dev/zero of="$OUT/1mib.bin" bs=1M count=1 status=none

PIDS=()
cleanup() { local p; for p in "${PIDS[@]}"; do stop_pid "$p" server || true; done; }
trap cleanup EXIT

[[ "${BENCH_SKIP_BUILD:-0}" == 1 ]] || make --no-print-directory demo >/dev/null
PORT=0 TLS_PORT=$MPORT TLS_CERTFILE="$OUT/cert.pem" TLS_KEYFILE="$OUT/key.pem" \
  scripts/run_demo.sh >"$OUT/mustang.log" 2>&1 &
MUSTANG=$!
PIDS+=("$MUSTANG")
"$GO_BIN/h3ref" -addr "$HOST:$REF_PORT" -cert "$OUT/cert.pem" -key "$OUT/key.pem" \
  >"$OUT/quicgo.log" 2>&1 &
REF=$!
PIDS+=("$REF")
for _ in $(seq 100); do
  grep -q "over HTTP/3" "$OUT/mustang.log" 2>/dev/null && break
  sleep 0.1
done
grep -q "over HTTP/3" "$OUT/mustang.log" || die "the demo did not start its HTTP/3 listener (see $OUT/mustang.log)"
sleep 0.5

ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }

# run <label> <server pid> <h3load args...>: one JSON line with the
# server's CPU seconds and the load average added.
run() {
  local label=$1 pid=$2 t0 t1 line
  shift 2
  t0=$(ticks "$pid")
  line=$("$H3LOAD" "$@" 2>>"$OUT/h3load.err" || echo '{"requests": 0, "rps": 0, "error": true}')
  t1=$(ticks "$pid")
  echo "${line%\}}, \"label\": \"$label\", \"server_cpu_s\": $(awk -v a="$t0" -v b="$t1" \
    -v hz="$(getconf CLK_TCK)" 'BEGIN {printf "%.2f", (b - a) / hz}'), \"loadavg\": \"$(cut -d' ' -f1-3 /proc/loadavg)\"}" \
    | tee -a "$OUT/runs.jsonl"
  sleep 1
}

for round in $(seq "$ROUNDS"); do
  say "round $round of $ROUNDS"
  for c in $CONNS; do
    run "hello c=$c mustang-h3" "$MUSTANG" -url "https://$HOST:$MPORT/" -c "$c" -d "$SECS"
    run "hello c=$c mustang-h2" "$MUSTANG" -h2 -url "https://$HOST:$MPORT/" -c "$c" -d "$SECS"
    run "hello c=$c quicgo-h3" "$REF" -url "https://$HOST:$REF_PORT/" -c "$c" -d "$SECS"
  done
  run "upload 1MiB c=$UPLOAD_CONNS mustang-h3" "$MUSTANG" -url "https://$HOST:$MPORT/read_body" \
    -c "$UPLOAD_CONNS" -d "$SECS" -upload 1048576
  run "upload 1MiB c=$UPLOAD_CONNS mustang-h2" "$MUSTANG" -h2 -url "https://$HOST:$MPORT/read_body" \
    -c "$UPLOAD_CONNS" -d "$SECS" -upload 1048576
  run "upload 1MiB c=$UPLOAD_CONNS quicgo-h3" "$REF" -url "https://$HOST:$REF_PORT/" \
    -c "$UPLOAD_CONNS" -d "$SECS" -upload 1048576
done

"$ROOT/_tools/venv/bin/python" - "$OUT/runs.jsonl" >"$OUT/report.txt" <<'PYEOF'
import json, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    d = json.loads(line)
    runs.setdefault(d["label"], []).append(d)
def med(label, key):
    v = [r.get(key, 0) for r in runs.get(label, [])]
    return statistics.median(v) if v else 0
print("%-34s %10s %8s %12s  %s" % ("run", "req/s", "errors", "CPU us/req", "loadavg (last run)"))
for label, rs in runs.items():
    reqs = sum(r.get("requests", 0) for r in rs)
    cpu = sum(r.get("server_cpu_s", 0) for r in rs)
    print("%-34s %10.0f %8d %12.1f  %s" % (label, med(label, "rps"), sum(r.get("errors", 0) for r in rs),
          1e6 * cpu / reqs if reqs else 0, rs[-1].get("loadavg")))
print()
for c in ["1", "10", "100"]:
    h3, h2, ref = (med("hello c=%s %s" % (c, s), "rps") for s in ("mustang-h3", "mustang-h2", "quicgo-h3"))
    if h3 and h2 and ref:
        print("hello c=%s: mustang-h3 / mustang-h2 = %.2f (target >= 0.7 at c=10), "
              "mustang-h3 / quicgo-h3 = %.2f (target >= 1.0 at c=10)" % (c, h3 / h2, h3 / ref))
PYEOF
cat "$OUT/report.txt"
say "report: $OUT/report.txt"
