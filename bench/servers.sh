# The servers of bench/run.sh (sourced by it, not run): nginx, the Mustang
# demo (one VM per request mode), the peers (Cowboy 2.13, Elli 3.3, run as
# black boxes through $PEERS/start.sh) and the Websocket reference server.
# All of them run for the whole benchmark, idle while another one is
# measured, so that each round can run one workload against every server
# before the next workload. PIDS[server] holds each one's PID (the Cowboy
# VM serves both the "cowboy" ports).
#
# Needs from run.sh: HOST, the *_PORT variables, NGX, RES, DEMO_CMD, PEERS,
# WSREF, WSREF_LIB, WSREF_PORT, ROOT; lib.sh's say/die/wait_http/port_open;
# OUT (where the servers' logs go), PIN_CMD (empty, or `taskset -c N` in the
# one-core phase: it prefixes every server command, so that the server
# starts on that CPU and sizes itself for one) and START_SKIP (1 in the
# one-core phase: a server that does not start is an incident, not the end
# of the run).

declare -A PIDS=()

# start_failed <message>: a server that did not start ends the run; in the
# one-core phase (START_SKIP=1) it is a failed run and an incident, and the
# caller skips that server's runs.
start_failed() {
  if [[ "${START_SKIP:-0}" != 1 ]]; then
    die "$1"
  fi
  FAILED_RUNS=$((FAILED_RUNS + 1))
  echo "round ${ROUND:-?}${PLACEMENT:+ ($PLACEMENT)}: $1: its runs of this round skipped" >>"$RES/incidents.txt"
  say "  $1: skipping its runs of this round"
  return 1
}

free_ports() { # what port...: dies when one is already taken
  local what=$1 p
  shift
  for p in "$@"; do
    port_open "$p" && die "port $p already in use ($what: a stale server, or a test server on it?)"
  done
  return 0
}

start_nginx() {
  free_ports "nginx, BENCH_NGINX_PORT / BENCH_NGINX_H2_PORT" "$NGINX_PORT" "$NGINX_H2_PORT"
  rm -rf "$NGX"
  mkdir -p "$NGX/logs" "$NGX/tmp"
  # on one CPU (the one-core phase), one worker: what `worker_processes
  # auto` gives on a one-core machine, as the VMs size themselves
  local workers=2
  ((${#PIN_CMD[@]})) && workers=1
  sed -e "s|@DIR@|$NGX|g" -e "s|@PORT@|$NGINX_PORT|g" -e "s|@H2PORT@|$NGINX_H2_PORT|g" \
    -e "s|^worker_processes 2;|worker_processes $workers;|" bench/nginx.conf >"$NGX/nginx.conf"
  nginx -t -q -p "$NGX/" -c "$NGX/nginx.conf" -e "$NGX/logs/error.log" \
    || die "nginx config test failed"
  "${PIN_CMD[@]}" nginx -p "$NGX/" -c "$NGX/nginx.conf" -e "$NGX/logs/error.log" \
    </dev/null >"$NGX/logs/stdout.log" 2>&1 &
  PIDS[nginx]=$!
  wait_http "http://$HOST:$NGINX_PORT/" "${PIDS[nginx]}" nginx "$NGX/logs/error.log" \
    || { start_failed "nginx did not start"; return 1; }
  say "nginx up on $HOST:$NGINX_PORT, h2c on $HOST:$NGINX_H2_PORT, $workers worker(s) (pid ${PIDS[nginx]})"
}

# start_demo <server> <request_process> <port> <tls port>
start_demo() {
  local server=$1 rp=$2 port=$3 tls=$4 logf="$OUT/demo-rp_$2.log"
  free_ports "the Mustang demo, BENCH_PORT / BENCH_TLS_PORT / BENCH_RP_PORT / BENCH_RP_TLS_PORT" "$port" "$tls"
  PORT=$port TLS_PORT=$tls MUSTANG_MAX_KEEPALIVE=infinity \
    MUSTANG_REQUEST_PROCESS=$rp "${PIN_CMD[@]}" "$DEMO_CMD" </dev/null >>"$logf" 2>&1 &
  PIDS[$server]=$!
  wait_http "http://$HOST:$port/" "${PIDS[$server]}" "mustang demo" "$logf" \
    || { start_failed "the Mustang demo is not serving http://$HOST:$port/ (see $logf)"; return 1; }
  say "mustang demo up on $HOST:$port, MUSTANG_REQUEST_PROCESS=$rp (pid ${PIDS[$server]})"
}

# start_peer cowboy|elli: $PEERS/start.sh in the foreground (it execs the VM).
start_peer() {
  local name=$1 logf="$OUT/$1.log" port
  case $name in
    cowboy)
      free_ports "Cowboy, ../shared/peers (held by a run that did not take /tmp/mustang-bench.lock?)" \
        "$COWBOY_PORT" "$COWBOY_H2_PORT"
      port=$COWBOY_PORT ;;
    elli)
      free_ports "Elli, ../shared/peers" "$ELLI_PORT"
      port=$ELLI_PORT ;;
  esac
  "${PIN_CMD[@]}" "$PEERS/start.sh" "$name" </dev/null >>"$logf" 2>&1 &
  PIDS[$name]=$!
  wait_http "http://$HOST:$port/" "${PIDS[$name]}" "$name" "$logf" \
    || { start_failed "$name ($PEERS/start.sh $name) is not serving http://$HOST:$port/"; return 1; }
  if [[ $name == cowboy ]]; then
    wait_http "http://$HOST:$COWBOY_H2_PORT/" "${PIDS[$name]}" "$name" "$logf" \
      || { start_failed "cowboy is not serving its raised-limit port http://$HOST:$COWBOY_H2_PORT/"; return 1; }
    say "cowboy up on $HOST:$port, HTTP/2 frame-rate limit raised on $HOST:$COWBOY_H2_PORT (pid ${PIDS[$name]})"
  else
    say "$name up on $HOST:$port (pid ${PIDS[$name]})"
  fi
}

start_wsref() {
  local logf="$OUT/wsref.log"
  free_ports "the Websocket reference server, BENCH_WSREF_PORT" "$WSREF_PORT"
  if [[ "$WSREF_LIB" == node ]]; then
    NODE_PATH="$ROOT/_tools/node/node_modules" "${PIN_CMD[@]}" node "$ROOT/bench/wsref/ws_node.js" "$HOST" "$WSREF_PORT" \
      </dev/null >>"$logf" 2>&1 &
  else
    "${PIN_CMD[@]}" "$WSREF" -addr "$HOST:$WSREF_PORT" -lib "$WSREF_LIB" </dev/null >>"$logf" 2>&1 &
  fi
  PIDS[wsref]=$!
  wait_http "http://$HOST:$WSREF_PORT/" "${PIDS[wsref]}" "websocket reference server" "$logf" \
    || { start_failed "the Websocket reference server did not start"; return 1; }
  say "websocket reference server ($WSREF_LIB) up on $HOST:$WSREF_PORT (pid ${PIDS[wsref]})"
}

# start_server <server>: starts one server on its ports (1 when it did not
# start, in the one-core phase; elsewhere that ends the run).
start_server() {
  case $1 in
    mustang) start_demo mustang false "$DEMO_PORT" "$DEMO_TLS_PORT" ;;
    mustang-rp) start_demo mustang-rp true "$RP_PORT" "$RP_TLS_PORT" ;;
    cowboy | elli) start_peer "$1" ;;
    nginx) start_nginx ;;
    wsref) start_wsref ;;
  esac
}

# start_warm <server>: start_server, then the untimed warm-up (HTTP servers).
start_warm() {
  start_server "$1" || return 1
  [[ $1 == wsref ]] || warmup "$(port_for "$1" W1a)"
}

# restart_server <server>: starts a server that exited under the benchmark
# again (it crashed: its log tells; or another process on this shared
# machine killed it), on the same ports, with the same warm-up.
restart_server() {
  local s=$1
  stop_pid "${PIDS[$s]}" "$s"   # reaps it
  start_warm "$s"
}

stop_servers() {
  local s
  for s in "${!PIDS[@]}"; do stop_pid "${PIDS[$s]}" "$s"; done
  PIDS=()
}

# port_for <server> <workload>: where that server serves that workload.
# Cowboy's HTTP/2 rows (W2, W4, W5b) use its raised-frame-rate-limit port:
# with its defaults h2load hello loses half its requests and bulk uploads
# fail (BENCH.md).
port_for() {
  local s=$1 wl=$2
  case $s in
    nginx) case $wl in W2* | W4*) echo "$NGINX_H2_PORT" ;; *) echo "$NGINX_PORT" ;; esac ;;
    mustang) echo "$DEMO_PORT" ;;
    mustang-rp) echo "$RP_PORT" ;;
    cowboy) case $wl in W2* | W4* | W5b) echo "$COWBOY_H2_PORT" ;; *) echo "$COWBOY_PORT" ;; esac ;;
    elli) echo "$ELLI_PORT" ;;
    wsref) echo "$WSREF_PORT" ;;
  esac
}

# servers_for <workload>: the servers that run it, in a fixed order (the
# round rotates it). mustang-rp: HTTP/1.1 handlers only (W1, W3, W5a);
# Elli: HTTP/1.1 hello and 1 MiB bodies (its body limit refuses 64 MiB);
# nginx: hello and h2c bodies (W1, W2, W4); Websocket: Cowboy on W6a-W6f,
# the reference server on HTTP/1.1 rows; W7 (paced GET /sleep): Mustang,
# Cowboy and Elli.
servers_for() {
  local wl=$1 all=()
  case $wl in
    W1?) all=(mustang mustang-rp cowboy elli nginx) ;;
    W7) all=(mustang cowboy elli) ;;   # GET /sleep: nginx has no such route
    W2? | W4?) all=(mustang cowboy nginx) ;;
    W3?) all=(mustang mustang-rp cowboy elli) ;;
    W5a) all=(mustang mustang-rp cowboy) ;;
    W5b) all=(mustang cowboy) ;;
    W5c) all=(mustang) ;;
    W6m-*-h2-*) all=(mustang) ;;
    W6m-*) all=(mustang wsref) ;;
    W6?) all=(mustang cowboy wsref) ;;
  esac
  local s out=()
  for s in "${all[@]}"; do [[ -n "${PIDS[$s]:-}" ]] && out+=("$s"); done
  echo "${out[*]}"
}

# rotate <n> <words...>: the words rotated left by n.
rotate() {
  local n=$1
  shift
  local a=("$@") k=$#
  ((k)) || return 0
  n=$((n % k))
  echo "${a[@]:n} ${a[@]:0:n}"
}
