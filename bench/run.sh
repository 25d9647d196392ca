#!/usr/bin/env bash
# Mustang benchmark suite (see bench/README.md, shared/BENCH.md).
#
#   make bench            # or: bench/run.sh
#   make bench QUICK=1    # a representative subset, shorter runs (< 3 minutes)
#
# Starts every server once, on 127.0.0.1 only, and keeps them all up:
#   Mustang demo, rp=false ("mustang", the headline figure: the demo's defaults)
#   Mustang demo, rp=true ("mustang-rp", HTTP/1.1 handler rows only; BENCH_MODES)
#   Cowboy 2.13 and Elli 3.3 ($MUSTANG_PEERS/start.sh, black boxes; Elli: HTTP/1.1)
#   nginx (W1, W2, W4) and the Websocket reference server (bench/wsref, W6)
# then runs BENCH_ROUNDS rounds; in each round every workload runs once
# against every server before the next workload, the server order rotated
# from round to round. The report (bench/report.py) gives the median and the
# min-max of each server per workload and the ratios Mustang / Cowboy, / Elli,
# / nginx; bench/publish.py adds a Markdown report and PNG charts, with the
# scaling curves of bench/scaling.sh (connections 1 to 10,000; body size
# 1 KiB to 1 GiB). Raw outputs, logs and reports go to _bench/results-<stamp>/;
# BENCH_PUBLISH=1 copies the report and charts to bench/results/.
# Then the one-core phase (BENCH_PIN): the single-connection workloads
# again, each server started alone under `taskset -c $BENCH_PIN` and the
# client on the same CPU (raw outputs in onecore/), BENCH_PIN_ROUNDS rounds.
# One benchmark at a time on the machine: the script holds
# /tmp/mustang-bench.lock (shared by every checkout) for its whole run.
#
# Env (defaults; QUICK=1 changes the ones marked Q, see bench/README.md):
#   QUICK=0                   1: W1a W1c W2a W2b W3b W4a W6a W6b, 2 s runs, rp=false
#                             only, no scaling curves
#   BENCH_DURATION=10s (Q 2s) wrk duration per W1 run
#   BENCH_WARMUP=2s (Q 1s)    untimed wrk warm-up of each HTTP server after the start
#   BENCH_W3_REQUESTS=2000 (Q 1000)  h2load -n for W3a/W3b
#   BENCH_W2A_REQUESTS=200000 BENCH_W2B_REQUESTS=20000 BENCH_W4_REQUESTS=2000 (Q 50000 10000 1000)
#                             h2load -n for W2a, W2b, W4a/W4b
#   BENCH_W5_BYTES=1073741824 upload size of W5a/b/c (_bench/1gb.bin; other
#                             sizes use _bench/w5-<bytes>.bin)
#   BENCH_WORKLOADS="W1a W1b W1c W2a W2b W3a W3b W4a W4b W5a W5b W5c W6a ... W6f W7"
#                             subset to run; add W5lin for bench/h2_linear.sh
#   BENCH_ROUNDS=3            interleaved rounds; the report shows medians and min-max
#   BENCH_PIN=0               the one-core phase after the rounds: W1a W2b W3a W4a W6a
#                             (those selected) with each server VM started under
#                             `taskset -c $BENCH_PIN` (it then runs one scheduler) and the
#                             client on that CPU too; "none": no such phase
#   BENCH_PIN_ROUNDS=BENCH_ROUNDS (Q 1)  rounds of the one-core phase
#   BENCH_W7_CONNS=10000 BENCH_W7_SECONDS=30 BENCH_W7_WARMUP=5 BENCH_W7_CONNECT_RATE=2000
#                             W7 (paced GET /sleep, wsload -mode paced): connections, measured
#                             and warm-up seconds, connections opened per second
#   BENCH_W7_SCALE="1000 5000 10000" BENCH_W7_SCALE_SECONDS=15  W7's connection curve (one run
#                             per point and server after the rounds); "none": no curve
#   BENCH_MODES="false true" (Q false)  MUSTANG_REQUEST_PROCESS values (one demo each)
#   MUSTANG_PEERS=../shared/peers  where start.sh cowboy|elli is; "none": nginx only
#   BENCH_SCALING=1 (Q 0)     the scaling curves (bench/scaling.sh); 0 by default with a BENCH_WORKLOADS subset
#   BENCH_PUBLISH=0           1: copy report.md (as README.md) and the PNGs to bench/results/
#   BENCH_GAP=1 (Q 0.2)       seconds of rest between two runs
#   BENCH_H3=1                0: no HTTP/3 phase (bench/h3.sh: Mustang HTTP/3 beside its
#                             HTTP/2 over TLS and quic-go's server; H3_* variables there)
#   BENCH_SKIP_SETUP=1 / BENCH_SKIP_BUILD=1  skip scripts/setup.sh / make demo
#   BENCH_DEMO_CMD=scripts/run_demo.sh       command that runs the demo in the
#                             foreground (to test this harness with a stand-in)
#   BENCH_STRICT=1            exit 1 when an acceptance check FAILs
#   BENCH_WS_DURATION=3s (Q 2s) BENCH_WS_WARMUP=1s (Q 0)  measured time / untimed
#                             warm-up of each Websocket run (wsload -duration / -warmup)
#   BENCH_WSREF_LIB=auto      reference server: auto (gorilla, coder/websocket
#                             when deflate is offered), gorilla, coder, node
#   BENCH_WS_PATH=/ws BENCH_WS_DEFLATE_PATH=/ws   demo paths (plain / deflate)
#   BENCH_BASELINE=_bench/results-XXXX  a previous run: the report adds ratios
#                             to its figures ("x base")
#   BENCH_NGINX_PORT=18080 BENCH_NGINX_H2_PORT=18082 BENCH_PORT=18081 BENCH_TLS_PORT=18443
#   BENCH_RP_PORT=18085 BENCH_RP_TLS_PORT=18445 BENCH_WSREF_PORT=18083
#   (the peers' ports are fixed by start.sh: Cowboy 8090 and 8092, Elli 8091)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

HOST=127.0.0.1            # never anything else: loopback only
NGINX_PORT=${BENCH_NGINX_PORT:-18080}
NGINX_H2_PORT=${BENCH_NGINX_H2_PORT:-18082}
DEMO_PORT=${BENCH_PORT:-18081}
DEMO_TLS_PORT=${BENCH_TLS_PORT:-18443}
RP_PORT=${BENCH_RP_PORT:-18085}
RP_TLS_PORT=${BENCH_RP_TLS_PORT:-18445}
COWBOY_PORT=8090          # fixed by $MUSTANG_PEERS/start.sh
COWBOY_H2_PORT=8092       # Cowboy with its HTTP/2 frame-rate limit raised
ELLI_PORT=8091
QUICK=${QUICK:-0}
[[ -n "$QUICK" ]] || QUICK=0
if [[ "$QUICK" == 1 ]]; then
  # A representative subset in under 3 minutes (bench/README.md).
  : "${BENCH_DURATION:=2s}" "${BENCH_WARMUP:=1s}" "${BENCH_W2A_REQUESTS:=50000}"
  : "${BENCH_W2B_REQUESTS:=10000}" "${BENCH_W3_REQUESTS:=1000}" "${BENCH_W4_REQUESTS:=1000}"
  : "${BENCH_WORKLOADS:=W1a W1c W2a W2b W3b W4a W6a W6b}" "${BENCH_MODES:=false}"
  : "${BENCH_WS_DURATION:=2s}" "${BENCH_WS_WARMUP:=0}" "${BENCH_SCALING:=0}" "${BENCH_GAP:=0.2}"
  : "${BENCH_PIN_ROUNDS:=1}"
fi
DUR=${BENCH_DURATION:-10s}
WARMUP=${BENCH_WARMUP:-2s}
W3_N=${BENCH_W3_REQUESTS:-2000}
W2A_N=${BENCH_W2A_REQUESTS:-200000}
W2B_N=${BENCH_W2B_REQUESTS:-20000}
W4_N=${BENCH_W4_REQUESTS:-2000}
W5_BYTES=${BENCH_W5_BYTES:-1073741824}
WORKLOADS=" ${BENCH_WORKLOADS:-W1a W1b W1c W2a W2b W3a W3b W4a W4b W5a W5b W5c W6a W6b W6c W6d W6e W6f W7} "
WS_DUR=${BENCH_WS_DURATION:-3s}
WS_WARMUP=${BENCH_WS_WARMUP:-1s}
WSREF_LIB=${BENCH_WSREF_LIB:-auto}
WSREF_PORT=${BENCH_WSREF_PORT:-18083}
WS_PATH=${BENCH_WS_PATH:-/ws}
WS_DEFLATE_PATH=${BENCH_WS_DEFLATE_PATH:-/ws}
BASELINE=${BENCH_BASELINE:-}
MODES=${BENCH_MODES:-false true}
DEMO_CMD=${BENCH_DEMO_CMD:-$ROOT/scripts/run_demo.sh}
# the scaling curves come with the default workload set; a subset opts in
SCALING=${BENCH_SCALING:-$([[ -z "${BENCH_WORKLOADS:-}" ]] && echo 1 || echo 0)}
PUBLISH=${BENCH_PUBLISH:-0}
GAP=${BENCH_GAP:-1}
ROUNDS=${BENCH_ROUNDS:-3}
W7_CONNS=${BENCH_W7_CONNS:-10000}
W7_SECONDS=${BENCH_W7_SECONDS:-30}
W7_WARMUP=${BENCH_W7_WARMUP:-5}
W7_CONNECT_RATE=${BENCH_W7_CONNECT_RATE:-2000}
W7_SCALE=${BENCH_W7_SCALE:-1000 5000 10000}
W7_SCALE_SECONDS=${BENCH_W7_SCALE_SECONDS:-15}
PIN=${BENCH_PIN:-0}
PIN_ROUNDS=${BENCH_PIN_ROUNDS:-$ROUNDS}
# The peers: ../shared/peers when it exists; MUSTANG_PEERS=none runs without.
if [[ -z "${MUSTANG_PEERS:-}" && -x "$ROOT/../shared/peers/start.sh" ]]; then
  MUSTANG_PEERS=$(cd "$ROOT/../shared/peers" && pwd)
fi
PEERS=${MUSTANG_PEERS:-none}
if [[ "$PEERS" != none ]]; then
  [[ -x "$PEERS/start.sh" ]] || { echo "bench: ERROR: MUSTANG_PEERS: no $PEERS/start.sh" >&2; exit 1; }
  PEERS=$(cd "$PEERS" && pwd)
fi
START_TIMEOUT=30

WORK="$ROOT/_bench"
NGX="$WORK/nginx"
BODY="$WORK/1mb.bin"
if [[ "$W5_BYTES" == 1073741824 ]]; then W5_FILE="$WORK/1gb.bin"; else W5_FILE="$WORK/w5-$W5_BYTES.bin"; fi

TAG=bench
TOOL_PID=""
source "$ROOT/bench/lib.sh"
want() { [[ "$WORKLOADS" == *" $1 "* ]]; }
want_any() { local w; for w in "$@"; do want "$w" && return 0; done; return 1; }

# Websocket workloads. W6a-W6f are BENCH.md's (HTTP/1.1, no deflate):
#   id   mode kind   size  conns
WS_BENCH=(
  "W6a echo binary 1024 1"
  "W6b send binary 1024 1"
  "W6c send utf8 1024 1"
  "W6d send binary 65536 1"
  "W6e send utf8 65536 1"
  "W6f echo binary 1024 10"
)
# The issue's matrix, opt-in (BENCH_WORKLOADS=W6matrix, or W6m-... ids,
# which may be shell patterns: "W6m-send-*-h2-*"), 1 connection each:
# W6m-<echo|send>-<binary|ascii|mixed|utf8>-<1k|64k>-<h1|h2>-<plain|deflate>,
# listed in report order.
WS_MATRIX=()
for defl in plain deflate; do for proto in h1 h2; do for mode in echo send; do
  for size in 1k 64k; do for kind in binary ascii mixed utf8; do
    WS_MATRIX+=("W6m-$mode-$kind-$size-$proto-$defl")
  done; done
done; done; done

expanded=""
for w in $WORKLOADS; do
  case $w in
    W1a | W1b | W1c | W2a | W2b | W3a | W3b | W4a | W4b | W5a | W5b | W5c | W5lin) expanded+=" $w" ;;
    W6a | W6b | W6c | W6d | W6e | W6f | W7) expanded+=" $w" ;;
    W6matrix) expanded+=" ${WS_MATRIX[*]}" ;;
    none) ;;   # no workload (e.g. only the scaling curves: BENCH_SCALING=1)
    W6m-*)
      found=0
      for m in "${WS_MATRIX[@]}"; do
        # shellcheck disable=SC2053
        if [[ $m == $w ]]; then expanded+=" $m"; found=1; fi
      done
      ((found)) || die "BENCH_WORKLOADS: '$w' matches no W6m-<echo|send>-<binary|ascii|mixed|utf8>-<1k|64k>-<h1|h2>-<plain|deflate> workload"
      ;;
    *) die "BENCH_WORKLOADS: unknown workload '$w'" ;;
  esac
done
WORKLOADS="$expanded "
WS_SELECTED=()   # selected Websocket workloads, in run order
for e in "${WS_BENCH[@]}"; do want "${e%% *}" && WS_SELECTED+=("${e%% *}"); done
for m in "${WS_MATRIX[@]}"; do want "$m" && WS_SELECTED+=("$m"); done
if [[ -n "$BASELINE" ]]; then
  [[ -d "$BASELINE" ]] || die "BENCH_BASELINE: no directory '$BASELINE'"
  BASELINE=$(cd "$BASELINE" && pwd)
fi
case $WSREF_LIB in auto | gorilla | coder | node) ;; *) die "BENCH_WSREF_LIB: auto, gorilla, coder or node" ;; esac
[[ "$W5_BYTES" =~ ^[0-9]+$ ]] || die "BENCH_W5_BYTES: expected a byte count, got '$W5_BYTES'"
for v in "$W7_CONNS" "$W7_SECONDS" "$W7_WARMUP" "$W7_CONNECT_RATE" $W7_SCALE_SECONDS; do
  [[ "$v" =~ ^[0-9]+$ ]] || die "BENCH_W7_*: expected whole numbers, got '$v'"
done
[[ "$W7_SCALE" == none ]] && W7_SCALE=""
# The one-core phase: the single-connection workloads selected, in run order.
PIN_ORDER=()
if [[ "$PIN" != none ]]; then
  [[ "$PIN" =~ ^[0-9]+$ ]] || die "BENCH_PIN: a CPU number or none, got '$PIN'"
  [[ "$PIN_ROUNDS" =~ ^[1-9][0-9]*$ ]] || die "BENCH_PIN_ROUNDS: a number of rounds, got '$PIN_ROUNDS'"
  command -v taskset >/dev/null || die "taskset not found (BENCH_PIN; BENCH_PIN=none runs without the one-core phase)"
  taskset -c "$PIN" true 2>/dev/null || die "BENCH_PIN: CPU $PIN is not available here (taskset -c $PIN failed)"
  for w in W1a W2b W3a W4a W6a; do want "$w" && PIN_ORDER+=("$w"); done
fi

mkdir -p "$WORK"
take_bench_lock
LOCKED_AT=$SECONDS   # the time spent waiting for another benchmark is not ours

# --- tools and build --------------------------------------------------------
[[ "${BENCH_SKIP_SETUP:-0}" == 1 ]] || scripts/setup.sh bench
[[ "${BENCH_SKIP_BUILD:-0}" == 1 ]] || make --no-print-directory demo \
  || die "build failed (make demo)"
for t in wrk h2load nginx curl flock; do
  command -v "$t" >/dev/null || die "$t not found (run scripts/setup.sh)"
done
# Websocket tools: bench/wsload (client) and bench/wsref (reference server),
# built with Go into _tools/go/bin when missing or when their sources changed
# (a hash of the sources is kept beside the binary).
WSLOAD="$GO_BIN/wsload"
WSREF="$GO_BIN/wsref"
if ((${#WS_SELECTED[@]})) || want W7; then
  go_tool wsload
fi
if ((${#WS_SELECTED[@]})); then
  [[ "$WSREF_LIB" == node ]] || go_tool wsref
  if [[ "$WSREF_LIB" == node && ! -d "$ROOT/_tools/node/node_modules/ws" ]]; then
    command -v npm >/dev/null || die "npm not found (BENCH_WSREF_LIB=node)"
    say "installing ws into _tools/node"
    npm install --prefix "$ROOT/_tools/node" --no-audit --no-fund ws@8 >/dev/null || die "npm install ws failed"
  fi
fi

PY="$ROOT/_tools/venv/bin/python"
[[ -x "$PY" ]] || PY=$(command -v python3) || die "python3 not found"

TS=$(date +%Y%m%d-%H%M%S)
RES="$WORK/results-$TS"
mkdir -p "$RES"

make_file "$BODY" 1048576
# W5: 1 GiB of disk under _bench/ (kept out of git by .gitignore), made once.
want_any W5a W5b W5c && make_file "$W5_FILE" "$W5_BYTES"

# --- process handling ---------------------------------------------------------
FAILED_RUNS=0
# Where the rounds' raw outputs and server logs go, and how their processes
# are placed: the one-core phase sets OUT=$RES/onecore, PIN_CMD=(taskset -c
# N), which prefixes every server and client command, and PLACEMENT, which
# each raw output records.
OUT=$RES
PIN_CMD=()
PLACEMENT=""
source "$ROOT/bench/servers.sh"

cleanup() {
  local rc=$?
  trap - INT TERM
  stop_pid "$TOOL_PID" "load tool"
  stop_servers
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# run_tool <file> <timeout seconds> <cmd...>: raw output with a header line
# (the command) and a trailer (its exit status).
run_tool() {
  local out=$1 limit=$2 rc=0
  shift 2
  echo "# cmd: ${PIN_CMD[*]:+${PIN_CMD[*]} }$*" >"$out"
  [[ -z "$PLACEMENT" ]] || echo "# placement: $PLACEMENT" >>"$out"
  run_bg "$out" "$limit" "${PIN_CMD[@]}" "$@" || rc=$?
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

wrk_run() { # id server port
  local id=$1 server=$2 port=$3 t=2 c
  case $id in W1a) t=1; c=1 ;; W1b) c=10 ;; W1c) c=100 ;; esac
  say "$id $server: wrk -t$t -c$c -d$DUR (round $ROUND${PLACEMENT:+, $PLACEMENT})"
  run_tool "$OUT/$id-$server.r$ROUND.txt" "$WRK_LIMIT" \
    wrk "-t$t" "-c$c" "-d$DUR" --latency "http://$HOST:$port/"
  grep -E '^(Requests/sec|Transfer/sec)|^ +99%' "$OUT/$id-$server.r$ROUND.txt" | sed 's/^ */    /' || true
}

h2load_run() { # id server port: W2a W2b (h2c hello), W3a W3b (h1 bodies), W4a W4b (h2c bodies)
  local id=$1 server=$2 port=$3 args
  case $id in
    W2a) args=(-c10 -m10 -n "$W2A_N" "http://$HOST:$port/") ;;
    W2b) args=(-c1 -m1 -n "$W2B_N" "http://$HOST:$port/") ;;
    W3a) args=(--h1 -c1 -m1 -n "$W3_N" -d "$BODY" "http://$HOST:$port/read_body") ;;
    W3b) args=(--h1 -c10 -m1 -n "$W3_N" -d "$BODY" "http://$HOST:$port/read_body") ;;
    W4a) args=(-c1 -m1 -n "$W4_N" -d "$BODY" "http://$HOST:$port/read_body") ;;
    W4b) args=(-c10 -m1 -n "$W4_N" -d "$BODY" "http://$HOST:$port/read_body") ;;
  esac
  say "$id $server: h2load ${args[*]/#$WORK\//} (round $ROUND${PLACEMENT:+, $PLACEMENT})"
  run_tool "$OUT/$id-$server.r$ROUND.txt" 300 h2load "${args[@]}"
  grep -E '^(finished in|requests:|status codes:|Application protocol:)' "$OUT/$id-$server.r$ROUND.txt" | sed 's/^/    /' || true
}

# W5a (HTTP/1.1), W5b (h2c prior knowledge), W5c (h2 over TLS, ALPN): one
# timed upload of $W5_FILE to the server's /read_body.
upload_w5() { # id server port
  local id=$1 server=$2 port=$3 out="$OUT/$1-$2.r$ROUND.txt" rc=0 args version tls=$DEMO_TLS_PORT
  [[ $server == mustang-rp ]] && tls=$RP_TLS_PORT
  case $id in
    W5a) version=1.1; args=(-H 'Expect:' -X POST -T "$W5_FILE" "http://$HOST:$port/read_body") ;;
    W5b) version=2; args=(--http2-prior-knowledge -X POST -T "$W5_FILE" "http://$HOST:$port/read_body") ;;
    W5c) version=2; args=(-k --http2 -X POST -T "$W5_FILE" "https://$HOST:$tls/read_body") ;;
  esac
  say "$id $server: curl ${args[*]/#$WORK\//} (round $ROUND)"
  upload_run "$out" 600 "$W5_BYTES" "$version" "${args[@]}" || rc=$?
  if ((rc != 0)); then
    FAILED_RUNS=$((FAILED_RUNS + 1))
    say "  $id-$server: curl failed (exit $rc), see $out"
  elif ! grep -qx "response: $W5_BYTES" "$out" || ! grep -qx 'http_code: 200' "$out" \
    || ! grep -qx "http_version: $version" "$out"; then
    # a wrong answer is a failure, not a figure
    FAILED_RUNS=$((FAILED_RUNS + 1))
    say "  $id-$server: wrong answer (expected 200, HTTP/$version, body $W5_BYTES), see $out"
  fi
  grep -E '^(time_total|http_code|response):' "$out" | tr '\n' ' ' | sed 's/^/    /; s/ $/\n/' || true
}

# ws_run <id> <server> <port>: one wsload run; the raw file holds the
# command, wsload's JSON line and the exit status.
ws_secs() { local d; d=$(dur_s "$1"); d=${d%%.*}; echo $((${d:-0} + 1)); }
WS_LIMIT=$(($(ws_secs "$WS_DUR") + $(ws_secs "$WS_WARMUP") + 40))

# w7_run <out> <server> <port> <conns> <seconds>: one paced run (BENCH.md W7):
# <conns> keep-alive connections, each GET /sleep once a second (the demo and
# the peers answer 1 KiB after 100 ms), after BENCH_W7_WARMUP unmeasured
# seconds. wsload -mode paced exits 0 when the run completed: its errors are
# figures of the row (the report shows them), not a failed run.
cpu_ticks() { # pid: its user + system CPU time so far, in clock ticks
  awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0
}
w7_run() {
  local out=$1 server=$2 port=$3 conns=$4 secs=$5 pid=${PIDS[$2]} ticks
  local args=(-mode paced -url "http://$HOST:$port/sleep" -conns "$conns" -rate 1
    -connect-rate "$W7_CONNECT_RATE" -duration "${secs}s" -warmup "${W7_WARMUP}s"
    -timeout 10s -expect-status 200 -expect-length 1024)
  say "$(basename "$out" .txt) $server: wsload ${args[*]} (round ${ROUND:-})"
  ticks=$(cpu_ticks "$pid")
  run_tool "$out" $((conns / W7_CONNECT_RATE + W7_WARMUP + secs + 60)) "$WSLOAD" "${args[@]}"
  echo "# loadavg: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out"   # its 1-minute figure covers the run
  # the server's CPU time over the run (the VM: start.sh and run_demo.sh exec it)
  echo "# server_cpu_s: $(awk -v a="$ticks" -v b="$(cpu_ticks "$pid")" -v hz="$(getconf CLK_TCK)" \
    'BEGIN {printf "%.2f", (b - a) / hz}')" >>"$out"
  grep '^{' "$out" | "$PY" -c 'import json,sys
for l in sys.stdin:
    d = json.loads(l)
    print("    %s req/s, p50 %s ms, p99 %s ms, p99.9 %s ms, max %s ms, errors %s, client CPU %s s %s" % (
          d.get("req_s"), d.get("p50_ms"), d.get("p99_ms"), d.get("p999_ms"), d.get("max_ms"),
          d.get("errors"), d.get("client_cpu_s"), d.get("error", "")[:200]))' || true
  # let the server close the connections before the next run
  sleep 3
}
ws_run() {
  local id=$1 server=$2 port=$3 mode kind size conns proto=h1 defl=plain path=$WS_PATH
  local args e
  if [[ $id == W6m-* ]]; then
    IFS=- read -r _ mode kind size proto defl <<<"$id"
    conns=1
    case $size in 1k) size=1024 ;; 64k) size=65536 ;; esac
  else
    for e in "${WS_BENCH[@]}"; do
      [[ "${e%% *}" == "$id" ]] && read -r _ mode kind size conns <<<"$e"
    done
  fi
  args=(-proto "$proto" -mode "$mode" -kind "$kind" -size "$size" -conns "$conns"
    -duration "$WS_DUR" -warmup "$WS_WARMUP")
  if [[ $defl == deflate ]]; then
    args+=(-deflate)
    [[ $server == mustang* ]] && path=$WS_DEFLATE_PATH
  fi
  say "$id $server: wsload ${args[*]} (round $ROUND${PLACEMENT:+, $PLACEMENT})"
  run_tool "$OUT/$id-$server.r$ROUND.txt" "$WS_LIMIT" "$WSLOAD" -url "ws://$HOST:$port$path" "${args[@]}"
  grep '^{' "$OUT/$id-$server.r$ROUND.txt" | "$PY" -c 'import json,sys
for l in sys.stdin:
    d = json.loads(l)
    print("    %s frames/s, %s MB/s, p99 %s us, errors %s %s" % (d.get("frames_s"), d.get("mb_s"),
          d.get("p99_us"), d.get("errors"), d.get("error", "")))' || true
}

warmup() { # port
  [[ "$WARMUP" == 0 || "$WARMUP" == 0s ]] && return 0
  run_bg /dev/null 60 "${PIN_CMD[@]}" wrk -t2 -c10 "-d$WARMUP" "http://$HOST:$1/" || true
}

# server_alive <server>: a server that exited under the benchmark is a
# failed run (incidents.txt, the report); it is started again, at most
# BENCH_RESTARTS (3) times per server, so that one crash or stray kill on
# this shared machine does not void the rest of the run.
declare -A RESTARTS=()
MAX_RESTARTS=${BENCH_RESTARTS:-3}
server_alive() {
  local s=$1 n=${RESTARTS[$1]:-0}
  kill -0 "${PIDS[$s]}" 2>/dev/null && return 0
  ((n > MAX_RESTARTS)) && return 1   # given up on, said so already
  RESTARTS[$s]=$((n + 1))
  FAILED_RUNS=$((FAILED_RUNS + 1))
  if ((n == MAX_RESTARTS)); then
    echo "round ${ROUND:-?}${PLACEMENT:+ ($PLACEMENT)}, before ${CUR_WL:-?}: $s (pid ${PIDS[$s]}) exited again: skipping its remaining runs (see $s's log)" >>"$RES/incidents.txt"
    say "  $s exited again; skipping its remaining runs; see its log in $OUT"
    return 1
  fi
  echo "round ${ROUND:-?}${PLACEMENT:+ ($PLACEMENT)}, before ${CUR_WL:-?}: $s (pid ${PIDS[$s]}) had exited (crash or killed; see its log): restarted" >>"$RES/incidents.txt"
  say "  $s (pid ${PIDS[$s]}) exited (see its log in $OUT): restarting it"
  restart_server "$s"
}

# run_one <workload> <server>: one run of one workload against one server.
run_one() {
  local wl=$1 s=$2 port
  CUR_WL=$wl
  server_alive "$s" || return 0
  port=$(port_for "$s" "$wl")
  case $wl in
    W1?) wrk_run "$wl" "$s" "$port" ;;
    W2? | W3? | W4?) h2load_run "$wl" "$s" "$port" ;;
    W5?) upload_w5 "$wl" "$s" "$port" ;;
    W6*) ws_run "$wl" "$s" "$port" ;;
    W7) w7_run "$RES/W7-$s.r$ROUND.txt" "$s" "$port" "$W7_CONNS" "$W7_SECONDS" ;;
  esac
  sleep "$GAP"
}

# --- the servers -----------------------------------------------------------------
HTTP_ORDER=()   # selected HTTP workloads, in run order
for w in W1a W1b W1c W2a W2b W3a W3b W4a W4b W5a W5b W5c W7; do want "$w" && HTTP_ORDER+=("$w"); done
WS_REF=0        # any Websocket row over HTTP/1.1 (the reference server speaks no RFC 8441)
for id in "${WS_SELECTED[@]}"; do [[ $id == *-h2-* ]] || WS_REF=1; done
for rp in $MODES; do
  case $rp in true | false) ;; *) die "BENCH_MODES: expected true/false, got '$rp'" ;; esac
done
NEED_DEMO=0
((${#HTTP_ORDER[@]} + ${#WS_SELECTED[@]})) && NEED_DEMO=1
[[ "$SCALING" == 1 ]] && NEED_DEMO=1
# 10,000 connections (the scaling curve, W7) need 10,000 descriptors in the
# client and 10,000 in each server: the soft limit goes up to the hard one
# here, and every server started below (demo, Cowboy, Elli) inherits it.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
if [[ "$SCALING" == 1 ]] || want W7; then
  (($(ulimit -n) > 10100)) || say "ulimit -n is $(ulimit -n): the 10,000-connection runs may fail (the client and each server need 10,000 descriptors)"
fi
if ((NEED_DEMO)); then
  [[ " $MODES " == *" false "* ]] && start_demo mustang false "$DEMO_PORT" "$DEMO_TLS_PORT"
  if [[ " $MODES " == *" true "* ]] && want_any W1a W1b W1c W3a W3b W5a; then
    start_demo mustang-rp true "$RP_PORT" "$RP_TLS_PORT"
  fi
fi
if [[ "$PEERS" != none ]]; then
  start_peer cowboy
  { want_any W1a W1b W1c W3a W3b W7 || [[ "$SCALING" == 1 ]]; } && start_peer elli
else
  say "no peers (MUSTANG_PEERS=none, or no ../shared/peers): nginx and the Websocket reference only"
fi
{ want_any W1a W1b W1c W2a W2b W4a W4b || [[ "$SCALING" == 1 ]]; } && start_nginx
((WS_REF)) && start_wsref
for s in mustang mustang-rp cowboy elli nginx; do
  [[ -n "${PIDS[$s]:-}" ]] && warmup "$(port_for "$s" W1a)"
done

# --- record the setting ---------------------------------------------------------
{
  echo "date: $(date -Is)"
  echo "git: $(git rev-parse --short HEAD 2>/dev/null || echo none)$(git diff --quiet HEAD 2>/dev/null || echo ' (dirty)')"
  echo "cores: $(nproc)"
  echo "loadavg before: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "QUICK=$QUICK BENCH_DURATION=$DUR BENCH_WARMUP=$WARMUP BENCH_W3_REQUESTS=$W3_N BENCH_ROUNDS=$ROUNDS BENCH_GAP=$GAP"
  echo "BENCH_W2A_REQUESTS=$W2A_N BENCH_W2B_REQUESTS=$W2B_N BENCH_W4_REQUESTS=$W4_N BENCH_W5_BYTES=$W5_BYTES"
  echo "workloads:$WORKLOADS modes(MUSTANG_REQUEST_PROCESS): $MODES"
  echo "ulimit -n: $(ulimit -n) (hard $(ulimit -Hn))"
  for s in "${!PIDS[@]}"; do
    echo "open files limit of $s: $(awk '/^Max open files/ {print $4}' "/proc/${PIDS[$s]}/limits" 2>/dev/null || echo '?')"
  done
  if want W7; then
    echo "BENCH_W7_CONNS=$W7_CONNS BENCH_W7_SECONDS=$W7_SECONDS BENCH_W7_WARMUP=$W7_WARMUP BENCH_W7_CONNECT_RATE=$W7_CONNECT_RATE"
    echo "BENCH_W7_SCALE=${W7_SCALE:-none} BENCH_W7_SCALE_SECONDS=$W7_SCALE_SECONDS"
  fi
  echo "servers: ${!PIDS[*]}"
  echo "peers: $PEERS"
  echo "otp: $(erl -noshell -eval 'io:put_chars(erlang:system_info(otp_release)), halt().' 2>/dev/null || echo '?')"
  echo "nginx: $(nginx -v 2>&1)"
  echo "wrk: $(wrk -v 2>&1 | head -n1)"
  echo "h2load: $(h2load --version 2>&1 | head -n1)"
  echo "curl: $(curl --version 2>&1 | head -n1)"
  echo "demo command: $DEMO_CMD"
  if ((${#WS_SELECTED[@]})); then
    echo "BENCH_WS_DURATION=$WS_DUR BENCH_WS_WARMUP=$WS_WARMUP BENCH_WSREF_LIB=$WSREF_LIB ws paths: $WS_PATH $WS_DEFLATE_PATH"
    echo "go: $("$(go_cmd)" version 2>/dev/null || echo '?')"
  fi
  echo "baseline: ${BASELINE:-none}"
  echo "BENCH_PIN=$PIN BENCH_PIN_ROUNDS=$PIN_ROUNDS"
  if ((${#PIN_ORDER[@]})); then
    echo "one-core phase: ${PIN_ORDER[*]} (each server alone under taskset -c $PIN, the client too)"
  else
    echo "one-core phase: none"
  fi
} >"$RES/meta.txt"
say "results in $RES"

# --- the rounds: each workload against every server, then the next workload --------
WS_SECONDS=0
RUN_T0=$SECONDS
for ROUND in $(seq 1 "$ROUNDS"); do
  for wl in "${HTTP_ORDER[@]}" "${WS_SELECTED[@]}"; do
    t0=$SECONDS
    # shellcheck disable=SC2046
    for s in $(rotate $((ROUND - 1)) $(servers_for "$wl")); do run_one "$wl" "$s"; done
    [[ $wl == W6* ]] && WS_SECONDS=$((WS_SECONDS + SECONDS - t0))
  done
done
ROUNDS_SECONDS=$((SECONDS - RUN_T0))
echo "loadavg after the rounds: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$RES/meta.txt"

# --- W7's connection curve: one paced run per point and server ---------------------
if want W7 && [[ -n "$W7_SCALE" ]]; then
  source "$ROOT/bench/scaling.sh"
  scale_w7
fi

# --- scaling curves: connections, body size ------------------------------------------
if [[ "$SCALING" == 1 ]]; then
  t0=$SECONDS
  # shellcheck source=bench/scaling.sh
  source "$ROOT/bench/scaling.sh"
  scale_conns
  scale_bodies
  SCALING_SECONDS=$((SECONDS - t0))
fi

# --- the one-core phase (BENCH_PIN): the single-connection rows again ------------------
# Left to the kernel, each VM falls into a fast or a slow mode on these rows
# (its scheduler on the client's core or not) and keeps it. Here each server
# starts alone under `taskset -c $PIN`, so that the VM sees one CPU and runs
# one scheduler, as on a one-core machine; the client runs on that CPU too.
# Never re-pinned at run time: two schedulers would then share one core.
if ((${#PIN_ORDER[@]})); then
  declare -A PIN_SERVES=()   # server -> its single-connection workloads
  for wl in "${PIN_ORDER[@]}"; do
    for s in $(servers_for "$wl"); do [[ $s == mustang-rp ]] || PIN_SERVES[$s]+=" $wl"; done
  done
  PIN_SERVERS=()
  for s in mustang cowboy elli nginx wsref; do [[ -n "${PIN_SERVES[$s]:-}" ]] && PIN_SERVERS+=("$s"); done
  stop_servers
  OUT="$RES/onecore"
  mkdir -p "$OUT"
  PIN_CMD=(taskset -c "$PIN")
  PLACEMENT="one-core cpu=$PIN"
  START_SKIP=1
  t0=$SECONDS
  for ROUND in $(seq 1 "$PIN_ROUNDS"); do
    for s in $(rotate $((ROUND - 1)) "${PIN_SERVERS[@]}"); do
      if start_warm "$s"; then
        for wl in ${PIN_SERVES[$s]}; do run_one "$wl" "$s"; done
      fi
      stop_servers
    done
  done
  PIN_SECONDS=$((SECONDS - t0))
  OUT=$RES
  PIN_CMD=()
  PLACEMENT=""
  START_SKIP=0
fi
stop_servers

# --- W5lin: upload time against body size (its own demo starts) ----------------------
if want W5lin; then
  BENCH_LOCK_HELD=1 BENCH_SKIP_BUILD=1 BENCH_LIN_OUT="$RES/lin" BENCH_PORT=$DEMO_PORT BENCH_TLS_PORT=$DEMO_TLS_PORT \
    BENCH_DEMO_CMD=$DEMO_CMD "$ROOT/bench/h2_linear.sh" || {
    FAILED_RUNS=$((FAILED_RUNS + 1))
    say "W5lin: bench/h2_linear.sh failed, see $RES/lin"
  }
fi

# --- report -------------------------------------------------------------------------
{
  echo "elapsed: $((SECONDS - LOCKED_AT)) s in all (setup and build included; $LOCKED_AT s of waiting for the lock before), $ROUNDS_SECONDS s of rounds${SCALING_SECONDS:+, $SCALING_SECONDS s of scaling curves}${PIN_SECONDS:+, $PIN_SECONDS s of the one-core phase}"
  if ((${#WS_SELECTED[@]})); then
    echo "websocket: $WS_SECONDS s of wsload runs (reference server and demo)"
  fi
} | tee -a "$RES/meta.txt"
echo
"$PY" "$ROOT/bench/report.py" "$RES" ${BASELINE:+"$BASELINE"} | tee "$RES/table.txt"
if [[ -f "$RES/lin/table.txt" ]]; then
  echo | tee -a "$RES/table.txt"
  tee -a "$RES/table.txt" <"$RES/lin/table.txt"
fi
if "$PY" "$ROOT/bench/publish.py" "$RES"; then
  if [[ "$PUBLISH" == 1 ]]; then
    # bench/results/ holds the last published run only: its report (README.md) and charts
    mkdir -p "$ROOT/bench/results"
    rm -f "$ROOT/bench/results/"*.png "$ROOT/bench/results/README.md"
    cp "$RES/report.md" "$ROOT/bench/results/README.md"
    cp "$RES/"*.png "$ROOT/bench/results/" 2>/dev/null || true
    say "published report.md and charts to bench/results/"
  fi
else
  FAILED_RUNS=$((FAILED_RUNS + 1))
  say "bench/publish.py failed: no report.md"
fi
echo "bench: raw outputs, logs, table.txt, report.md and charts in $RES"

# HTTP/3 (issue 25): bench/h3.sh, its own servers and report, when the QUIC
# NIF is built; BENCH_H3=0 skips it.
if [[ "${BENCH_H3:-1}" == 1 && -f "$ROOT/priv/mustang_quic.so" ]]; then
  BENCH_LOCK_HELD=1 BENCH_SKIP_BUILD=1 "$ROOT/bench/h3.sh" || FAILED_RUNS=$((FAILED_RUNS + 1))
fi

if ((FAILED_RUNS)); then
  echo "bench: $FAILED_RUNS run(s) failed (see above)" >&2
  exit 1
fi
if [[ "${BENCH_STRICT:-0}" == 1 ]] && grep -q '=> FAIL' "$RES/table.txt"; then
  exit 1
fi
exit 0
