#!/bin/sh
# Builds Mustang's optional QUIC NIF (native/mustang_quic, Rust) into
# priv/mustang_quic.so, for HTTP/3 (mustang:start_quic/3). rebar3 runs this
# before compiling (rebar.config pre_hooks), for Mustang itself and for an
# application that depends on it.
#
# Never fails the build: without cargo, or when the Rust build fails, it says
# so on one line and HTTP/3 stays off (mustang:start_quic/3 then returns
# {error, {http3_not_built, Why}}); HTTP/1.1, HTTP/2 and Websocket are
# unaffected. A build that is up to date takes a fraction of a second.
#
# Env: MUSTANG_QUIC=0 skips the build (and a stale priv/mustang_quic.so is
# removed); CARGO names the cargo binary (default: cargo on PATH; rustup puts
# it in ~/.cargo/bin).
#
# Crates come from crates.io at the versions of native/mustang_quic/Cargo.lock
# (cargo fetch --locked, then an offline build).
cd "$(dirname "$0")/.." || exit 0
CRATE=native/mustang_quic
SO=priv/mustang_quic.so

if [ "${MUSTANG_QUIC:-1}" = 0 ]; then
	rm -f "$SO"
	exit 0
fi
CARGO=${CARGO:-$(command -v cargo 2>/dev/null)}
if [ -z "$CARGO" ] || [ ! -f "$CRATE/Cargo.toml" ]; then
	[ -f "$SO" ] || echo "mustang: no cargo on PATH: HTTP/3 (QUIC NIF) not built; HTTP/1.1, HTTP/2 and Websocket are" >&2
	exit 0
fi
LOG=$CRATE/target/build.log
mkdir -p "$CRATE/target" priv
if ! { "$CARGO" fetch --locked --manifest-path "$CRATE/Cargo.toml" &&
	"$CARGO" build --release --locked --offline --manifest-path "$CRATE/Cargo.toml"; } >"$LOG" 2>&1; then
	echo "mustang: the QUIC NIF did not build (see $LOG): HTTP/3 is off" >&2
	tail -n 20 "$LOG" >&2
	exit 0
fi
BUILT=$CRATE/target/release/libmustang_quic.so
if [ ! -f "$SO" ] || ! cmp -s "$BUILT" "$SO"; then
	# A new file rather than an overwrite: a VM that has the old one loaded
	# keeps its mapping.
	cp "$BUILT" "$SO.tmp" && mv -f "$SO.tmp" "$SO"
fi
exit 0
