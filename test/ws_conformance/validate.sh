#!/usr/bin/env bash
# Runs the conformance cases against the reference servers (README.md,
# "Validation"): Node's ws over HTTP/1.1, hypercorn over HTTP/1.1 and over
# HTTP/2 (RFC 8441, h2c). Prints each run's failures and summary; the
# expected failures are listed in README.md. Needs scripts/setup.sh first.
#   test/ws_conformance/validate.sh [run.py options, e.g. --only 6.]
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PY="$ROOT/_tools/venv/bin/python"
NODE_PORT=${NODE_PORT:-9301}
HYPER_PORT=${HYPER_PORT:-9302}
OUT=$(mktemp -d)
NODE_PATH="$ROOT/_tools/node/node_modules" node "$HERE/node_echo_server.js" "$NODE_PORT" >"$OUT/node.log" 2>&1 &
NODE_PID=$!
"$PY" "$HERE/hypercorn_echo.py" "$HYPER_PORT" >"$OUT/hypercorn.log" 2>&1 &
HYPER_PID=$!
trap 'kill $NODE_PID $HYPER_PID 2>/dev/null; rm -rf "$OUT"' EXIT
for _ in $(seq 50); do
  grep -q listening "$OUT/node.log" && grep -q Running "$OUT/hypercorn.log" && break
  sleep 0.2
done
echo "== Node ws, HTTP/1.1"
"$PY" "$HERE/run.py" --port "$NODE_PORT" --proto h1 --quiet "$@"
echo "== hypercorn, HTTP/1.1 (--lenient-errors)"
"$PY" "$HERE/run.py" --port "$HYPER_PORT" --proto h1 --quiet --lenient-errors -j 16 "$@"
echo "== hypercorn, HTTP/2 (--lenient-errors --no-end-check)"
"$PY" "$HERE/run.py" --port "$HYPER_PORT" --proto h2 --quiet --lenient-errors --no-end-check -j 16 "$@"
exit 0
