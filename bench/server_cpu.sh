#!/usr/bin/env bash
# The server's CPU per request (or per Websocket frame) during one client
# run: the server VM's utime and stime (/proc/PID/stat) over the run,
# divided by the requests it served, beside the CPU the run took in all.
# What bench/targets.md's "reason" paragraphs are measured with: on one
# core the client's share is fixed, so this says how much of a request is
# the server's and how much a target needs it to lose.
#
# usage: bench/server_cpu.sh SERVER WORKLOAD [SECONDS]
#   SERVER    mustang (the demo, built by `make demo`), cowboy or elli (the
#             peers in MUSTANG_PEERS, default ../shared/peers)
#   WORKLOAD  w1a (wrk -c1), w1c (wrk -t2 -c100), w2a (h2load -c10 -m10),
#             w2b (h2load -c1 -m1), w3a / w4a (1 MiB POST /read_body, one
#             connection, HTTP/1.1 / h2c), w6a (wsload echo of 1 KiB)
#   SECONDS   length of the measured run (default 4)
#   CPU_PIN   CPU for server and client (default 0 for the one-connection
#             workloads, as make bench's one-core phase; none for w1c and
#             w2a); none: left to the kernel
# Prints: server, workload, rate, server user and system µs per request,
# all CPU µs per request (the pinned CPU, or every CPU), and the rest (the
# client and the kernel's work for it). Takes /tmp/mustang-bench.lock.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
HOST=127.0.0.1 START_TIMEOUT=30 TAG=server_cpu TOOL_PID=""
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"

SERVER=${1:-}; WL=${2:-}; SECS=${3:-4}
[[ -n "$SERVER" && -n "$WL" ]] || die "usage: bench/server_cpu.sh mustang|cowboy|elli w1a|w1c|w2a|w2b|w3a|w4a|w6a [SECONDS]"
WSLOAD=$ROOT/_tools/go/bin/wsload
case $WL in
  w1c|w2a) PIN=${CPU_PIN:-none} ;;
  w1a|w2b|w3a|w4a|w6a) PIN=${CPU_PIN:-0} ;;
  *) die "unknown workload $WL" ;;
esac
if [[ "$PIN" == none ]]; then PIN_CMD=(); NCPU=$(nproc); else PIN_CMD=(taskset -c "$PIN"); NCPU=1; fi

# The servers as bench/run.sh starts them (bench/servers.sh), on its ports,
# the demo on ports of its own.
DEMO_PORT=18491 DEMO_TLS_PORT=18492
COWBOY_PORT=8090 COWBOY_H2_PORT=8092 ELLI_PORT=8091
DEMO_CMD=$ROOT/scripts/run_demo.sh
PEERS=${MUSTANG_PEERS:-$ROOT/../shared/peers}
# shellcheck source=bench/servers.sh
. "$ROOT/bench/servers.sh"
WORKLOAD=W${WL:1}  # run.sh's name of the workload, e.g. W2b
case $SERVER in
  mustang | cowboy) ;;
  elli) [[ $WL == w1? || $WL == w3a ]] || die "elli serves HTTP/1.1 only" ;;
  *) die "unknown server $SERVER" ;;
esac
[[ $SERVER == mustang || -x "$PEERS/start.sh" ]] || die "no peers in $PEERS"
PORT=$(port_for "$SERVER" "$WORKLOAD")

BODY=$ROOT/_bench/1mb.bin
mkdir -p "$ROOT/_bench"
make_file "$BODY" 1048576

exec 9>/tmp/mustang-bench.lock
flock 9
OUT=$(mktemp -d /tmp/server_cpu.XXXXXX)
trap 'stop_servers; rm -rf "$OUT"' EXIT
start_server "$SERVER" || die "$SERVER did not start"
PID=${PIDS[$SERVER]}
LOG=$OUT/$([[ $SERVER == mustang ]] && echo demo-rp_false || echo "$SERVER").log  # servers.sh names

URL=http://$HOST:$PORT
run_client() { # seconds -> rate on stdout
  local s=$1
  case $WL in
    w1a) "${PIN_CMD[@]}" wrk -t1 -c1 -d"${s}s" "$URL/" | awk '/Requests\/sec/{print $2}' ;;
    w1c) "${PIN_CMD[@]}" wrk -t2 -c100 -d"${s}s" "$URL/" | awk '/Requests\/sec/{print $2}' ;;
    w2a) "${PIN_CMD[@]}" h2load -c10 -m10 -D "$s" "$URL/" | awk '/finished in/{print $4}' ;;
    w2b) "${PIN_CMD[@]}" h2load -c1 -m1 -D "$s" "$URL/" | awk '/finished in/{print $4}' ;;
    w3a) "${PIN_CMD[@]}" h2load --h1 -c1 -m1 -D "$s" -d "$BODY" "$URL/read_body" | awk '/finished in/{print $4}' ;;
    w4a) "${PIN_CMD[@]}" h2load -c1 -m1 -D "$s" -d "$BODY" "$URL/read_body" | awk '/finished in/{print $4}' ;;
    w6a) "${PIN_CMD[@]}" "$WSLOAD" -mode echo -kind binary -size 1024 -conns 1 -duration "${s}s" \
           -url "ws://$HOST:$PORT/ws" 2>&1 | grep -oE '"frames_s":[0-9.]+' | cut -d: -f2 ;;
  esac
}
# The VM's pid: start.sh and run_demo.sh exec it.
cpu_ticks() { awk '{print $14, $15}' "/proc/$PID/stat"; }
all_ticks() { # the pinned CPU's busy ticks, or all CPUs'
  local line=cpu
  [[ "$PIN" == none ]] || line=cpu$PIN
  awk -v l="$line" '$1 == l {print $2 + $3 + $4 + $7 + $8 + $9}' /proc/stat
}

run_client 1 >/dev/null  # warm-up
read -r U0 S0 < <(cpu_ticks); A0=$(all_ticks)
RATE=$(run_client "$SECS")
read -r U1 S1 < <(cpu_ticks); A1=$(all_ticks)
[[ -n "$RATE" ]] || die "$WL against $SERVER gave no figure (end of log: $(tail -n 3 "$LOG"))"
HZ=$(getconf CLK_TCK)
python3 - "$SERVER" "$WL" "$RATE" "$SECS" "$HZ" "$U0" "$S0" "$U1" "$S1" "$A0" "$A1" "$NCPU" "$PIN" <<'EOF'
import sys
server, wl, rate, secs, hz = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
u0, s0, u1, s1, a0, a1 = map(int, sys.argv[6:12])
ncpu, pin = int(sys.argv[12]), sys.argv[13]
n = rate * secs
user, system = (u1 - u0) / hz / n * 1e6, (s1 - s0) / hz / n * 1e6
allcpu = (a1 - a0) / hz / n * 1e6
unit = "frame" if wl == "w6a" else "request"
print("%s %s: %.1f %ss/s; server user %.1f + system %.1f = %.1f us per %s; all CPU %.1f us (%s); rest %.1f us"
      % (server, wl, rate, unit, user, system, user + system, unit, allcpu,
         "cpu %s" % pin if pin != "none" else "%d cpus" % ncpu, allcpu - user - system))
EOF
