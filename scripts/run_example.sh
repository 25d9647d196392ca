#!/usr/bin/env bash
# Build and run one example of examples/ in the foreground:
#   make example NAME=hello_world        (or scripts/run_example.sh hello_world)
# The example's application is started with its `port' (PORT, default 8080)
# and `tls_port' (TLS_PORT, default 8443) environment keys.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
NAME=${1:-}
if [[ -z "$NAME" || ! -d "$ROOT/examples/$NAME/src" ]]; then
  echo "usage: make example NAME=<name>, one of:" $(cd "$ROOT/examples" && ls -d */ | tr -d /) >&2
  exit 1
fi
APP_EBIN="$ROOT/_build/default/lib/mustang/ebin"
OUT="$ROOT/_build/examples/$NAME/ebin"
mkdir -p "$OUT"
erlc +debug_info -I "$ROOT/include" -pa "$APP_EBIN" -o "$OUT" "$ROOT/examples/$NAME/src/"*.erl
cp "$ROOT/examples/$NAME/src/$NAME.app.src" "$OUT/$NAME.app"
# Examples that serve files find them relative to their own directory.
cd "$ROOT/examples/$NAME"
echo "example $NAME: http://localhost:${PORT:-8080}/ (Ctrl-C stops it)"
exec erl +Bd -noshell -pa "$APP_EBIN" -pa "$OUT" \
  -$NAME port "${PORT:-8080}" -$NAME tls_port "${TLS_PORT:-8443}" \
  -eval "{ok, _} = application:ensure_all_started($NAME)"
