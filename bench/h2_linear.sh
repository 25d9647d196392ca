#!/usr/bin/env bash
# W5lin: upload time must grow linearly with the body size, however the
# server's socket reads are split (see bench/README.md).
#
#   bench/h2_linear.sh                       # standalone
#   BENCH_WORKLOADS=W5lin make bench         # from bench/run.sh
#
# For each socket buffer N, starts the demo with MUSTANG_SOCKET_BUFFER=N
# (listener socket_opts [{buffer, N}]: every socket read returns at most N
# bytes, and Mustang's dynamic buffer is off), then uploads files of several
# sizes to POST /read_body with curl, over h2c (prior knowledge) and over
# HTTP/1.1 for comparison, and checks each answer is the byte count sent.
# Prints seconds and seconds per MiB, and flags (does not fail) a buffer /
# protocol whose s/MiB at the largest size is more than BENCH_LIN_RATIO x
# its s/MiB at the smallest size (IRREG: s/MiB varies more than that over
# the sizes, e.g. a stall at one size).
#
# Env:
#   BENCH_LIN_BUFFERS="1 1460 16384"   socket buffers (bytes)
#   BENCH_LIN_SIZES_SMALL="1M 2M 4M"   sizes for buffers < 1024 (1-byte reads
#                                      are ~1M messages per MiB: keep them small)
#   BENCH_LIN_SIZES="25M 50M 100M"     sizes for the other buffers
#   BENCH_LIN_PROTOCOLS="h2c h1"       h2c: curl --http2-prior-knowledge; h1: HTTP/1.1
#   BENCH_LIN_ROUNDS=1                 uploads per point (the median is kept),
#                                      after one untimed warm-up upload per protocol
#   BENCH_LIN_RATIO=1.5                flag threshold
#   BENCH_LIN_OUT=_bench/lin-<timestamp>  where raw outputs, logs and table.txt go
#   BENCH_PORT=18081 BENCH_TLS_PORT=18443 BENCH_DEMO_CMD=scripts/run_demo.sh
#   BENCH_SKIP_BUILD=1                 skip `make demo` (standalone runs)
# Sizes take numfmt IEC suffixes (K, M, G: powers of 1024). Exit status: 0
# when every upload answered the right count, 1 otherwise (a flag is not a
# failure).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

HOST=127.0.0.1
START_TIMEOUT=30
TAG=h2_linear
TOOL_PID=""
source "$ROOT/bench/lib.sh"

DEMO_PORT=${BENCH_PORT:-18081}
DEMO_TLS_PORT=${BENCH_TLS_PORT:-18443}
DEMO_CMD=${BENCH_DEMO_CMD:-$ROOT/scripts/run_demo.sh}
BUFFERS=${BENCH_LIN_BUFFERS:-1 1460 16384}
SIZES_SMALL=${BENCH_LIN_SIZES_SMALL:-1M 2M 4M}
SIZES=${BENCH_LIN_SIZES:-25M 50M 100M}
PROTOCOLS=${BENCH_LIN_PROTOCOLS:-h2c h1}
ROUNDS=${BENCH_LIN_ROUNDS:-1}
RATIO=${BENCH_LIN_RATIO:-1.5}
WORK="$ROOT/_bench"
OUT=${BENCH_LIN_OUT:-$WORK/lin-$(date +%Y%m%d-%H%M%S)}

mkdir -p "$WORK" "$OUT"
take_bench_lock   # bench/run.sh holds it already and sets BENCH_LOCK_HELD=1
[[ "${BENCH_SKIP_BUILD:-0}" == 1 ]] || make --no-print-directory demo \
  || die "build failed (make demo)"
for t in curl numfmt flock; do
  command -v "$t" >/dev/null || die "$t not found"
done
PY="$ROOT/_tools/venv/bin/python"
[[ -x "$PY" ]] || PY=$(command -v python3) || die "python3 not found"

DEMO_PID=""
FAILED=0
cleanup() {
  local rc=$?
  trap - INT TERM
  stop_pid "$TOOL_PID" "curl"
  stop_pid "$DEMO_PID" "mustang demo"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

bytes_of() { numfmt --from=iec "$1" || die "bad size '$1' (e.g. 256K, 4M, 1G)"; }

{
  echo "date: $(date -Is)"
  echo "git: $(git rev-parse --short HEAD 2>/dev/null || echo none)$(git diff --quiet HEAD 2>/dev/null || echo ' (dirty)')"
  echo "loadavg before: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "buffers: $BUFFERS; sizes (buffer < 1024): $SIZES_SMALL; sizes: $SIZES"
  echo "protocols: $PROTOCOLS; rounds: $ROUNDS; flag ratio: $RATIO"
  echo "curl: $(curl --version 2>&1 | head -n1)"
  echo "demo command: $DEMO_CMD"
} >"$OUT/meta.txt"
say "results in $OUT"

for buf in $BUFFERS; do
  [[ "$buf" =~ ^[0-9]+$ && "$buf" -gt 0 ]] || die "BENCH_LIN_BUFFERS: bad buffer '$buf'"
  if ((buf < 1024)); then sizes=$SIZES_SMALL; else sizes=$SIZES; fi
  for size in $sizes; do make_file "$WORK/lin/$size.bin" "$(bytes_of "$size")"; done

  logf="$OUT/demo-buffer_$buf.log"
  for p in "$DEMO_PORT" "$DEMO_TLS_PORT"; do
    port_open "$p" && die "port $p already in use (ports: BENCH_PORT, BENCH_TLS_PORT)"
  done
  PORT=$DEMO_PORT TLS_PORT=$DEMO_TLS_PORT MUSTANG_MAX_KEEPALIVE=infinity \
    MUSTANG_REQUEST_PROCESS=false MUSTANG_SOCKET_BUFFER=$buf "$DEMO_CMD" </dev/null >"$logf" 2>&1 &
  DEMO_PID=$!
  wait_http "http://$HOST:$DEMO_PORT/" "$DEMO_PID" "mustang demo" "$logf" \
    || die "the demo (MUSTANG_SOCKET_BUFFER=$buf) is not serving http://$HOST:$DEMO_PORT/"
  say "demo up, MUSTANG_SOCKET_BUFFER=$buf (pid $DEMO_PID)"

  for proto in $PROTOCOLS; do
    case $proto in
      h2c) version=2; pargs=(--http2-prior-knowledge) ;;
      h1) version=1.1; pargs=(--http1.1 -H 'Expect:') ;;
      *) die "BENCH_LIN_PROTOCOLS: expected h2c or h1, got '$proto'" ;;
    esac
    # untimed warm-up: one upload of the smallest size (the first upload of
    # a fresh VM is slower and would make the growth look sub-linear)
    set -- $sizes
    upload_run "$OUT/warmup.txt" 900 "$(bytes_of "$1")" "$version" "${pargs[@]}" -X POST \
      -T "$WORK/lin/$1.bin" "http://$HOST:$DEMO_PORT/read_body" || true
    rm -f "$OUT/warmup.txt"
    for size in $sizes; do
      for round in $(seq 1 "$ROUNDS"); do
        kill -0 "$DEMO_PID" 2>/dev/null || die "the demo died, see $logf"
        out="$OUT/b$buf-$proto-$size.r$round.txt"
        rc=0
        upload_run "$out" 900 "$(bytes_of "$size")" "$version" "${pargs[@]}" -X POST \
          -T "$WORK/lin/$size.bin" "http://$HOST:$DEMO_PORT/read_body" || rc=$?
        ((rc == 0)) || { FAILED=$((FAILED + 1)); say "  upload failed (exit $rc), see $out"; }
        say "buffer $buf $proto $size: $(grep -E '^(time_total|response):' "$out" | tr '\n' ' ')"
      done
    done
  done
  stop_pid "$DEMO_PID" "mustang demo"
  DEMO_PID=""
done

"$PY" "$ROOT/bench/linear_report.py" "$OUT" "$RATIO" >"$OUT/table.txt"
# bench/run.sh (BENCH_LOCK_HELD=1) prints the table with its own report
[[ "${BENCH_LOCK_HELD:-0}" == 1 ]] || cat "$OUT/table.txt"
grep -q '^  ERROR' "$OUT/table.txt" && FAILED=$((FAILED + 1))
((FAILED == 0))
