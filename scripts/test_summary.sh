#!/usr/bin/env bash
# Read a `make test` log and print "N passed, N failed[, N skipped]" summing
# the EUnit and Common Test counts printed by rebar3. Prints nothing and exits
# 1 unless both an EUnit and a CT summary were found (no made-up totals).
#
#   scripts/test_summary.sh _build/ci-test.log
set -euo pipefail
log=${1:?usage: test_summary.sh LOGFILE}
[[ -r "$log" ]] || exit 1
sed 's/\x1b\[[0-9;]*[A-Za-z]//g; s/\r//g' "$log" | awk '
  # EUnit via rebar3: "12 tests, 0 failures[, 1 skipped][, 2 cancelled]"
  /^[ \t]*[0-9]+ tests?, [0-9]+ failures?/ {
    match($0, /[0-9]+ tests?/);    et = substr($0, RSTART, RLENGTH) + 0
    match($0, /[0-9]+ failures?/); ef = substr($0, RSTART, RLENGTH) + 0
    es = 0; ec = 0
    if (match($0, /[0-9]+ skipped/))   es = substr($0, RSTART, RLENGTH) + 0
    if (match($0, /[0-9]+ cancelled/)) ec = substr($0, RSTART, RLENGTH) + 0
    ep = et - ef - es - ec; if (ep < 0) ep = 0
    eunit = 1; efail = ef + ec; eskip = es
    next
  }
  # plain EUnit: "All 12 tests passed." is also what CT prints, so EUnit
  # only counts it before the CT section starts.
  /There were no tests to run/ && !in_ct { eunit = 1; ep = 0; efail = 0; eskip = 0; next }
  /Running Common Test suites/ { in_ct = 1 }
  in_ct && /^[ \t]*All [0-9]+ tests passed/ {
    match($0, /[0-9]+/); cp = substr($0, RSTART, RLENGTH) + 0; cf = 0; cs = 0; ct = 1; next
  }
  # rebar3 CT: "Failed 1 tests. Skipped 1 (1, 0) tests. Passed 2 tests."
  # (also accepts "Failed: 1.  Skipped: 1.  Passed: 2.")
  in_ct && /(Failed:? [0-9]+|Skipped:? [0-9]+|Passed:? [0-9]+)/ && !/ ==> / {
    f = 0; s = 0; p = 0; hit = 0
    if (match($0, /Failed:? [0-9]+/))  { t = substr($0, RSTART, RLENGTH); gsub(/[^0-9]/, "", t); f = t + 0; hit = 1 }
    if (match($0, /Skipped:? [0-9]+/)) { t = substr($0, RSTART, RLENGTH); gsub(/[^0-9]/, "", t); s = t + 0; hit = 1 }
    if (match($0, /Passed:? [0-9]+/))  { t = substr($0, RSTART, RLENGTH); gsub(/[^0-9]/, "", t); p = t + 0; hit = 1 }
    if (hit) { cp = p; cf = f; cs = s; ct = 1 }
    next
  }
  END {
    if (!eunit || !ct) exit 1
    line = sprintf("%d passed, %d failed", ep + cp, efail + cf)
    if (eskip + cs > 0) line = line sprintf(", %d skipped", eskip + cs)
    print line
  }'
