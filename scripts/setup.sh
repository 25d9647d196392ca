#!/usr/bin/env bash
# Install what Mustang's build, tests and benchmarks need on a Debian 12
# machine. Idempotent and fast when everything is already there: it only
# calls apt-get / pip for what is missing, and prints one line per thing it
# installed (nothing at all when there was nothing to do).
#
#   scripts/setup.sh            # as root (or with sudo available)
#
# Env:
#   SETUP_VERBOSE=1   show apt/pip output instead of logging it to _tools/setup.log
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TOOLS="$ROOT/_tools"
VENV="$TOOLS/venv"
LOG="$TOOLS/setup.log"
mkdir -p "$TOOLS"

APT_PKGS=(
  erlang-nox erlang-dev rebar3 erlang-common-test erlang-dialyzer
  erlang-eunit erlang-proper erlang-proper-dev erlang-tools
  curl wrk nginx-light nghttp2-client openssl chromium graphviz
  media-types haproxy
)
# pip requirement -> module that must import for it to count as present
PY_REQS=("httpx[http2]" h2 hpack wsproto websockets hypercorn matplotlib pylsqpack)
PY_IMPORTS="import httpx, h2, hpack, h2.connection, wsproto, websockets, hypercorn, matplotlib, pylsqpack"

say() { echo "setup: $*"; }

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
if ! venv_ok; then
  for cand in "$(command -v python3 || true)" /usr/bin/python3; do
    [[ -n "$cand" && -x "$cand" ]] || continue
    if "$cand" -c 'import venv, ensurepip' >/dev/null 2>&1; then PY_BASE=$cand; break; fi
  done
  if [[ -z "$PY_BASE" ]]; then
    APT_PKGS+=(python3-venv)
    PY_BASE=/usr/bin/python3
  fi
fi

# --- apt packages -----------------------------------------------------------
missing=()
for p in "${APT_PKGS[@]}"; do
  pkg_installed "$p" || missing+=("$p")
done
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

# --- Python venv for black-box test clients ----------------------------------
if ! venv_ok; then
  rm -rf "$VENV"
  run_logged "$PY_BASE" -m venv "$VENV"
  say "created Python venv _tools/venv ($("$VENV/bin/python" -V 2>&1))"
fi
if ! "$VENV/bin/python" -c "$PY_IMPORTS" >/dev/null 2>&1; then
  run_logged "$VENV/bin/python" -m pip install -q --disable-pip-version-check "${PY_REQS[@]}"
  "$VENV/bin/python" -c "$PY_IMPORTS" || { echo "setup: FAILED: python packages do not import" >&2; exit 1; }
  for r in "${PY_REQS[@]}"; do say "installed python package $r into _tools/venv"; done
fi

# --- h2spec (HTTP/2 conformance, test/http2_SUITE) ----------------------------
# Built with `go install` into _tools/go/bin; Go's caches stay under _tools/go
# too. Go comes from apt (golang-go) when there is none on PATH or in
# /usr/local/go.
H2SPEC="$TOOLS/go/bin/h2spec"
if [[ ! -x "$H2SPEC" ]]; then
  GO=$(command -v go || true)
  [[ -z "$GO" && -x /usr/local/go/bin/go ]] && GO=/usr/local/go/bin/go
  if [[ -z "$GO" ]]; then
    run_logged "${SUDO[@]}" apt-get update -q
    run_logged "${SUDO[@]}" apt-get install -y -q --no-install-recommends \
      -o DPkg::Lock::Timeout=300 golang-go
    GO=$(command -v go || true)
    [[ -n "$GO" ]] || { echo "setup: FAILED: golang-go installed but no go on PATH" >&2; exit 1; }
    say "installed apt package golang-go"
  fi
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
if [[ ! -f "$NODE_DIR/node_modules/ws/package.json" ]]; then
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
