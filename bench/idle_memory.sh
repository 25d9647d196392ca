#!/usr/bin/env bash
# Idle-connection memory (BENCH.md "idle connections"): N connections each
# make one request and stay open; prints the server's memory growth per
# connection, 3 s after the last one opened and again after IDLE_SETTLE s
# (default 8: past the first idle tick, idle_timeout / 10, when connections
# hibernate).
# usage: [IDLE_MODE=h1|h2c|ws] bench/idle_memory.sh [N] [protocol options as an Erlang map]
#   bench/idle_memory.sh 10000 '#{dynamic_buffer => {512, 131072}}'
#   IDLE_MODE=ws bench/idle_memory.sh 2000
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
N=${1:-10000}
MODE=${IDLE_MODE:-h1}
SETTLE=${IDLE_SETTLE:-8}
OPTS=${2:-#\{\}}
PORT=${IDLE_PORT:-18090}
OUT=_bench/idle; mkdir -p "$OUT"
erlc -o "$OUT" bench/idle_memory.erl
EBIN="-pa _build/default/lib/mustang/ebin -pa _build/demo/ebin -pa $OUT"
erl -noshell $EBIN -eval "idle_memory:server([\"$PORT\", \"$OPTS\"])" > "$OUT/server.log" 2>&1 &
SERVER=$!
CLIENT=
trap 'kill $SERVER ${CLIENT:-} 2>/dev/null || true' EXIT
for _ in $(seq 50); do grep -q memory "$OUT/server.log" && break; sleep 0.2; done
sleep 2
BASE=$(grep memory "$OUT/server.log" | tail -1 | awk '{print $2}')
erl -noshell -pa "$OUT" -eval "idle_memory:client([\"$PORT\", \"$N\", \"$MODE\"])" > "$OUT/client.log" 2>&1 &
CLIENT=$!
for _ in $(seq 300); do
  conns=$(grep memory "$OUT/server.log" | tail -1 | awk '{print $4}')
  [[ "$conns" == "$N" ]] && break
  sleep 0.5
done
per_conn() { # the last memory line, per connection in KiB
  local last mem conns
  last=$(grep memory "$OUT/server.log" | tail -1)
  mem=$(echo "$last" | awk '{print $2}')
  conns=$(echo "$last" | awk '{print $4}')
  if [[ "$conns" != "$N" ]]; then echo "idle_memory: only $conns of $N connections open" >&2; exit 1; fi
  echo "($mem - $BASE) / $N / 1024" | bc -l | cut -c1-5
}
sleep 3
EARLY=$(per_conn)
sleep $((SETTLE > 3 ? SETTLE - 3 : 0))
echo "idle_memory: mode=$MODE opts=$OPTS connections=$N per_connection_KiB after 3 s: $EARLY, after $SETTLE s: $(per_conn)"
