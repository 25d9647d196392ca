#!/usr/bin/env bash
# Run the Mustang demo server in the foreground (build it first with
# `make run`, `make demo` or `make test`).
#
# Env read by the demo (mustang_demo:start/0):
#   PORT                       HTTP port (default 8080)
#   TLS_PORT                   HTTPS port (default 8443)
#   MUSTANG_REQUEST_PROCESS    true|false: run handlers in a per-request process
#   MUSTANG_MAX_KEEPALIVE      requests per connection, or "infinity"
#   MUSTANG_ACTIVE_N, MUSTANG_ADAPTIVE_ACTIVE, MUSTANG_DYNAMIC_BUFFER, MUSTANG_HIBERNATE, MUSTANG_HIBERNATE_AFTER,
#                              MUSTANG_SOCKET_BUFFER
#                              benchmark tuning, see examples/demo/src/mustang_demo.erl
#   MUSTANG_OPTIONS            any protocol options as an Erlang map, merged over the above,
#                              e.g. MUSTANG_OPTIONS='#{initial_stream_window_size => 1048576}'
# Extra VM flags can be passed in ERL_FLAGS (read by erl itself) or as
# arguments to this script (appended to the erl command line).
#
# The script execs the VM, so its PID is the VM's: `kill PID` (SIGTERM) stops
# the server; +Bd makes Ctrl-C stop it at once instead of opening the BREAK menu.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
APP_EBIN="$ROOT/_build/default/lib/mustang/ebin"
DEMO_EBIN="$ROOT/_build/demo/ebin"
if [[ ! -f "$APP_EBIN/mustang.app" || ! -f "$DEMO_EBIN/mustang_demo.beam" ]]; then
  echo "run_demo: not built ($APP_EBIN/mustang.app or $DEMO_EBIN/mustang_demo.beam missing); run 'make demo' first" >&2
  exit 1
fi
exec erl +Bd -noshell -pa "$APP_EBIN" -pa "$DEMO_EBIN" -eval 'mustang_demo:start()' "$@"
