#!/usr/bin/env bash
# Mustang benchmark suite, first version (see bench/README.md, shared/BENCH.md).
#
#   make bench            # or: bench/run.sh
#
# Runs, one at a time, on 127.0.0.1 only:
#   nginx (reference, same run):        W1a W1b W1c, W2a W2b W4a W4b (h2c port)
#   Mustang demo, rp=false:             W1a W1b W1c W2a W2b W3a W3b W4a W4b W5a W5b W5c
#   Mustang demo, rp=true:              W1a W1b W1c W3a W3b W5a (HTTP/1.1 only)
#   W5lin (not in the default set):     bench/h2_linear.sh, upload time vs size
#   Websocket (bench/wsload client):    W6a-W6f against the reference server
#                                       (bench/wsref) and the demo (rp=false);
#                                       opt-in matrix W6matrix / W6m-<mode>-<kind>-<size>-<proto>-<deflate>
# and prints a table with ratios to nginx and to Cowboy 2.13 scaled by nginx
# (Websocket: to the reference server, to Cowboy, and to BENCH_BASELINE).
# Raw outputs, logs and the table go to _bench/results-<timestamp>/.
#
# Env:
#   BENCH_DURATION=10s        wrk duration per W1 run
#   BENCH_WARMUP=2s           untimed wrk warm-up after each server start (0: none)
#   BENCH_W3_REQUESTS=2000    h2load -n for W3a/W3b
#   BENCH_W2A_REQUESTS=200000 BENCH_W2B_REQUESTS=20000 BENCH_W4_REQUESTS=2000
#                             h2load -n for W2a, W2b, W4a/W4b
#   BENCH_W5_BYTES=1073741824 upload size of W5a/b/c (_bench/1gb.bin; other
#                             sizes use _bench/w5-<bytes>.bin)
#   BENCH_WORKLOADS="W1a W1b W1c W2a W2b W3a W3b W4a W4b W5a W5b W5c"  subset
#                             to run; add W5lin for bench/h2_linear.sh
#   BENCH_ROUNDS=3                          rounds of the whole sequence; the
#                                           report shows the median of each figure
#   BENCH_MODES="false true"  MUSTANG_REQUEST_PROCESS values to run the demo with
#   BENCH_SKIP_SETUP=1 / BENCH_SKIP_BUILD=1  skip scripts/setup.sh / make demo
#   BENCH_DEMO_CMD=scripts/run_demo.sh       command that runs the demo in the
#                             foreground (to test this harness with a stand-in)
#   BENCH_STRICT=1            exit 1 when an acceptance check FAILs
#   BENCH_WS_DURATION=3s BENCH_WS_WARMUP=1s  measured time / untimed warm-up of
#                             each Websocket run (wsload -duration / -warmup)
#   BENCH_WSREF_LIB=auto      reference server: auto (gorilla, coder/websocket
#                             when deflate is offered), gorilla, coder, node
#   BENCH_WS_PATH=/ws BENCH_WS_DEFLATE_PATH=/ws   demo paths (plain / deflate)
#   BENCH_BASELINE=_bench/results-XXXX  a previous run: the report adds ratios
#                             to its figures ("x base")
#   BENCH_WSREF_PORT=18083
#   BENCH_NGINX_PORT=18080 BENCH_NGINX_H2_PORT=18082 BENCH_PORT=18081 BENCH_TLS_PORT=18443
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

HOST=127.0.0.1            # never anything else: loopback only
NGINX_PORT=${BENCH_NGINX_PORT:-18080}
NGINX_H2_PORT=${BENCH_NGINX_H2_PORT:-18082}
DEMO_PORT=${BENCH_PORT:-18081}
DEMO_TLS_PORT=${BENCH_TLS_PORT:-18443}
DUR=${BENCH_DURATION:-10s}
WARMUP=${BENCH_WARMUP:-2s}
W3_N=${BENCH_W3_REQUESTS:-2000}
W2A_N=${BENCH_W2A_REQUESTS:-200000}
W2B_N=${BENCH_W2B_REQUESTS:-20000}
W4_N=${BENCH_W4_REQUESTS:-2000}
W5_BYTES=${BENCH_W5_BYTES:-1073741824}
WORKLOADS=" ${BENCH_WORKLOADS:-W1a W1b W1c W2a W2b W3a W3b W4a W4b W5a W5b W5c W6a W6b W6c W6d W6e W6f} "
WS_DUR=${BENCH_WS_DURATION:-3s}
WS_WARMUP=${BENCH_WS_WARMUP:-1s}
WSREF_LIB=${BENCH_WSREF_LIB:-auto}
WSREF_PORT=${BENCH_WSREF_PORT:-18083}
WS_PATH=${BENCH_WS_PATH:-/ws}
WS_DEFLATE_PATH=${BENCH_WS_DEFLATE_PATH:-/ws}
BASELINE=${BENCH_BASELINE:-}
MODES=${BENCH_MODES:-false true}
DEMO_CMD=${BENCH_DEMO_CMD:-$ROOT/scripts/run_demo.sh}
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
    W6a | W6b | W6c | W6d | W6e | W6f) expanded+=" $w" ;;
    W6matrix) expanded+=" ${WS_MATRIX[*]}" ;;
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
# Websocket tools: bench/wsload (client) and bench/wsref (reference server),
# built with Go into _tools/go/bin when missing or when their sources changed
# (a hash of the sources is kept beside the binary).
WSLOAD="$GO_BIN/wsload"
WSREF="$GO_BIN/wsref"
if ((${#WS_SELECTED[@]})); then
  go_tool wsload
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
NGINX_PID=""
DEMO_PID=""
WSREF_PID=""
FAILED_RUNS=0

cleanup() {
  local rc=$?
  trap - INT TERM
  stop_pid "$TOOL_PID" "load tool"
  stop_pid "$DEMO_PID" "mustang demo"
  stop_pid "$NGINX_PID" nginx
  stop_pid "$WSREF_PID" "websocket reference server"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

start_nginx() {
  local p
  for p in "$NGINX_PORT" "$NGINX_H2_PORT"; do
    port_open "$p" && die "port $p already in use (stale nginx or a test server? ports: BENCH_NGINX_PORT, BENCH_NGINX_H2_PORT)"
  done
  rm -rf "$NGX"
  mkdir -p "$NGX/logs" "$NGX/tmp"
  sed -e "s|@DIR@|$NGX|g" -e "s|@PORT@|$NGINX_PORT|g" -e "s|@H2PORT@|$NGINX_H2_PORT|g" bench/nginx.conf >"$NGX/nginx.conf"
  nginx -t -q -p "$NGX/" -c "$NGX/nginx.conf" -e "$NGX/logs/error.log" \
    || die "nginx config test failed"
  nginx -p "$NGX/" -c "$NGX/nginx.conf" -e "$NGX/logs/error.log" \
    </dev/null >"$NGX/logs/stdout.log" 2>&1 &
  NGINX_PID=$!
  wait_http "http://$HOST:$NGINX_PORT/" "$NGINX_PID" nginx "$NGX/logs/error.log" \
    || die "nginx did not start"
  say "nginx up on $HOST:$NGINX_PORT, h2c on $HOST:$NGINX_H2_PORT (pid $NGINX_PID)"
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

h2load_run() { # id server port: W2a W2b (h2c hello), W3a W3b (h1 bodies), W4a W4b (h2c bodies)
  local id=$1 server=$2 port=$3 args
  want "$id" || return 0
  case $id in
    W2a) args=(-c10 -m10 -n "$W2A_N" "http://$HOST:$port/") ;;
    W2b) args=(-c1 -m1 -n "$W2B_N" "http://$HOST:$port/") ;;
    W3a) args=(--h1 -c1 -m1 -n "$W3_N" -d "$BODY" "http://$HOST:$port/read_body") ;;
    W3b) args=(--h1 -c10 -m1 -n "$W3_N" -d "$BODY" "http://$HOST:$port/read_body") ;;
    W4a) args=(-c1 -m1 -n "$W4_N" -d "$BODY" "http://$HOST:$port/read_body") ;;
    W4b) args=(-c10 -m1 -n "$W4_N" -d "$BODY" "http://$HOST:$port/read_body") ;;
  esac
  say "$id $server: h2load ${args[*]/#$WORK\//} (round $ROUND)"
  run_tool "$RES/$id-$server.r$ROUND.txt" 300 h2load "${args[@]}"
  grep -E '^(finished in|requests:|status codes:|Application protocol:)' "$RES/$id-$server.r$ROUND.txt" | sed 's/^/    /' || true
  sleep 1
}

# W5a (HTTP/1.1), W5b (h2c prior knowledge), W5c (h2 over TLS, ALPN): one
# timed upload of $W5_FILE to the demo's /read_body.
upload_w5() { # id server
  local id=$1 server=$2 out="$RES/$1-$2.r$ROUND.txt" rc=0 args version
  want "$id" || return 0
  case $id in
    W5a) version=1.1; args=(-H 'Expect:' -X POST -T "$W5_FILE" "http://$HOST:$DEMO_PORT/read_body") ;;
    W5b) version=2; args=(--http2-prior-knowledge -X POST -T "$W5_FILE" "http://$HOST:$DEMO_PORT/read_body") ;;
    W5c) version=2; args=(-k --http2 -X POST -T "$W5_FILE" "https://$HOST:$DEMO_TLS_PORT/read_body") ;;
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
  sleep 1
}

start_wsref() {
  local logf="$RES/wsref.log"
  port_open "$WSREF_PORT" && die "port $WSREF_PORT already in use (BENCH_WSREF_PORT)"
  if [[ "$WSREF_LIB" == node ]]; then
    NODE_PATH="$ROOT/_tools/node/node_modules" node "$ROOT/bench/wsref/ws_node.js" "$HOST" "$WSREF_PORT" \
      </dev/null >>"$logf" 2>&1 &
  else
    "$WSREF" -addr "$HOST:$WSREF_PORT" -lib "$WSREF_LIB" </dev/null >>"$logf" 2>&1 &
  fi
  WSREF_PID=$!
  wait_http "http://$HOST:$WSREF_PORT/" "$WSREF_PID" "websocket reference server" "$logf" \
    || die "the Websocket reference server did not start"
  say "websocket reference server ($WSREF_LIB) up on $HOST:$WSREF_PORT (pid $WSREF_PID)"
}

# ws_run <id> <server> <port>: one wsload run; the raw file holds the
# command, wsload's JSON line and the exit status.
ws_secs() { local d; d=$(dur_s "$1"); d=${d%%.*}; echo $((${d:-0} + 1)); }
WS_LIMIT=$(($(ws_secs "$WS_DUR") + $(ws_secs "$WS_WARMUP") + 40))
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
    path=$WS_DEFLATE_PATH
  fi
  say "$id $server: wsload ${args[*]} (round $ROUND)"
  run_tool "$RES/$id-$server.r$ROUND.txt" "$WS_LIMIT" "$WSLOAD" -url "ws://$HOST:$port$path" "${args[@]}"
  grep '^{' "$RES/$id-$server.r$ROUND.txt" | "$PY" -c 'import json,sys
for l in sys.stdin:
    d = json.loads(l)
    print("    %s frames/s, %s MB/s, p99 %s us, errors %s %s" % (d.get("frames_s"), d.get("mb_s"),
          d.get("p99_us"), d.get("errors"), d.get("error", "")))' || true
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
  echo "BENCH_W2A_REQUESTS=$W2A_N BENCH_W2B_REQUESTS=$W2B_N BENCH_W4_REQUESTS=$W4_N BENCH_W5_BYTES=$W5_BYTES"
  echo "workloads:$WORKLOADS modes(MUSTANG_REQUEST_PROCESS): $MODES"
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
} >"$RES/meta.txt"
say "results in $RES"

ROUNDS=${BENCH_ROUNDS:-3}
WS_SECONDS=0
RUN_T0=$SECONDS
for ROUND in $(seq 1 "$ROUNDS"); do
# --- nginx reference ------------------------------------------------------------
if want_any W1a W1b W1c W2a W2b W4a W4b; then
  start_nginx
  warmup "$NGINX_PORT"
  wrk_run W1a nginx "$NGINX_PORT" 1 1
  wrk_run W1b nginx "$NGINX_PORT" 2 10
  wrk_run W1c nginx "$NGINX_PORT" 2 100
  h2load_run W2a nginx "$NGINX_H2_PORT"
  h2load_run W2b nginx "$NGINX_H2_PORT"
  h2load_run W4a nginx "$NGINX_H2_PORT"
  h2load_run W4b nginx "$NGINX_H2_PORT"
  stop_pid "$NGINX_PID" nginx   # keep the machine quiet for Mustang
  NGINX_PID=""
fi

# --- Websocket reference server (HTTP/1.1 rows only) -------------------------------
WS_REF=()
for id in "${WS_SELECTED[@]}"; do [[ $id == *-h2-* ]] || WS_REF+=("$id"); done
if ((${#WS_REF[@]})); then
  t0=$SECONDS
  start_wsref
  for id in "${WS_REF[@]}"; do ws_run "$id" wsref "$WSREF_PORT"; done
  stop_pid "$WSREF_PID" "websocket reference server"
  WSREF_PID=""
  WS_SECONDS=$((WS_SECONDS + SECONDS - t0))
fi

# --- Mustang, each request mode ---------------------------------------------------
for rp in $MODES; do
  case $rp in
    false) server=mustang ;;
    true) server=mustang-rp ;;
    *) die "BENCH_MODES: expected true/false, got '$rp'" ;;
  esac
  # skip a mode with nothing to run (Websocket and HTTP/2 run with rp=false only)
  if [[ $rp == true ]]; then
    want_any W1a W1b W1c W3a W3b W5a || continue
  else
    want_any W1a W1b W1c W2a W2b W3a W3b W4a W4b W5a W5b W5c || ((${#WS_SELECTED[@]})) || continue
  fi
  start_demo "$rp"
  DEMO_DIED=0
  warmup "$DEMO_PORT"
  for step in "W1a 1 1" "W1b 2 10" "W1c 2 100"; do
    set -- $step
    demo_alive "$rp" || break
    wrk_run "$1" "$server" "$DEMO_PORT" "$2" "$3"
  done
  # HTTP/2 streams always run in their own process: the h2 workloads run
  # in the default mode (rp=false) only.
  if [[ $rp == false ]]; then
    for id in W2a W2b; do demo_alive "$rp" && h2load_run "$id" "$server" "$DEMO_PORT"; done
  fi
  for id in W3a W3b; do demo_alive "$rp" && h2load_run "$id" "$server" "$DEMO_PORT"; done
  if [[ $rp == false ]]; then
    for id in W4a W4b; do demo_alive "$rp" && h2load_run "$id" "$server" "$DEMO_PORT"; done
  fi
  demo_alive "$rp" && upload_w5 W5a "$server"
  if [[ $rp == false ]]; then
    for id in W5b W5c; do demo_alive "$rp" && upload_w5 "$id" "$server"; done
  fi
  # Websocket: the connection process runs the Websocket after the upgrade,
  # so the rp=false mode only.
  if [[ $rp == false ]] && ((${#WS_SELECTED[@]})); then
    t0=$SECONDS
    for id in "${WS_SELECTED[@]}"; do demo_alive "$rp" && ws_run "$id" "$server" "$DEMO_PORT"; done
    WS_SECONDS=$((WS_SECONDS + SECONDS - t0))
  fi
  demo_alive "$rp" || true   # also catches a death during the last run
  stop_demo
done
done

# --- W5lin: upload time against body size (its own demo starts) ----------------------
if want W5lin; then
  BENCH_LOCK_HELD=1 BENCH_LIN_OUT="$RES/lin" BENCH_PORT=$DEMO_PORT BENCH_TLS_PORT=$DEMO_TLS_PORT \
    BENCH_DEMO_CMD=$DEMO_CMD "$ROOT/bench/h2_linear.sh" || {
    FAILED_RUNS=$((FAILED_RUNS + 1))
    say "W5lin: bench/h2_linear.sh failed, see $RES/lin"
  }
fi

# --- report -------------------------------------------------------------------------
{
  echo "elapsed: $((SECONDS - RUN_T0)) s in all"
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
echo "bench: raw outputs, logs and table.txt in $RES"

if ((FAILED_RUNS)); then
  echo "bench: $FAILED_RUNS run(s) failed (see above)" >&2
  exit 1
fi
if [[ "${BENCH_STRICT:-0}" == 1 ]] && grep -q '=> FAIL' "$RES/table.txt"; then
  exit 1
fi
exit 0
