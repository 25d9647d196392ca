#!/usr/bin/env bash
# Install what one use of Mustang's repository needs on a Debian 12 machine,
# and nothing more. Idempotent and fast when everything is already there: it
# only calls apt-get / pip / go / npm for what is missing, and prints one
# line per thing it installed (nothing at all when there was nothing to do).
#
#   scripts/setup.sh [--list | --dry-run] [SET...]     # as root (or with sudo)
#
# Sets (several may be given; none means test):
#   run    Erlang/OTP and rebar3: make run, make example, make docs, building
#          an application on Mustang. The demo makes its self-signed
#          certificate with OTP's public_key, so no openssl.
#   test   run + what make test, make soak and make fuzz use: CT/EUnit/PropEr/
#          Dialyzer, curl, nghttp2 (h2load, nghttp), wrk, openssl, haproxy,
#          headless chromium, media-types, the Python venv _tools/venv (httpx,
#          h2, hpack, wsproto, websockets, hypercorn, matplotlib), h2spec
#          (Go) and Node's ws package.
#   bench  run + what make bench uses: wrk, nghttp2 (h2load), nginx, curl, a
#          Go toolchain (bench/wsload, bench/wsref), matplotlib for the charts.
#   docs   Graphviz (make rest-diagrams).
#   all    every set (make setup).
#
#   --list      print every item of the sets, one per line ("apt erlang-nox",
#               "python matplotlib", "go toolchain", "go h2spec", "npm ws"), whether it is
#               installed or not, and install nothing
#   --dry-run   print the items that are missing here, install nothing
#
# Env:
#   SETUP_VERBOSE=1   show apt/pip output instead of logging it to _tools/setup.log
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TOOLS="$ROOT/_tools"
VENV="$TOOLS/venv"
LOG="$TOOLS/setup.log"

MODE=install
SETS=()
for arg in "$@"; do
  case "$arg" in
    --list) MODE=list ;;
    --dry-run) MODE=dry_run ;;
    run|test|bench|docs) SETS+=("$arg") ;;
    all) SETS+=(run test bench docs) ;;
    *) echo "usage: scripts/setup.sh [--list | --dry-run] [run|test|bench|docs|all]..." >&2; exit 2 ;;
  esac
done
((${#SETS[@]})) || SETS=(test)
has_set() { local s; for s in "${SETS[@]}"; do [[ "$s" == "$1" ]] && return 0; done; return 1; }

# --- what each set holds ----------------------------------------------------
APT_PKGS=(erlang-nox erlang-dev rebar3)
PY_REQS=()       # pip requirements
PY_IMPORTS=()    # the module that must import for each of them to count as present
WANT_GO=0        # a Go toolchain: on PATH, in /usr/local/go, or apt's golang-go
WANT_H2SPEC=0
WANT_NODE_WS=0
add_apt() { local p q; for p in "$@"; do for q in "${APT_PKGS[@]}"; do [[ "$p" == "$q" ]] && continue 2; done; APT_PKGS+=("$p"); done; }
add_py() {  # requirement import ...
  while (($#)); do
    local r=$1 m=$2 q; shift 2
    for q in "${PY_REQS[@]}"; do [[ "$q" == "$r" ]] && continue 2; done
    PY_REQS+=("$r"); PY_IMPORTS+=("$m")
  done
}
if has_set test; then
  add_apt erlang-common-test erlang-dialyzer erlang-eunit erlang-proper erlang-proper-dev \
    erlang-tools curl wrk nghttp2-client openssl chromium media-types haproxy \
    ngtcp2-client
  add_py "httpx[http2]" httpx h2 h2.connection hpack hpack wsproto wsproto websockets websockets \
    hypercorn hypercorn matplotlib matplotlib
  # aioquic and pylsqpack: HTTP/3 and QPACK clients no one here wrote (test/http3_SUITE).
  add_py aioquic aioquic pylsqpack pylsqpack
  WANT_GO=1
  WANT_H2SPEC=1
  WANT_NODE_WS=1
fi
if has_set bench; then
  add_apt curl wrk nghttp2-client nginx-light
  add_py matplotlib matplotlib
  WANT_GO=1
fi
if has_set docs; then
  add_apt graphviz
fi

say() { echo "setup: $*"; }

if [[ "$MODE" == list ]]; then
  for p in "${APT_PKGS[@]}"; do echo "apt $p"; done
  for r in "${PY_REQS[@]}"; do echo "python $r"; done
  ((WANT_GO)) && echo "go toolchain"
  ((WANT_H2SPEC)) && echo "go h2spec"
  ((WANT_NODE_WS)) && echo "npm ws"
  exit 0
fi

mkdir -p "$TOOLS"

run_logged() {
  # Run a command; keep its output in $LOG unless SETUP_VERBOSE=1; on failure
  # show the end of the log so CI output explains what went wrong.
  if [[ "${SETUP_VERBOSE:-0}" == 1 ]]; then
    "$@" </dev/null
  else
    if ! "$@" </dev/null >>"$LOG" 2>&1; then
      echo "setup: FAILED: $*" >&2
      tail -n 40 "$LOG" >&2 || true
      return 1
    fi
  fi
}

SUDO=()
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1; then SUDO=(sudo -n DEBIAN_FRONTEND=noninteractive); fi
fi

pkg_installed() {
  [[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true)" == "install ok installed" ]]
}

# --- which python makes the venv ------------------------------------------
# Prefer the python3 on PATH (pyenv 3.11 on the dev machines); fall back to
# Debian's /usr/bin/python3, which needs python3-venv for `-m venv`.
PY_BASE=""
venv_ok() { [[ -x "$VENV/bin/python" ]] && "$VENV/bin/python" -c 'import sys' >/dev/null 2>&1; }
py_import_line() { local IFS=,; echo "import ${PY_IMPORTS[*]}"; }
if ((${#PY_REQS[@]})) && ! venv_ok; then
  for cand in "$(command -v python3 || true)" /usr/bin/python3; do
    [[ -n "$cand" && -x "$cand" ]] || continue
    if "$cand" -c 'import venv, ensurepip' >/dev/null 2>&1; then PY_BASE=$cand; break; fi
  done
  if [[ -z "$PY_BASE" ]]; then
    add_apt python3-venv
    PY_BASE=/usr/bin/python3
  fi
fi

find_go() {
  local go
  go=$(command -v go || true)
  [[ -z "$go" && -x /usr/local/go/bin/go ]] && go=/usr/local/go/bin/go
  echo "$go"
}

# --- apt packages -----------------------------------------------------------
missing=()
for p in "${APT_PKGS[@]}"; do
  pkg_installed "$p" || missing+=("$p")
done
if [[ "$MODE" == dry_run ]]; then
  for p in "${missing[@]}"; do echo "apt $p"; done
  if ((${#PY_REQS[@]})); then
    if ! venv_ok; then
      for r in "${PY_REQS[@]}"; do echo "python $r"; done
    elif ! "$VENV/bin/python" -c "$(py_import_line)" >/dev/null 2>&1; then
      for i in "${!PY_REQS[@]}"; do
        "$VENV/bin/python" -c "import ${PY_IMPORTS[$i]}" >/dev/null 2>&1 || echo "python ${PY_REQS[$i]}"
      done
    fi
  fi
  ((WANT_GO)) && [[ -z "$(find_go)" ]] && echo "go toolchain"
  ((WANT_H2SPEC)) && [[ ! -x "$TOOLS/go/bin/h2spec" ]] && echo "go h2spec"
  ((WANT_NODE_WS)) && [[ ! -f "$TOOLS/node/node_modules/ws/package.json" ]] && echo "npm ws"
  exit 0
fi
if ((${#missing[@]})); then
  : >"$LOG"
  run_logged "${SUDO[@]}" apt-get update -q
  run_logged "${SUDO[@]}" apt-get install -y -q --no-install-recommends \
    -o DPkg::Lock::Timeout=300 -o Dpkg::Options::=--force-confdef \
    -o Dpkg::Options::=--force-confold "${missing[@]}"
  for p in "${missing[@]}"; do
    pkg_installed "$p" || { echo "setup: FAILED: apt package $p is still not installed" >&2; exit 1; }
    say "installed apt package $p"
  done
fi

# --- Python venv for black-box test clients and the benchmark charts --------
if ((${#PY_REQS[@]})); then
  if ! venv_ok; then
    rm -rf "$VENV"
    run_logged "$PY_BASE" -m venv "$VENV"
    say "created Python venv _tools/venv ($("$VENV/bin/python" -V 2>&1))"
  fi
  if ! "$VENV/bin/python" -c "$(py_import_line)" >/dev/null 2>&1; then
    run_logged "$VENV/bin/python" -m pip install -q --disable-pip-version-check "${PY_REQS[@]}"
    "$VENV/bin/python" -c "$(py_import_line)" || { echo "setup: FAILED: python packages do not import" >&2; exit 1; }
    for r in "${PY_REQS[@]}"; do say "installed python package $r into _tools/venv"; done
  fi
fi

# --- Go (h2spec; bench/wsload and bench/wsref, which bench/lib.sh builds) ---
# Go comes from apt (golang-go) when there is none on PATH or in /usr/local/go.
GO=""
if ((WANT_GO)); then
  GO=$(find_go)
  if [[ -z "$GO" ]]; then
    run_logged "${SUDO[@]}" apt-get update -q
    run_logged "${SUDO[@]}" apt-get install -y -q --no-install-recommends \
      -o DPkg::Lock::Timeout=300 golang-go
    GO=$(find_go)
    [[ -n "$GO" ]] || { echo "setup: FAILED: golang-go installed but no go on PATH" >&2; exit 1; }
    say "installed apt package golang-go"
  fi
fi

# --- h2spec (HTTP/2 conformance, test/http2_SUITE) ----------------------------
# Built with `go install` into _tools/go/bin; Go's caches stay under _tools/go
# too.
H2SPEC="$TOOLS/go/bin/h2spec"
if ((WANT_H2SPEC)) && [[ ! -x "$H2SPEC" ]]; then
  mkdir -p "$TOOLS/go/bin"
  run_logged env GOBIN="$TOOLS/go/bin" GOPATH="$TOOLS/go/path" GOCACHE="$TOOLS/go/cache" \
    GOMODCACHE="$TOOLS/go/modcache" GOFLAGS=-modcacherw \
    "$GO" install github.com/summerwind/h2spec/cmd/h2spec@latest
  [[ -x "$H2SPEC" ]] || { echo "setup: FAILED: go install h2spec made no $H2SPEC" >&2; exit 1; }
  say "installed h2spec into _tools/go/bin"
fi

# --- Node ws (Websocket reference server and client, test/websocket_SUITE) ---
# npm installs into _tools/node/node_modules; node and npm come from apt
# (nodejs, npm) when there are none on PATH.
NODE_DIR="$TOOLS/node"
if ((WANT_NODE_WS)) && [[ ! -f "$NODE_DIR/node_modules/ws/package.json" ]]; then
  if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    run_logged "${SUDO[@]}" apt-get update -q
    run_logged "${SUDO[@]}" apt-get install -y -q --no-install-recommends \
      -o DPkg::Lock::Timeout=300 nodejs npm
    say "installed apt packages nodejs npm"
  fi
  mkdir -p "$NODE_DIR"
  [[ -f "$NODE_DIR/package.json" ]] || echo '{"private": true}' >"$NODE_DIR/package.json"
  run_logged npm install --prefix "$NODE_DIR" --no-audit --no-fund --silent ws@8
  [[ -f "$NODE_DIR/node_modules/ws/package.json" ]] || { echo "setup: FAILED: npm made no $NODE_DIR/node_modules/ws" >&2; exit 1; }
  say "installed npm package ws into _tools/node"
fi
exit 0
