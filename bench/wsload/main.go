// wsload: a Websocket load client for Mustang's benchmarks (bench/README.md).
//
//	wsload -url ws://127.0.0.1:18081/ws -proto h1 -mode echo -kind binary -size 1024 -conns 1 -duration 5s
//
// Each connection is one TCP connection: HTTP/1.1 with the RFC 6455
// handshake, or h2c (prior knowledge) with one RFC 8441 extended CONNECT
// stream. Framing, masking and permessage-deflate are done here (no
// Websocket library), so that the client costs the same for every server.
//
// Modes: "echo" sends one message and waits for its echo before the next
// (window 1); "send" keeps -window messages in flight (pipelined: the writer
// sends whenever fewer than -window echoes are outstanding, coalescing
// what it may send into one write); "batch" sends -window messages, waits
// for the echo of the last, and repeats. Every echo is compared byte for
// byte with what was sent (and its opcode); a mismatch is an error.
//
// Session mode (-sessions N, sessions.go, for test/soak_SUITE.erl) opens
// N sessions instead, -conns at a time, each on its own connection: echo
// -messages messages, close handshake, and the JSON line counts the
// sessions completed and the errors.
//
// Paced mode (-mode paced -url http://..., paced.go, BENCH.md W7) is an
// HTTP/1.1 client instead: -conns keep-alive connections, each sending one
// GET every 1/-rate seconds, latency counted from the scheduled send time.
//
// Output: one JSON line on stdout (frames/s, MB/s = payload bytes echoed
// per second in 10^6 bytes, p50/p99 latency from a message's write to its
// echo, errors). Exit status 1 when errors > 0.
package main

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/bits"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

type config struct {
	url, proto, mode, kind string
	size, conns, window    int
	duration, warmup       time.Duration
	frames                 int64
	sessions               int64
	messages               int
	deflate, clientNoCtx   bool
	level                  int
	variants               int
	timeout                time.Duration
	verbose                bool
	rate, connectRate      float64 // -mode paced
	expectStatus           int
	expectLength           int
}

type transport interface {
	write(bufs [][]byte) error
	tryWrite(b []byte) bool
	readLoop(p *parser) error
	close()
}

type sent struct {
	idx int
	at  int64 // ns since start
}

// Latency histogram: 64 linear sub-buckets per power of two (< 1.6% error).
const histN = 64 + 64*40

type hist [histN]uint64

func histIdx(v int64) int { return logIdx(v, 6, histN) }

func histVal(i int) float64 { return logVal(i, 6) }

func (h *hist) pct(p float64) float64 { return pctOf(h[:], p, histVal) }

// logIdx: the bucket of v in a log-linear histogram of n buckets with
// 2^subBits linear sub-buckets per power of two (values below 2^subBits
// exact).
func logIdx(v int64, subBits int, n int) int {
	sub := int64(1) << subBits
	if v < sub {
		if v < 0 {
			return 0
		}
		return int(v)
	}
	shift := bits.Len64(uint64(v)) - subBits - 1
	i := int(sub) + shift*int(sub) + int(uint64(v)>>shift) - int(sub)
	if i >= n {
		return n - 1
	}
	return i
}

// logVal: the middle of bucket i of logIdx.
func logVal(i int, subBits int) float64 {
	sub := 1 << subBits
	if i < sub {
		return float64(i)
	}
	shift := (i - sub) / sub
	mant := (i-sub)%sub + sub
	return (float64(mant) + 0.5) * float64(uint64(1)<<shift)
}

// pctOf: the p-quantile (0..1) of a histogram's counts.
func pctOf(counts []uint64, p float64, val func(int) float64) float64 {
	var total uint64
	for _, c := range counts {
		total += c
	}
	if total == 0 {
		return 0
	}
	want := uint64(p*float64(total) + 0.999999)
	var acc uint64
	for i, c := range counts {
		acc += c
		if acc >= want {
			return val(i)
		}
	}
	return 0
}

type conn struct {
	id       int
	cfg      *config
	t        transport
	p        *parser
	payloads [][]byte
	opcode   byte
	frames   [][]byte // pre-masked (and pre-compressed) frames, or nil
	keys     [][4]byte
	defl     *deflater
	infl     *inflater

	r         *run
	inflight  chan sent
	drained   chan struct{} // a token when the last message in flight came back
	frames0   atomic.Int64  // echoes counted in the measurement window
	done      atomic.Int64  // echoes received in all
	h         hist
	lastEcho  atomic.Int64
	closing   atomic.Bool
	closeCode atomic.Int64 // of the server's close frame, after ours
	ext       string
}

type run struct {
	cfg          *config
	start        time.Time
	measureFrom  int64 // ns since start
	measureUntil int64
	stop         chan struct{} // end of the run (or an error)
	stopOnce     sync.Once
	failed       chan struct{} // an error
	failOnce     sync.Once
	errMu        sync.Mutex
	errs         []string
	nerr         atomic.Int64
}

func (r *run) now() int64 { return int64(time.Since(r.start)) }

func (r *run) fail(c *conn, err error) {
	r.nerr.Add(1)
	r.errMu.Lock()
	if len(r.errs) < 5 {
		r.errs = append(r.errs, fmt.Sprintf("conn %d: %v", c.id, err))
	}
	r.errMu.Unlock()
	r.failOnce.Do(func() { close(r.failed) })
	r.stopOnce.Do(func() { close(r.stop) })
}

func main() {
	cfg := &config{}
	flag.StringVar(&cfg.url, "url", "ws://127.0.0.1:18081/ws", "server URL (ws:// only)")
	flag.StringVar(&cfg.proto, "proto", "h1", "h1 (RFC 6455 upgrade) or h2 (h2c prior knowledge, RFC 8441)")
	flag.StringVar(&cfg.mode, "mode", "echo", "echo, send (window in flight), batch (send -window, wait for the last) or paced (HTTP/1.1 GETs at a fixed rate, paced.go)")
	flag.StringVar(&cfg.kind, "kind", "binary", "payload: binary, ascii, mixed, utf8 (mostly UTF-8)")
	flag.IntVar(&cfg.size, "size", 1024, "message payload size in bytes")
	flag.IntVar(&cfg.conns, "conns", 1, "connections")
	flag.IntVar(&cfg.window, "window", 0, "messages in flight per connection for send/batch (0: 1 MiB worth, 2..256)")
	flag.DurationVar(&cfg.duration, "duration", 5*time.Second, "measured duration (after -warmup)")
	flag.DurationVar(&cfg.warmup, "warmup", 0, "untimed warm-up before the measurement, same connections")
	flag.Int64Var(&cfg.frames, "frames", 0, "instead of -duration: messages to echo in all (split over connections)")
	flag.BoolVar(&cfg.deflate, "deflate", false, "offer permessage-deflate (context takeover both ways unless -client-no-context-takeover)")
	flag.BoolVar(&cfg.clientNoCtx, "client-no-context-takeover", false, "also offer client_no_context_takeover (then messages are compressed once, up front)")
	flag.IntVar(&cfg.level, "level", 1, "deflate level of the client's compressor (1 fastest .. 9)")
	flag.IntVar(&cfg.variants, "variants", 0, "distinct messages sent in rotation (0: 256 KiB worth, 4..256)")
	flag.DurationVar(&cfg.timeout, "timeout", 10*time.Second, "connect/handshake timeout, and the wait for the last echoes (-sessions: for each session)")
	flag.Int64Var(&cfg.sessions, "sessions", 0, "session mode: open, echo -messages messages and close this many sessions, -conns at a time (-mode, -duration, -frames unused)")
	flag.IntVar(&cfg.messages, "messages", 3, "-sessions: messages echoed per session")
	flag.BoolVar(&cfg.verbose, "v", false, "human-readable summary on stderr")
	flag.Float64Var(&cfg.rate, "rate", 1, "-mode paced: requests per second per connection")
	flag.Float64Var(&cfg.connectRate, "connect-rate", 2000, "-mode paced: connections opened per second at the start")
	flag.IntVar(&cfg.expectStatus, "expect-status", 200, "-mode paced: the status every answer must have")
	flag.IntVar(&cfg.expectLength, "expect-length", -1, "-mode paced: the body length every answer must have (-1: any)")
	flag.Parse()
	var res map[string]any
	var err error
	if cfg.mode == "paced" {
		res, err = runPaced(cfg)
	} else {
		res, err = execute(cfg)
	}
	if err != nil {
		res = map[string]any{"errors": 1, "error": err.Error()}
	}
	out, _ := json.Marshal(res)
	fmt.Println(string(out))
	// paced: a run that completed is a figure, its errors are part of it
	if n, _ := res["errors"].(int64); err != nil || (n > 0 && cfg.mode != "paced") {
		os.Exit(1)
	}
}

func execute(cfg *config) (map[string]any, error) {
	u, err := url.Parse(cfg.url)
	if err != nil || u.Scheme != "ws" || u.Host == "" {
		return nil, fmt.Errorf("-url: want ws://host:port/path, got %q", cfg.url)
	}
	path := u.RequestURI()
	addr := u.Host
	if u.Port() == "" {
		addr += ":80"
	}
	if cfg.proto != "h1" && cfg.proto != "h2" {
		return nil, fmt.Errorf("-proto: h1 or h2")
	}
	switch {
	case cfg.sessions > 0:
		cfg.mode = "sessions"
		if cfg.messages < 0 {
			return nil, fmt.Errorf("-messages: 0 or more")
		}
	case cfg.mode == "echo":
		cfg.window = 1
	case cfg.mode == "send", cfg.mode == "batch":
		if cfg.window <= 0 {
			cfg.window = min(256, max(2, (1<<20)/max(1, cfg.size)))
		}
	default:
		return nil, fmt.Errorf("-mode: echo, send or batch")
	}
	if cfg.size < 0 || cfg.size > 16<<20 || cfg.conns < 1 {
		return nil, fmt.Errorf("bad -size or -conns")
	}
	if cfg.variants <= 0 && cfg.sessions > 0 {
		cfg.variants = min(256, max(1, cfg.messages)) // built again for each session
	} else if cfg.variants <= 0 {
		cfg.variants = min(256, max(4, (256<<10)/max(1, cfg.size)))
	}
	payloads, opcode, err := makePayloads(cfg.kind, cfg.size, cfg.variants, 42)
	if err != nil {
		return nil, err
	}
	offer := ""
	if cfg.deflate {
		offer = "permessage-deflate"
		if cfg.clientNoCtx {
			offer += "; client_no_context_takeover"
		}
	}

	if cfg.sessions > 0 {
		return runSessions(cfg, addr, u.Host, path, offer, payloads, opcode)
	}
	r := &run{cfg: cfg, stop: make(chan struct{}), failed: make(chan struct{})}
	conns := make([]*conn, cfg.conns)
	var wg sync.WaitGroup
	var dialErr atomic.Value
	for i := range conns {
		c := &conn{id: i, cfg: cfg, payloads: payloads, opcode: opcode,
			p: newParser(256 << 10), inflight: make(chan sent, cfg.window),
			drained: make(chan struct{}, 1), r: r}
		conns[i] = c
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := c.dial(addr, u.Host, path, offer)
			if err == nil {
				err = c.setup()
			}
			if err != nil {
				dialErr.Store(fmt.Errorf("conn %d: %v", i, err))
			}
		}()
	}
	wg.Wait()
	if e := dialErr.Load(); e != nil {
		for _, c := range conns {
			if c.t != nil {
				c.t.close()
			}
		}
		return nil, e.(error)
	}

	r.start = time.Now()
	r.measureFrom = int64(cfg.warmup)
	r.measureUntil = int64(cfg.warmup + cfg.duration)
	if cfg.frames > 0 {
		r.measureFrom, r.measureUntil = 0, 1<<62
	}
	perConn := int64(0)
	if cfg.frames > 0 {
		perConn = (cfg.frames + int64(cfg.conns) - 1) / int64(cfg.conns)
	}
	var readers sync.WaitGroup
	for _, c := range conns {
		readers.Add(1)
		go func() {
			defer readers.Done()
			err := c.t.readLoop(c.p)
			if !c.closing.Load() {
				r.fail(c, err) // after the close frame, any end is fine
			}
		}()
	}
	var writers sync.WaitGroup
	for _, c := range conns {
		writers.Add(1)
		go func() {
			defer writers.Done()
			if err := c.writeLoop(r, perConn); err != nil {
				r.fail(c, err)
			}
		}()
	}
	if cfg.frames == 0 {
		select {
		case <-time.After(time.Duration(r.measureUntil)):
		case <-r.stop:
		}
		r.stopOnce.Do(func() { close(r.stop) })
	}
	writers.Wait()
	end := r.now()
	// Close: each writer has drained its echoes; send a close frame and
	// give the server a moment to answer it.
	for _, c := range conns {
		c.closing.Store(true)
		var key [4]byte
		rand.Read(key[:])
		c.t.write([][]byte{appendFrame(nil, false, opClose, []byte{0x03, 0xe8}, key)})
	}
	doneCh := make(chan struct{})
	go func() { readers.Wait(); close(doneCh) }()
	select {
	case <-doneCh:
	case <-time.After(time.Second):
	}
	for _, c := range conns {
		c.t.close()
	}

	var total, all int64
	var h hist
	var last int64
	for _, c := range conns {
		total += c.frames0.Load()
		all += c.done.Load()
		for i, v := range c.h {
			h[i] += v
		}
		last = max(last, c.lastEcho.Load())
	}
	var secs float64
	if cfg.frames > 0 {
		secs = float64(last) / 1e9
	} else {
		secs = float64(min(end, r.measureUntil)-r.measureFrom) / 1e9
	}
	if secs <= 0 {
		secs = 1e-9
	}
	fps := float64(total) / secs
	ext := conns[0].ext
	nerr := r.nerr.Load()
	res := map[string]any{
		"tool": "wsload", "url": cfg.url, "proto": cfg.proto, "mode": cfg.mode, "kind": cfg.kind,
		"size": cfg.size, "conns": cfg.conns, "window": cfg.window, "deflate": cfg.deflate,
		"extensions": ext, "seconds": round(secs, 3), "frames": total, "frames_all": all,
		"frames_s": round(fps, 1), "mb_s": round(fps*float64(cfg.size)/1e6, 2),
		"p50_us": round(h.pct(0.50)/1e3, 1), "p99_us": round(h.pct(0.99)/1e3, 1),
		"errors": nerr,
	}
	if nerr > 0 {
		res["error"] = strings.Join(r.errs, "; ")
	}
	if cfg.verbose {
		fmt.Fprintf(os.Stderr, "%s %s %s %s %dB x%d conns, window %d, deflate %v (%s): %.0f frames/s, %.1f MB/s, p50 %.1f us, p99 %.1f us, %d errors\n",
			cfg.proto, cfg.mode, cfg.kind, u.Path, cfg.size, cfg.conns, cfg.window, cfg.deflate, ext,
			fps, fps*float64(cfg.size)/1e6, h.pct(0.5)/1e3, h.pct(0.99)/1e3, nerr)
	}
	return res, nil
}

func round(v float64, d int) float64 {
	p := 1.0
	for i := 0; i < d; i++ {
		p *= 10
	}
	return float64(int64(v*p+0.5)) / p
}

// dial connects and does the handshake of the -proto; c.t is set when it
// succeeded.
func (c *conn) dial(addr, host, path, offer string) error {
	var err error
	if c.cfg.proto == "h1" {
		var t *h1Transport
		t, c.ext, err = dialH1(addr, host, path, offer, c.p, c.cfg.timeout)
		if err == nil {
			c.t = t
		}
	} else {
		var t *h2Transport
		t, c.ext, err = dialH2(addr, host, path, offer, c.cfg.timeout)
		if err == nil {
			c.t = t
		}
	}
	return err
}

// setup checks the negotiated extension and prepares the frames.
func (c *conn) setup() error {
	cfg := c.cfg
	p, ok, err := parseExtensions(c.ext)
	if err != nil {
		return err
	}
	if cfg.deflate && !ok {
		return fmt.Errorf("server did not accept permessage-deflate (answer %q)", c.ext)
	}
	if !cfg.deflate && ok {
		return fmt.Errorf("server accepted permessage-deflate, which was not offered")
	}
	c.keys = make([][4]byte, len(c.payloads))
	for i := range c.keys {
		rand.Read(c.keys[i][:])
	}
	if cfg.deflate {
		c.infl = newInflater(p.serverNoCtx)
		c.defl = newDeflater(cfg.level, p.clientNoCtx)
		if !p.clientNoCtx {
			// context takeover: each message is compressed when sent
			goto handlers
		}
	}
	c.frames = make([][]byte, len(c.payloads))
	for i, pl := range c.payloads {
		if c.defl != nil {
			c.frames[i] = appendFrame(nil, true, c.opcode, c.defl.compress(pl), c.keys[i])
		} else {
			c.frames[i] = appendFrame(nil, false, c.opcode, pl, c.keys[i])
		}
	}
handlers:
	c.p.onMessage = c.onMessage
	c.p.onControl = c.onControl
	return nil
}

func (c *conn) onControl(op byte, payload []byte) error {
	switch op {
	case opPing:
		var key [4]byte
		rand.Read(key[:])
		f := appendFrame(nil, false, opPong, payload, key)
		if !c.t.tryWrite(f) {
			go c.t.write([][]byte{f})
		}
	case opClose:
		code := 0
		if len(payload) >= 2 {
			code = int(payload[0])<<8 | int(payload[1])
		}
		if c.closing.Load() {
			c.closeCode.Store(int64(code))
			return errClosed
		}
		return fmt.Errorf("server closed the connection (code %d %q)", code, string(payload[min(2, len(payload)):]))
	}
	return nil
}

func (c *conn) onMessage(op byte, rsv1 bool, payload []byte) error {
	var s sent
	select {
	case s = <-c.inflight:
	default:
		return fmt.Errorf("message from the server with nothing in flight")
	}
	if rsv1 {
		if c.infl == nil {
			return fmt.Errorf("compressed message without permessage-deflate")
		}
		var err error
		if payload, err = c.infl.inflate(payload, c.cfg.size); err != nil {
			return err
		}
	}
	if op != c.opcode {
		return fmt.Errorf("echo opcode %d, sent %d", op, c.opcode)
	}
	want := c.payloads[s.idx]
	if !bytes.Equal(payload, want) {
		return fmt.Errorf("echo differs from the message sent (%d bytes, sent %d)", len(payload), len(want))
	}
	if len(c.inflight) == 0 {
		select {
		case c.drained <- struct{}{}:
		default:
		}
	}
	c.done.Add(1)
	r := c.r
	now := r.now()
	if now >= r.measureFrom && now < r.measureUntil {
		c.frames0.Add(1)
		c.h[histIdx(now-s.at)]++
	}
	c.lastEcho.Store(now)
	return nil
}

// writeLoop sends messages until stop (or perConn messages), then waits
// for the outstanding echoes. echo/send: a message goes out whenever fewer
// than window are in flight (what may go out at once is coalesced into one
// write); batch: window messages, then wait for the last echo.
func (c *conn) writeLoop(r *run, perConn int64) error {
	cfg := c.cfg
	idx := 0
	var sentN int64
	bufs := make([][]byte, 0, cfg.window)
	arena := make([]byte, 0, 64<<10)
	const maxWriteBytes = 256 << 10
	more := func() bool { return perConn == 0 || sentN < perConn }
	stopped := func() bool {
		select {
		case <-r.stop:
			return true
		default:
			return false
		}
	}
	add := func() {
		var f []byte
		if c.frames != nil {
			f = c.frames[idx]
		} else {
			start := len(arena)
			arena = appendFrame(arena, true, c.opcode, c.defl.compress(c.payloads[idx]), c.keys[idx])
			f = arena[start:len(arena):len(arena)]
		}
		bufs = append(bufs, f)
		idx = (idx + 1) % len(c.payloads)
		sentN++
	}
	write := func() error {
		err := c.t.write(bufs)
		bufs, arena = bufs[:0], arena[:0]
		if err != nil && stopped() {
			return errStopped
		}
		return err
	}
	for more() && !stopped() {
		if cfg.mode == "batch" {
			for k := 0; k < cfg.window && more(); {
				n := 0
				for k < cfg.window && more() && n < maxWriteBytes {
					c.inflight <- sent{idx: idx, at: r.now()} // room: drained
					add()
					n += len(bufs[len(bufs)-1])
					k++
				}
				if err := write(); err != nil {
					return ignoreStop(err)
				}
			}
			if !c.waitDrained(r, false) {
				break
			}
			continue
		}
		select {
		case c.inflight <- sent{idx: idx, at: r.now()}:
		case <-r.stop:
			continue
		}
		add()
		n := len(bufs[0])
	coalesce:
		for len(bufs) < cfg.window && n < maxWriteBytes && more() {
			select {
			case c.inflight <- sent{idx: idx, at: r.now()}:
				add()
				n += len(bufs[len(bufs)-1])
			default:
				break coalesce
			}
		}
		if err := write(); err != nil {
			return ignoreStop(err)
		}
	}
	if !c.waitDrained(r, true) {
		if r.nerr.Load() > 0 {
			return nil // another error stopped the run
		}
		return fmt.Errorf("%d echoes still missing %v after the end", len(c.inflight), cfg.timeout)
	}
	return nil
}

var errStopped = errors.New("stopped")

func ignoreStop(err error) error {
	if err == errStopped {
		return nil
	}
	return err
}

// waitDrained waits until no message is in flight: at the end (final) up
// to the timeout, otherwise until stop.
func (c *conn) waitDrained(r *run, final bool) bool {
	var timeout <-chan time.Time
	stop := r.stop
	if final {
		timeout = time.After(c.cfg.timeout)
		stop = nil
	}
	for len(c.inflight) > 0 {
		select {
		case <-c.drained:
		case <-stop:
			return false
		case <-timeout:
			return false
		case <-r.failed:
			return false
		}
	}
	return true
}
