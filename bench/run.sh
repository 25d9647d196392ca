#!/usr/bin/env bash
# Mustang benchmark suite, first version (see bench/README.md, shared/BENCH.md).
#
#   make bench            # or: bench/run.sh
#
# Runs, one at a time, on 127.0.0.1 only:
#   nginx (reference, same run):        W1a W1b W1c
#   Mustang demo, rp=false then true:   W1a W1b W1c W3a W3b
# and prints a table with ratios to nginx and to Cowboy 2.13 scaled by nginx.
# Raw outputs, logs and the table go to _bench/results-<timestamp>/.
#
# Env:
#   BENCH_DURATION=10s        wrk duration per W1 run
#   BENCH_WARMUP=2s           untimed wrk warm-up after each server start (0: none)
#   BENCH_W3_REQUESTS=2000    h2load -n for W3a/W3b
#   BENCH_WORKLOADS="W1a W1b W1c W3a W3b"   subset to run
#   BENCH_ROUNDS=3                          rounds of the whole sequence; the
#                                           report shows the median of each figure
#   BENCH_MODES="false true"  MUSTANG_REQUEST_PROCESS values to run the demo with
#   BENCH_SKIP_SETUP=1 / BENCH_SKIP_BUILD=1  skip scripts/setup.sh / make demo
#   BENCH_DEMO_CMD=scripts/run_demo.sh       command that runs the demo in the
#                             foreground (to test this harness with a stand-in)
#   BENCH_STRICT=1            exit 1 when an acceptance check FAILs
#   BENCH_NGINX_PORT=18080 BENCH_PORT=18081 BENCH_TLS_PORT=18443
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

HOST=127.0.0.1            # never anything else: loopback only
NGINX_PORT=${BENCH_NGINX_PORT:-18080}
DEMO_PORT=${BENCH_PORT:-18081}
DEMO_TLS_PORT=${BENCH_TLS_PORT:-18443}
DUR=${BENCH_DURATION:-10s}
WARMUP=${BENCH_WARMUP:-2s}
W3_N=${BENCH_W3_REQUESTS:-2000}
WORKLOADS=" ${BENCH_WORKLOADS:-W1a W1b W1c W3a W3b} "
MODES=${BENCH_MODES:-false true}
DEMO_CMD=${BENCH_DEMO_CMD:-$ROOT/scripts/run_demo.sh}
START_TIMEOUT=30

WORK="$ROOT/_bench"
NGX="$WORK/nginx"
BODY="$WORK/1mb.bin"

say() { echo "bench: $*"; }
die() { echo "bench: ERROR: $*" >&2; exit 1; }
want() { [[ "$WORKLOADS" == *" $1 "* ]]; }

mkdir -p "$WORK"
# Never two benchmarks at once on this machine.
exec 9>"$WORK/.lock"
flock -n 9 || die "another bench/run.sh is running (lock $WORK/.lock)"

# --- tools and build --------------------------------------------------------
[[ "${BENCH_SKIP_SETUP:-0}" == 1 ]] || scripts/setup.sh
[[ "${BENCH_SKIP_BUILD:-0}" == 1 ]] || make --no-print-directory demo \
  || die "build failed (make demo)"
for t in wrk h2load nginx curl flock; do
  command -v "$t" >/dev/null || die "$t not found (run scripts/setup.sh)"
done
PY="$ROOT/_tools/venv/bin/python"
[[ -x "$PY" ]] || PY=$(command -v python3) || die "python3 not found"

TS=$(date +%Y%m%d-%H%M%S)
RES="$WORK/results-$TS"
mkdir -p "$RES"

if [[ ! -f "$BODY" || $(stat -c %s "$BODY") -ne 1048576 ]]; then
  head -c 1048576 /dev/urandom >"$BODY.tmp" && mv "$BODY.tmp" "$BODY"
  say "generated $BODY (1 MiB random)"
fi

# --- process handling ---------------------------------------------------------
NGINX_PID=""
DEMO_PID=""
TOOL_PID=""
FAILED_RUNS=0

port_open() { (exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null; }

stop_pid() { # pid name
  local pid=$1 i
  [[ -n "$pid" ]] || return 0
  kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for i in $(seq 1 100); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    say "$2 (pid $pid) ignored SIGTERM for 10 s: SIGKILL"
    pkill -KILL -P "$pid" 2>/dev/null || true
    kill -KILL "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
}

cleanup() {
  local rc=$?
  trap - INT TERM
  stop_pid "$TOOL_PID" "load tool"
  stop_pid "$DEMO_PID" "mustang demo"
  stop_pid "$NGINX_PID" nginx
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

wait_http() { # url pid name logfile
  local url=$1 pid=$2 name=$3 logf=$4 deadline=$((SECONDS + START_TIMEOUT))
  while ! curl -sf -o /dev/null --max-time 1 "$url"; do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "bench: ERROR: $name exited before answering $url; end of $logf:" >&2
      tail -n 30 "$logf" >&2 || true
      return 1
    fi
    if ((SECONDS >= deadline)); then
      echo "bench: ERROR: $name did not answer $url within ${START_TIMEOUT}s; end of $logf:" >&2
      tail -n 30 "$logf" >&2 || true
      return 1
    fi
    sleep 0.2
  done
}

start_nginx() {
  port_open "$NGINX_PORT" && die "port $NGINX_PORT already in use (stale nginx or a test server? port: BENCH_NGINX_PORT)"
  rm -rf "$NGX"
  mkdir -p "$NGX/logs" "$NGX/tmp"
  sed -e "s|@DIR@|$NGX|g" -e "s|@PORT@|$NGINX_PORT|g" bench/nginx.conf >"$NGX/nginx.conf"
  nginx -t -q -p "$NGX/" -c "$NGX/nginx.conf" -e "$NGX/logs/error.log" \
    || die "nginx config test failed"
  nginx -p "$NGX/" -c "$NGX/nginx.conf" -e "$NGX/logs/error.log" \
    </dev/null >"$NGX/logs/stdout.log" 2>&1 &
  NGINX_PID=$!
  wait_http "http://$HOST:$NGINX_PORT/" "$NGINX_PID" nginx "$NGX/logs/error.log" \
    || die "nginx did not start"
  say "nginx up on $HOST:$NGINX_PORT (pid $NGINX_PID)"
}

start_demo() { # request_process(true|false)
  local rp=$1 logf="$RES/demo-rp_$1.log"
  local p
  for p in "$DEMO_PORT" "$DEMO_TLS_PORT"; do
    port_open "$p" && die "port $p already in use (a demo or test server still running? ports: BENCH_PORT, BENCH_TLS_PORT)"
  done
  PORT=$DEMO_PORT TLS_PORT=$DEMO_TLS_PORT MUSTANG_MAX_KEEPALIVE=infinity \
    MUSTANG_REQUEST_PROCESS=$rp "$DEMO_CMD" </dev/null >"$logf" 2>&1 &
  DEMO_PID=$!
  if ! wait_http "http://$HOST:$DEMO_PORT/" "$DEMO_PID" "mustang demo" "$logf"; then
    die "the Mustang demo is not serving http://$HOST:$DEMO_PORT/ (mustang_demo:start/0 missing or broken? see $logf)"
  fi
  say "mustang demo up on $HOST:$DEMO_PORT, MUSTANG_REQUEST_PROCESS=$rp (pid $DEMO_PID)"
}

stop_demo() {
  stop_pid "$DEMO_PID" "mustang demo"
  DEMO_PID=""
}

# run_tool <file> <timeout seconds> <cmd...>: raw output with a header line
# (the command) and a trailer (its exit status).
# Load tools run in the background + wait, so that a SIGTERM/SIGINT to this
# script is handled at once (bash defers traps until a foreground child ends).
run_bg() { # <out> <limit> <cmd...>; returns the command's exit status
  local out=$1 limit=$2 rc=0
  shift 2
  timeout -k 5 "$limit" "$@" </dev/null >>"$out" 2>&1 &
  TOOL_PID=$!
  wait "$TOOL_PID" || rc=$?
  TOOL_PID=""
  return "$rc"
}

run_tool() {
  local out=$1 limit=$2 rc=0
  shift 2
  echo "# cmd: $*" >"$out"
  run_bg "$out" "$limit" "$@" || rc=$?
  echo "# exit: $rc" >>"$out"
  if ((rc != 0)); then
    FAILED_RUNS=$((FAILED_RUNS + 1))
    say "  $(basename "$out" .txt): command failed (exit $rc), see $out"
  fi
  return 0
}

dur_s() { # 10s / 10 / 1m -> seconds
  local d=$1
  case $d in
    *ms) echo 1 ;; *s) echo "${d%s}" ;; *m) echo $((${d%m} * 60)) ;; *h) echo $((${d%h} * 3600)) ;;
    *) echo "$d" ;;
  esac
}
WRK_LIMIT=$(($(dur_s "$DUR") + 60))

wrk_run() { # id server port threads conns
  local id=$1 server=$2 port=$3 t=$4 c=$5
  want "$id" || return 0
  say "$id $server: wrk -t$t -c$c -d$DUR (round $ROUND)"
  run_tool "$RES/$id-$server.r$ROUND.txt" "$WRK_LIMIT" \
    wrk "-t$t" "-c$c" "-d$DUR" --latency "http://$HOST:$port/"
  grep -E '^(Requests/sec|Transfer/sec)|^ +99%' "$RES/$id-$server.r$ROUND.txt" | sed 's/^ */    /' || true
  sleep 1
}

h2load_run() { # id server conns
  local id=$1 server=$2 c=$3
  want "$id" || return 0
  say "$id $server: h2load --h1 -c$c -m1 -n $W3_N -d 1mb.bin /read_body (round $ROUND)"
  run_tool "$RES/$id-$server.r$ROUND.txt" 300 \
    h2load --h1 "-c$c" -m1 -n "$W3_N" -d "$BODY" "http://$HOST:$DEMO_PORT/read_body"
  grep -E '^(finished in|requests:|status codes:)' "$RES/$id-$server.r$ROUND.txt" | sed 's/^/    /' || true
  sleep 1
}

warmup() { # port
  [[ "$WARMUP" == 0 || "$WARMUP" == 0s ]] && return 0
  run_bg /dev/null 60 wrk -t2 -c10 "-d$WARMUP" "http://$HOST:$1/" || true
}

DEMO_DIED=0
demo_alive() { # reports a dead demo once per start
  kill -0 "$DEMO_PID" 2>/dev/null && return 0
  if ((!DEMO_DIED)); then
    DEMO_DIED=1
    FAILED_RUNS=$((FAILED_RUNS + 1))
    say "  the demo died (or was killed); skipping the rest of this mode; see $RES/demo-rp_$1.log"
  fi
  return 1
}

# --- record the setting ---------------------------------------------------------
{
  echo "date: $(date -Is)"
  echo "git: $(git rev-parse --short HEAD 2>/dev/null || echo none)$(git diff --quiet HEAD 2>/dev/null || echo ' (dirty)')"
  echo "cores: $(nproc)"
  echo "loadavg before: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "BENCH_DURATION=$DUR BENCH_WARMUP=$WARMUP BENCH_W3_REQUESTS=$W3_N BENCH_ROUNDS=${BENCH_ROUNDS:-3}"
  echo "workloads:$WORKLOADS modes(MUSTANG_REQUEST_PROCESS): $MODES"
  echo "otp: $(erl -noshell -eval 'io:put_chars(erlang:system_info(otp_release)), halt().' 2>/dev/null || echo '?')"
  echo "nginx: $(nginx -v 2>&1)"
  echo "wrk: $(wrk -v 2>&1 | head -n1)"
  echo "h2load: $(h2load --version 2>&1 | head -n1)"
  echo "demo command: $DEMO_CMD"
} >"$RES/meta.txt"
say "results in $RES"

ROUNDS=${BENCH_ROUNDS:-3}
for ROUND in $(seq 1 "$ROUNDS"); do
# --- nginx reference ------------------------------------------------------------
if want W1a || want W1b || want W1c; then
  start_nginx
  warmup "$NGINX_PORT"
  wrk_run W1a nginx "$NGINX_PORT" 1 1
  wrk_run W1b nginx "$NGINX_PORT" 2 10
  wrk_run W1c nginx "$NGINX_PORT" 2 100
  stop_pid "$NGINX_PID" nginx   # keep the machine quiet for Mustang
  NGINX_PID=""
fi

# --- Mustang, each request mode ---------------------------------------------------
for rp in $MODES; do
  case $rp in
    false) server=mustang ;;
    true) server=mustang-rp ;;
    *) die "BENCH_MODES: expected true/false, got '$rp'" ;;
  esac
  start_demo "$rp"
  DEMO_DIED=0
  warmup "$DEMO_PORT"
  for step in "W1a 1 1" "W1b 2 10" "W1c 2 100"; do
    set -- $step
    demo_alive "$rp" || break
    wrk_run "$1" "$server" "$DEMO_PORT" "$2" "$3"
  done
  demo_alive "$rp" && h2load_run W3a "$server" 1
  demo_alive "$rp" && h2load_run W3b "$server" 10
  demo_alive "$rp" || true   # also catches a death during W3b
  stop_demo
done
done

# --- report -------------------------------------------------------------------------
echo
"$PY" "$ROOT/bench/report.py" "$RES" | tee "$RES/table.txt"
echo "bench: raw outputs, logs and table.txt in $RES"

if ((FAILED_RUNS)); then
  echo "bench: $FAILED_RUNS run(s) failed (see above)" >&2
  exit 1
fi
if [[ "${BENCH_STRICT:-0}" == 1 ]] && grep -q '=> FAIL' "$RES/table.txt"; then
  exit 1
fi
exit 0
