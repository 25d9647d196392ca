#!/usr/bin/env bash
# Idle-connection memory of the HTTP/1.1 server (BENCH.md "idle connections").
# usage: bench/idle_memory.sh [N] [protocol options as an Erlang map]
#   bench/idle_memory.sh 10000 '#{dynamic_buffer => {512, 131072}}'
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
N=${1:-10000}
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
erl -noshell -pa "$OUT" -eval "idle_memory:client([\"$PORT\", \"$N\"])" > "$OUT/client.log" 2>&1 &
CLIENT=$!
for _ in $(seq 300); do
  conns=$(grep memory "$OUT/server.log" | tail -1 | awk '{print $4}')
  [[ "$conns" == "$N" ]] && break
  sleep 0.5
done
sleep 3
LAST=$(grep memory "$OUT/server.log" | tail -1)
MEM=$(echo "$LAST" | awk '{print $2}')
CONNS=$(echo "$LAST" | awk '{print $4}')
if [[ "$CONNS" != "$N" ]]; then echo "idle_memory: only $CONNS of $N connections open" >&2; exit 1; fi
echo "idle_memory: opts=$OPTS connections=$N per_connection_KiB=$(echo "($MEM - $BASE) / $N / 1024" | bc -l | cut -c1-5)"
