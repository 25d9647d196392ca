#!/usr/bin/env bash
# Idle-connection memory beside Cowboy 2.13 (issue 11 point 2; bench/idle_memory.erl):
# IDLE_CONNS connections over HTTP/1.1, h2c and Websocket (over HTTP/1.1), each
# after one exchange (one request answered, or one Websocket echo), then the
# server VM's memory growth per connection 3 s and IDLE_LATE s after the last
# one opened, for Mustang (the demo's protocol options) and Cowboy 2.13 (the
# peer in MUSTANG_PEERS, default ../shared/peers) in the same run. The client
# is its own VM. Writes a Markdown table to _bench/idle/report.md.
#
# usage: [IDLE_CONNS=10000] [IDLE_LATE=30] [IDLE_PROTOCOLS="h1 h2c ws"]
#        [IDLE_SERVERS="mustang cowboy"] bench/idle_memory.sh [Mustang protocol options]
#   IDLE_CONNS=1000 IDLE_LATE=10 bench/idle_memory.sh        quick mode
#   bench/idle_memory.sh '#{dynamic_buffer => false}'
# Cowboy serves on the peers' fixed port 8090: the script takes
# /tmp/mustang-bench.lock itself (flock), so that one load runs at a time.
# Each VM holds IDLE_CONNS sockets: `ulimit -n` must allow IDLE_CONNS + 100
# (the script raises the soft limit to the hard one; 20000 on the lab machine).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
if [[ -z "${IDLE_LOCKED:-}" ]]; then
  IDLE_LOCKED=1 exec flock /tmp/mustang-bench.lock "$0" "$@"
fi
N=${IDLE_CONNS:-10000}
LATE=${IDLE_LATE:-30}
SERVERS=${IDLE_SERVERS:-mustang cowboy}
OPTS=${1:-#\{\}}
PEERS=${MUSTANG_PEERS:-$ROOT/../shared/peers}
OUT=_bench/idle; mkdir -p "$OUT"
ulimit -n "$(ulimit -Hn)"
if (( $(ulimit -n) < N + 100 )); then
  echo "idle_memory: ulimit -n is $(ulimit -n), $N connections need $((N + 100))" >&2; exit 1
fi
erlc -o "$OUT" bench/idle_memory.erl
COOKIE=idle_memory_$$
ID=$$
EBIN="-pa _build/default/lib/mustang/ebin -pa _build/demo/ebin -pa $OUT"
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT
SPECS=()
for s in $SERVERS; do
  case $s in
    mustang)
      erl +Bd -noshell -sname "idle_mustang_$ID" -setcookie "$COOKIE" $EBIN \
        -eval "idle_memory:server([\"$OPTS\"])" > "$OUT/mustang.log" 2>&1 &
      PIDS+=($!)
      SPECS+=("mustang:idle_mustang_$ID@$(hostname -s):0");;
    cowboy)
      if [[ ! -x "$PEERS/start.sh" ]]; then echo "idle_memory: no $PEERS/start.sh, Cowboy skipped" >&2; continue; fi
      "$PEERS/start.sh" cowboy -sname "idle_cowboy_$ID" -setcookie "$COOKIE" > "$OUT/cowboy.log" 2>&1 &
      PIDS+=($!)
      SPECS+=("cowboy:idle_cowboy_$ID@$(hostname -s):8090");;
    *) echo "idle_memory: unknown server $s" >&2; exit 1;;
  esac
done
erl +Bd -noshell -sname "idle_client_$ID" -setcookie "$COOKIE" -pa "$OUT" \
  -eval "idle_memory:run([\"$N\", \"$LATE\", \"$OUT/report.md\" $(printf ', "%s"' "${SPECS[@]}")])" \
  2> "$OUT/client.log"
echo "(ulimit -n $(ulimit -n); Mustang options $OPTS; $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src || echo ' + uncommitted src changes'); details in $OUT/client.log)"
