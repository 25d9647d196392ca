# Scaling curves of bench/run.sh (sourced by it after the rounds, while every
# server is still up; bench/publish.py charts them):
#
#   scale_conns   HTTP/1.1 hello with wrk at BENCH_SCALE_CONNS connections
#                 (1 10 100 1000 10000), BENCH_SCALE_DURATION (5s) each, against
#                 Mustang (rp=false), Cowboy, Elli and nginx, the server order
#                 rotated per point; wrk --timeout 10s. 10,000 connections need
#                 `ulimit -n` above 20,000 (run.sh raises the soft limit to the
#                 hard one before starting the servers).
#   scale_bodies  one timed curl upload to POST /read_body per body size
#                 (BENCH_SCALE_SIZES, numfmt IEC: 1K 16K 256K 4M 64M 1G),
#                 BENCH_SCALE_REPEAT (3) times (the report keeps the median),
#                 over HTTP/1.1 and h2c (prior knowledge) to Mustang and Cowboy
#                 (h2c on its raised-limit port). Elli is left out: it closes
#                 the connection on a 64 MiB body. Each answer must be the byte
#                 count sent.
#
#   scale_w7      W7 (paced GET /sleep, one request per connection per second)
#                 at BENCH_W7_SCALE connections (1000 5000 10000), one run of
#                 BENCH_W7_SCALE_SECONDS (15) measured seconds per point and
#                 server (Mustang, Cowboy, Elli), the server order rotated per
#                 point; sourced by run.sh after the rounds when W7 is selected.
#
# Raw outputs: $RES/scaling/conns-<n>-<server>.txt, body-<bytes>-<server>-<h1|h2c>.r<k>.txt,
# w7-<n>-<server>.txt.

SCALE_CONNS=${BENCH_SCALE_CONNS:-1 10 100 1000 10000}
SCALE_DUR=${BENCH_SCALE_DURATION:-5s}
SCALE_SIZES=${BENCH_SCALE_SIZES:-1K 16K 256K 4M 64M 1G}
SCALE_REPEAT=${BENCH_SCALE_REPEAT:-3}

scale_conns() {
  local c s t port k=0 out
  CUR_WL="the connection curve"
  mkdir -p "$RES/scaling"
  for c in $SCALE_CONNS; do
    t=2
    ((c == 1)) && t=1
    # shellcheck disable=SC2046
    for s in $(rotate "$k" $(servers_for W1a | sed 's/mustang-rp//')); do
      server_alive "$s" || continue
      port=$(port_for "$s" W1a)
      out="$RES/scaling/conns-$c-$s.txt"
      say "scaling: $s, wrk -t$t -c$c -d$SCALE_DUR"
      run_tool "$out" $(($(dur_s "$SCALE_DUR") + 90)) \
        wrk "-t$t" "-c$c" "-d$SCALE_DUR" --timeout 10s --latency "http://$HOST:$port/"
      grep -E '^Requests/sec|^ +99%|Socket errors' "$out" | sed 's/^ */    /' || true
      # let the closed connections of a big point drain before the next one
      if ((c >= 1000)); then sleep 3; else sleep "$GAP"; fi
    done
    k=$((k + 1))
  done
}

scale_bodies() {
  local size bytes file s proto i version args out port rc k=0
  CUR_WL="the body-size curve"
  mkdir -p "$RES/scaling"
  for size in $SCALE_SIZES; do
    bytes=$(numfmt --from=iec "$size")
    file="$WORK/body-$bytes.bin"
    [[ $bytes == 1073741824 ]] && file="$WORK/1gb.bin"
    make_file "$file" "$bytes"
    say "scaling: uploads of $size ($bytes bytes), $SCALE_REPEAT each"
    for i in $(seq 1 "$SCALE_REPEAT"); do
      # shellcheck disable=SC2046
      for s in $(rotate "$k" $(servers_for W5b)); do
        for proto in h1 h2c; do
          server_alive "$s" || continue
          if [[ $proto == h1 ]]; then
            version=1.1
            port=$(port_for "$s" W5a)
            args=(-H 'Expect:' -X POST -T "$file" "http://$HOST:$port/read_body")
          else
            version=2
            port=$(port_for "$s" W5b)
            args=(--http2-prior-knowledge -X POST -T "$file" "http://$HOST:$port/read_body")
          fi
          out="$RES/scaling/body-$bytes-$s-$proto.r$i.txt"
          rc=0
          upload_run "$out" 600 "$bytes" "$version" "${args[@]}" || rc=$?
          if ((rc != 0)) || ! grep -qx "response: $bytes" "$out" || ! grep -qx 'http_code: 200' "$out"; then
            FAILED_RUNS=$((FAILED_RUNS + 1))
            say "  $s $proto $size: failed or wrong answer, see $out"
          fi
        done
      done
      k=$((k + 1))
    done
    sleep "$GAP"
  done
}

scale_w7() {
  local c s k=0
  CUR_WL="the W7 connection curve"
  mkdir -p "$RES/scaling"
  for c in $W7_SCALE; do
    # shellcheck disable=SC2046
    for s in $(rotate "$k" $(servers_for W7)); do
      server_alive "$s" || continue
      w7_run "$RES/scaling/w7-$c-$s.txt" "$s" "$(port_for "$s" W7)" "$c" "$W7_SCALE_SECONDS"
    done
    k=$((k + 1))
  done
}
