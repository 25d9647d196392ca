# Mustang build / test / bench entry points. rebar3 is Debian's /usr/bin/rebar3.
#
#   make            compile (rebar3 compile)
#   make run        build the app and the demo, run the demo in the foreground
#                   (PORT, TLS_PORT, MUSTANG_REQUEST_PROCESS, MUSTANG_MAX_KEEPALIVE)
#   make test       setup + compile (warnings are errors) + demo + xref + dialyzer
#                   + eunit + ct (what CI runs)
#   make bench      benchmark suite (bench/run.sh, see bench/README.md)
#   make soak       soak test (test/soak_SUITE.erl, doc/guide/performance.md):
#                   1,000,000 HTTP requests and 100,000 Websocket sessions
#                   (SOAK_REQUESTS, SOAK_WS_SESSIONS), then processes, ports
#                   and memory back within 5%; 20,000 idle connections held
#                   with their memory measured (SOAK_IDLE_CONNS; the file
#                   descriptor limit is raised to SOAK_NOFILE, 65536, when the
#                   shell may: root, or a hard limit that high); `make test'
#                   runs a short version
#   make example NAME=hello_world
#                   build and run one example of examples/ in the foreground
#                   (PORT, TLS_PORT; examples/README.md)
#   make fuzz       fuzz a live server (test/fuzz_SUITE): FUZZ_SECONDS (300) for each
#                   of its four targets, HTTP/1.1, HTTP/2 frames, HPACK, Websocket;
#                   make test runs the same suite for 7 s each
#                   (doc/internals/fuzzing.md)
#   make docs       reference manual: doc/reference/<module>.md and index.md from
#                   the -specs and comments of src/ (scripts/gen_docs.escript)
#   make setup      install every tool of the sets below (scripts/setup.sh all)
#                   Each target installs only its own set when something is
#                   missing: make run and make example the run set (Erlang/OTP,
#                   rebar3), make test, soak and fuzz the test set (test
#                   clients, _tools/venv, h2spec, Node ws), make bench the bench
#                   set (scripts/setup.sh --list SET shows a set)
#   make rest-diagrams
#                   render the REST flowcharts doc/guide/rest/*.dot to SVG (Graphviz dot)
#   make demo | xref | dialyzer | eunit | ct | clean

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
REBAR ?= rebar3
ERLC ?= erlc
APP_EBIN := _build/default/lib/mustang/ebin
DEMO_EBIN := _build/demo/ebin
DEMO_SRC = $(wildcard examples/demo/src/*.erl)

# Black-box tests (CT suites) find their Python clients (httpx, h2) through this.
export MUSTANG_PYTHON := $(CURDIR)/_tools/venv/bin/python

# Compile the demo (examples/demo/src/*.erl) against the compiled app.
define build_demo
	@test -n "$(DEMO_SRC)" || { echo "make: no examples/demo/src/*.erl to build" >&2; exit 1; }
	@mkdir -p $(DEMO_EBIN)
	$(ERLC) +debug_info -I include -pa $(APP_EBIN) -o $(DEMO_EBIN) $(DEMO_SRC)
endef

.PHONY: all setup setup-run setup-test setup-docs compile demo run example test xref dialyzer eunit ct bench soak fuzz clean rest-diagrams docs

all: compile

setup:
	scripts/setup.sh all

setup-run:
	scripts/setup.sh run

setup-test:
	scripts/setup.sh test

setup-docs:
	scripts/setup.sh docs

compile:
	$(REBAR) compile

demo: compile
	$(build_demo)

run: setup-run demo
	scripts/run_demo.sh

example: setup-run compile
	scripts/run_example.sh $(NAME)

docs:
	escript scripts/gen_docs.escript src doc/reference

# Each step fails the make when it fails; cheapest checks first. The strict
# profile adds warnings_as_errors (rebar.config: not in the default profile,
# which an application depending on Mustang compiles).
test: setup-test
	$(REBAR) as strict compile
	$(REBAR) compile
	$(build_demo)
	$(REBAR) xref
	$(REBAR) dialyzer
	$(REBAR) eunit
	$(REBAR) ct

xref:
	$(REBAR) xref

dialyzer:
	$(REBAR) dialyzer

eunit:
	$(REBAR) eunit

ct:
	$(REBAR) ct

bench:
	QUICK=$(QUICK) bench/run.sh

SOAK_REQUESTS ?= 1000000
SOAK_WS_SESSIONS ?= 100000
SOAK_IDLE_CONNS ?= 20000
SOAK_NOFILE ?= 65536

# One summary line per test on the console; the figures of each client run
# and the memory breakdown are in the CT logs (_build/test/logs/).
# idle_connections holds fewer connections, and says so, when `ulimit -n' is
# below SOAK_IDLE_CONNS + 1000.
soak: setup-test
	ulimit -n $(SOAK_NOFILE) 2>/dev/null || echo "make soak: ulimit -n $(SOAK_NOFILE) refused; the limit stays $$(ulimit -n)" >&2; \
	SOAK_REQUESTS=$(SOAK_REQUESTS) SOAK_WS_SESSIONS=$(SOAK_WS_SESSIONS) \
		SOAK_IDLE_CONNS=$(SOAK_IDLE_CONNS) $(REBAR) ct --suite=test/soak_SUITE

FUZZ_SECONDS ?= 300

fuzz: setup-test
	FUZZ_SECONDS=$(FUZZ_SECONDS) $(REBAR) ct --suite=test/fuzz_SUITE

# Keeps _tools/ (installed tools), _bench/results-*/ and the global dialyzer
# PLT in ~/.cache/rebar3.
clean:
	-$(REBAR) clean -a
	rm -rf $(DEMO_EBIN) _bench/nginx

# The REST flowcharts of doc/guide/rest.md: one SVG per .dot, committed.
REST_DOTS := $(wildcard doc/guide/rest/*.dot)
rest-diagrams: setup-docs $(REST_DOTS:.dot=.svg)

doc/guide/rest/%.svg: doc/guide/rest/%.dot
	dot -Tsvg $< -o $@
