#!/usr/bin/env bash
# W6a's floor: how many 1 KiB round trips per second one connection gets on
# this machine, measured with one client (bench/echofloor, a single Go
# goroutine: write, read the whole echo, compare) against
#   erlang-raw   a bare gen_tcp echo (bench/echofloor/echo_floor.erl)
#   go-raw       a bare Go echo (echofloor -serve)
#   mustang-ws   the demo's /ws (Websocket echo, HTTP/1.1)
#   gorilla-ws   bench/wsref (gorilla/websocket echo)
# each for BENCH_FLOOR_DURATION (3s) per round, BENCH_ROUNDS (3) rounds,
# interleaved; prints the medians and ratios. Results in _bench/echofloor-<ts>/.
# Nothing else should run on the machine meanwhile.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
HOST=127.0.0.1
TAG=echo_floor
START_TIMEOUT=30
TOOL_PID=""
source "$ROOT/bench/lib.sh"
DUR=${BENCH_FLOOR_DURATION:-3s}
ROUNDS=${BENCH_ROUNDS:-3}
SIZE=${BENCH_FLOOR_SIZE:-1024}
P_ERL=${BENCH_FLOOR_PORT:-18084}
P_GO=$((P_ERL + 1))
P_DEMO=$((P_ERL + 2))
P_TLS=$((P_ERL + 3))
P_REF=$((P_ERL + 4))
for p in $P_ERL $P_GO $P_DEMO $P_TLS $P_REF; do port_open "$p" && die "port $p already in use"; done

[[ "${BENCH_SKIP_BUILD:-0}" == 1 ]] || make --no-print-directory demo >/dev/null || die "make demo failed"
go_tool echofloor
go_tool wsref
RES="$ROOT/_bench/echofloor-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$RES"
erlc -o "$RES" bench/echofloor/echo_floor.erl

PIDS=()
cleanup() { local p; for p in "${PIDS[@]}"; do stop_pid "$p" server; done; }
trap cleanup EXIT
erl -noshell -pa "$RES" -eval "echo_floor:start([\"$P_ERL\"])" >"$RES/erlang-raw.log" 2>&1 &
PIDS+=($!)
"$GO_BIN/echofloor" -serve -addr "$HOST:$P_GO" >"$RES/go-raw.log" 2>&1 &
PIDS+=($!)
PORT=$P_DEMO TLS_PORT=$P_TLS scripts/run_demo.sh >"$RES/demo.log" 2>&1 &
PIDS+=($!)
"$GO_BIN/wsref" -addr "$HOST:$P_REF" -lib gorilla >"$RES/wsref.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do
  port_open "$P_ERL" && port_open "$P_GO" && port_open "$P_DEMO" && port_open "$P_REF" && break
  sleep 0.3
done

declare -A TARGET=(
  [erlang-raw]="-addr $HOST:$P_ERL"
  [go-raw]="-addr $HOST:$P_GO"
  [mustang-ws]="-addr $HOST:$P_DEMO -ws /ws"
  [gorilla-ws]="-addr $HOST:$P_REF -ws /ws"
)
ORDER=(erlang-raw mustang-ws gorilla-ws go-raw)
for r in $(seq 1 "$ROUNDS"); do
  for t in "${ORDER[@]}"; do
    # shellcheck disable=SC2086
    "$GO_BIN/echofloor" ${TARGET[$t]} -size "$SIZE" -d "$DUR" >"$RES/$t.r$r.json" \
      || die "echofloor against $t failed (see $RES)"
    say "round $r $t: $(grep -o '"round_trips_s":[0-9.]*' "$RES/$t.r$r.json" | cut -d: -f2) round trips/s"
  done
done

python3 - "$RES" "${ORDER[@]}" <<'PY' | tee "$RES/summary.txt"
import json, statistics, sys, glob
res, order = sys.argv[1], sys.argv[2:]
med = {}
for t in order:
    vals = [json.load(open(f))["round_trips_s"] for f in sorted(glob.glob("%s/%s.r*.json" % (res, t)))]
    med[t] = statistics.median(vals)
    print("%-11s median %8.0f round trips/s  (%s)" % (t, med[t], ", ".join("%.0f" % v for v in vals)))
print("mustang-ws / erlang-raw %.2f   mustang-ws / gorilla-ws %.2f   erlang-raw / go-raw %.2f"
      % (med["mustang-ws"] / med["erlang-raw"], med["mustang-ws"] / med["gorilla-ws"],
         med["erlang-raw"] / med["go-raw"]))
PY
