#!/usr/bin/env bash
# Runs the conformance cases against the reference servers (README.md,
# "Validation"): Node's ws over HTTP/1.1, hypercorn over HTTP/1.1 and over
# HTTP/2 (RFC 8441, h2c). Prints each run's failures and summary, then how
# the failures differ from expected_failures.json (the list that
# test/ws_reference_SUITE checks in `make test`); exits with 1 when they
# differ. Needs scripts/setup.sh first.
#   test/ws_conformance/validate.sh [run.py options, e.g. --only 6.]
# With --only or --skip, only the cases that ran are compared.
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

# compare NAME: the run's report ($OUT/NAME.json) against expected_failures.json
# (and the number of cases, when all ran).
FULL=$(( $# == 0 ))
compare() {
  "$PY" - "$HERE/expected_failures.json" "$1" "$OUT/$1.json" "$FULL" <<'EOF'
import json, sys
expected_file, name, report, full = sys.argv[1:]
exp = json.load(open(expected_file))[name]
results = json.load(open(report))["results"]
fail = set(exp["fail"])
flaky = {i for group in exp.get("flaky", []) for i in group["ids"]}
failed = {i for i, r in results.items() if not r["ok"]}
ran = set(results)
key = lambda i: [int(p) for p in i.split(".")]
new = sorted(failed - fail - flaky, key=key)
passing = sorted((fail & ran) - failed, key=key)
flaky_failed = sorted(failed & flaky, key=key)
print("-- %s: %d new failure(s)%s" % (name, len(new), ": " + " ".join(new) if new else ""))
print("-- %s: %d listed failure(s) now passing%s"
      % (name, len(passing), ": " + " ".join(passing) if passing else ""))
print("-- %s: %d of %d flaky case(s) failed%s"
      % (name, len(flaky_failed), len(flaky & ran), ": " + " ".join(flaky_failed) if flaky_failed else ""))
wrong_total = full == "1" and len(ran) != exp["total"]
if wrong_total:
    print("-- %s: %d cases ran, expected %d" % (name, len(ran), exp["total"]))
sys.exit(1 if new or passing or wrong_total else 0)
EOF
}

STATUS=0
echo "== Node ws, HTTP/1.1"
"$PY" "$HERE/run.py" --port "$NODE_PORT" --proto h1 --quiet --json "$OUT/node_h1.json" "$@"
compare node_h1 || STATUS=1
echo "== hypercorn, HTTP/1.1 (--lenient-errors)"
"$PY" "$HERE/run.py" --port "$HYPER_PORT" --proto h1 --quiet --lenient-errors -j 16 --json "$OUT/hypercorn_h1.json" "$@"
compare hypercorn_h1 || STATUS=1
echo "== hypercorn, HTTP/2 (--lenient-errors --no-end-check)"
"$PY" "$HERE/run.py" --port "$HYPER_PORT" --proto h2 --quiet --lenient-errors --no-end-check -j 16 --json "$OUT/hypercorn_h2.json" "$@"
compare hypercorn_h2 || STATUS=1
exit $STATUS
