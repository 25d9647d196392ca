# Shell functions shared by bench/run.sh and bench/h2_linear.sh (sourced,
# not run). The caller sets HOST, START_TIMEOUT and TAG (message prefix) and
# keeps TOOL_PID empty; run_bg sets it while a load tool runs.

say() { echo "$TAG: $*"; }
die() { echo "$TAG: ERROR: $*" >&2; exit 1; }

port_open() { (exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null; }

stop_pid() { # pid name
  local pid=$1 i
  [[ -n "$pid" ]] || return 0
  kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for i in $(seq 1 100); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    say "$2 (pid $pid) ignored SIGTERM for 10 s: SIGKILL"
    pkill -KILL -P "$pid" 2>/dev/null || true
    kill -KILL "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
}

wait_http() { # url pid name logfile
  local url=$1 pid=$2 name=$3 logf=$4 deadline=$((SECONDS + START_TIMEOUT))
  while ! curl -sf -o /dev/null --max-time 1 "$url"; do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "$TAG: ERROR: $name exited before answering $url; end of $logf:" >&2
      tail -n 30 "$logf" >&2 || true
      return 1
    fi
    if ((SECONDS >= deadline)); then
      echo "$TAG: ERROR: $name did not answer $url within ${START_TIMEOUT}s; end of $logf:" >&2
      tail -n 30 "$logf" >&2 || true
      return 1
    fi
    sleep 0.2
  done
}

# Load tools run in the background + wait, so that a SIGTERM/SIGINT to the
# script is handled at once (bash defers traps until a foreground child ends).
run_bg() { # <out> <limit seconds> <cmd...>; returns the command's exit status
  local out=$1 limit=$2 rc=0
  shift 2
  timeout -k 5 "$limit" "$@" </dev/null >>"$out" 2>&1 &
  TOOL_PID=$!
  wait "$TOOL_PID" || rc=$?
  TOOL_PID=""
  return "$rc"
}

# make_file <path> <bytes>: random content, made once (kept while its size
# is right).
make_file() {
  local path=$1 bytes=$2
  [[ -f "$path" && $(stat -c %s "$path") -eq $bytes ]] && return 0
  say "generating $path ($bytes bytes of random data)"
  mkdir -p "$(dirname "$path")"
  head -c "$bytes" /dev/urandom >"$path.tmp" && mv "$path.tmp" "$path"
}

# upload_run <out> <limit> <expected bytes> <expected http_version> <curl args...>:
# one timed curl upload to /read_body. The raw file has the command, curl's
# -w figures, the response body (the demo answers the byte count it read)
# and the exit status; bench/report.py turns a wrong count, status or
# protocol into an error.
upload_run() {
  local out=$1 limit=$2 expect=$3 version=$4 rc=0 body="$1.body"
  shift 4
  echo "# cmd: curl $*" >"$out"
  echo "expected_bytes: $expect" >>"$out"
  echo "expected_version: $version" >>"$out"
  run_bg "$out" "$limit" curl -sS -o "$body" \
    -w 'time_total: %{time_total}\nhttp_code: %{http_code}\nhttp_version: %{http_version}\nsize_upload: %{size_upload}\n' \
    "$@" || rc=$?
  echo "response: $(head -c 100 "$body" 2>/dev/null | tr -d '\r\n')" >>"$out"
  rm -f "$body"
  echo "# exit: $rc" >>"$out"
  return "$rc"
}

# Go tools (bench/wsload, bench/wsref, bench/echofloor), built into
# _tools/go/bin when missing or when their sources changed (a hash of the
# sources is kept beside the binary).
GO_BIN="$ROOT/_tools/go/bin"
go_cmd() { command -v go || { [[ -x /usr/local/go/bin/go ]] && echo /usr/local/go/bin/go; } || true; }
go_tool() { # name: builds bench/<name> into $GO_BIN/<name> when needed
  local name=$1 src="$ROOT/bench/$1" bin="$GO_BIN/$1" hash go
  hash=$(cd "$src" && cat go.mod $(ls go.sum 2>/dev/null) ./*.go | sha256sum | cut -d" " -f1)
  [[ -x "$bin" && -f "$bin.srchash" && $(cat "$bin.srchash") == "$hash" ]] && return 0
  go=$(go_cmd)
  [[ -n "$go" ]] || die "go not found (needed to build bench/$name; scripts/setup.sh installs golang-go)"
  say "building bench/$name into _tools/go/bin/$name"
  mkdir -p "$GO_BIN"
  (cd "$src" && env GOPATH="$ROOT/_tools/go/path" GOCACHE="$ROOT/_tools/go/cache" \
    GOMODCACHE="$ROOT/_tools/go/modcache" GOFLAGS=-modcacherw "$go" build -o "$bin.tmp" .) \
    || die "go build of bench/$name failed"
  mv "$bin.tmp" "$bin"
  echo "$hash" >"$bin.srchash"
}

# take_bench_lock: never two benchmarks at once on this machine, whatever
# the checkout: /tmp/mustang-bench.lock (BENCH_LOCK), held on fd 9 until the
# script exits; waits up to BENCH_LOCK_WAIT seconds (1800) for a running
# one. BENCH_LOCK_HELD=1: the caller holds it already (bench/run.sh calling
# bench/h2_linear.sh, or `flock /tmp/mustang-bench.lock bench/run.sh`).
take_bench_lock() {
  local lock=${BENCH_LOCK:-/tmp/mustang-bench.lock}
  [[ "${BENCH_LOCK_HELD:-0}" == 1 ]] && return 0
  exec 9>>"$lock"
  if ! flock -n 9; then
    say "waiting for $lock (another benchmark is running)"
    flock -w "${BENCH_LOCK_WAIT:-1800}" 9 || die "another benchmark held $lock for ${BENCH_LOCK_WAIT:-1800} s"
  fi
  export BENCH_LOCK_HELD=1
}
