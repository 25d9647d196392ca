package main

// Paced HTTP/1.1 latency (-mode paced, BENCH.md W7): -conns keep-alive
// connections, each sending GET <path> -rate times a second, its send times
// staggered so that the whole client offers a steady conns x rate req/s.
//
//	wsload -mode paced -url http://127.0.0.1:18081/sleep -conns 10000 -duration 30s -warmup 5s
//
// Connections are opened first, at most -connect-rate a second (a listen
// backlog is finite: a burst of 10,000 SYNs measures the backlog, not the
// server). Connection i of N then sends at t0 + i/N/rate + k/rate (k = 0,
// 1, ...). Latency counts from that scheduled time, not from the write
// (coordinated omission): a request whose slot passed while the previous
// answer was late goes out at once, and its wait counts against it; the
// schedule never moves. Only the slots scheduled in the measured window
// [t0 + warmup, t0 + warmup + duration) count; each ends as a completed
// request or as one error: connect (the connection was down and could not
// be opened again), reset (read or write error, or the server closed the
// connection before the answer), timeout (no whole answer -timeout after
// the send), status (not -expect-status) or length (body not
// -expect-length bytes). After an error the connection is closed and opened
// again at its next slot.
//
// HTTP/1.1 is written and parsed here on a bare net.Conn (status line,
// Content-Length or chunked body, Connection: close), so there is no
// connection pool between the schedule and the socket.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Error kinds of a slot, in the JSON output's order.
const (
	errConnect = iota
	errReset
	errTimeout
	errStatus
	errLength
	nErrKinds
)

var errKindNames = [nErrKinds]string{"connect", "reset", "timeout", "status", "length"}

// fineHist: latencies in microseconds, 1024 linear sub-buckets per power of
// two (< 0.1% error: 64 us wide around 100 ms, where W7's target is
// 101.5 ms), shared by every connection.
const (
	fineBits = 10
	fineN    = (1 << fineBits) * 32
)

type fineHist [fineN]atomic.Uint64

func (a *fineHist) add(ns int64) { a[logIdx(ns/1000, fineBits, fineN)].Add(1) }

// pct: the p-quantile in ns.
func (a *fineHist) pct(p float64) float64 {
	counts := make([]uint64, fineN)
	for i := range a {
		counts[i] = a[i].Load()
	}
	return 1000 * pctOf(counts, p, func(i int) float64 { return logVal(i, fineBits) })
}

type pacedRun struct {
	cfg         *config
	addr        string
	req         []byte
	start       time.Time
	period      int64    // ns between two requests of a connection
	t0          int64    // ns since start: the first slot
	from, until int64    // measured window of scheduled times
	lat         fineHist // scheduled time -> whole answer read
	lag         fineHist // the client's own delay: max(scheduled time, previous answer) -> write
	maxLat      atomic.Int64
	maxLag      atomic.Int64
	completed   atomic.Int64            // measured slots answered well
	errs        [nErrKinds]atomic.Int64 // measured slots
	closed      atomic.Int64            // answers with Connection: close (reopened, not errors)
	errMu       sync.Mutex
	errText     []string
}

func (r *pacedRun) now() int64 { return int64(time.Since(r.start)) }

func atomicMax(a *atomic.Int64, v int64) {
	for {
		old := a.Load()
		if v <= old || a.CompareAndSwap(old, v) {
			return
		}
	}
}

// slotError records the error of a slot (when measured) and keeps the first
// few messages.
func (r *pacedRun) slotError(kind int, sched int64, id int, err error) {
	if sched < r.from || sched >= r.until {
		return
	}
	r.errs[kind].Add(1)
	r.errMu.Lock()
	if len(r.errText) < 5 {
		r.errText = append(r.errText, fmt.Sprintf("conn %d: %s: %v", id, errKindNames[kind], err))
	}
	r.errMu.Unlock()
}

func runPaced(cfg *config) (map[string]any, error) {
	rate, connectRate := cfg.rate, cfg.connectRate
	u, err := url.Parse(cfg.url)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return nil, fmt.Errorf("-url: want http://host:port/path for -mode paced, got %q", cfg.url)
	}
	if cfg.conns < 1 || rate <= 0 || connectRate <= 0 || cfg.duration <= 0 || cfg.warmup < 0 {
		return nil, fmt.Errorf("-conns, -rate, -connect-rate and -duration must be > 0, -warmup >= 0")
	}
	addr := u.Host
	if u.Port() == "" {
		addr += ":80"
	}
	r := &pacedRun{cfg: cfg, addr: addr, start: time.Now(), period: int64(float64(time.Second) / rate),
		req: []byte("GET " + u.RequestURI() + " HTTP/1.1\r\nHost: " + u.Host + "\r\n\r\n")}

	// Open the connections, connectRate a second, all dials in parallel.
	conns := make([]net.Conn, cfg.conns)
	var failed atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	for i := range conns {
		if d := time.Duration(float64(i)/connectRate*1e9) - time.Since(r.start); d > 0 {
			time.Sleep(d)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.DialTimeout("tcp", addr, cfg.timeout)
			if err != nil {
				failed.Add(1)
				firstErr.CompareAndSwap(nil, err.Error())
				return
			}
			conns[i] = c
		}()
	}
	wg.Wait()
	connectSecs := time.Since(r.start).Seconds()
	if failed.Load() == int64(cfg.conns) {
		return nil, fmt.Errorf("no connection could be opened to %s: %v", addr, firstErr.Load())
	}

	r.t0 = r.now() + int64(100*time.Millisecond)
	r.from = r.t0 + int64(cfg.warmup)
	r.until = r.from + int64(cfg.duration)
	var rusage0 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &rusage0)
	// One pacer hands each connection its slots, in time order; the
	// connection sends as soon as it has both the slot and no answer
	// outstanding (a slot that came while it waited is sent late, and its
	// latency still counts from the slot).
	wakes := make([]chan int64, cfg.conns)
	for i, c := range conns {
		wakes[i] = make(chan int64, 64)
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.connLoop(i, c, wakes[i])
		}()
	}
	go r.pace(wakes)
	wg.Wait()
	end := r.now()
	var rusage1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &rusage1)
	cpu := float64(rusage1.Utime.Nano()+rusage1.Stime.Nano()-rusage0.Utime.Nano()-rusage0.Stime.Nano()) / 1e9

	secs := float64(r.until-r.from) / 1e9
	lat, lag := &r.lat, &r.lag
	ms := func(ns float64) float64 { return round(ns/1e6, 3) }
	res := map[string]any{
		"tool": "wsload", "mode": "paced", "url": cfg.url, "conns": cfg.conns, "rate": rate,
		"connect_rate": connectRate, "connected": int64(cfg.conns) - failed.Load(),
		"connect_failed": failed.Load(), "connect_s": round(connectSecs, 3),
		"warmup_s": cfg.warmup.Seconds(), "seconds": round(secs, 3),
		"scheduled": int64(float64(cfg.conns) * secs * rate), "requests": r.completed.Load(),
		"req_s":  round(float64(r.completed.Load())/secs, 1),
		"p50_ms": ms(lat.pct(0.50)), "p90_ms": ms(lat.pct(0.90)), "p99_ms": ms(lat.pct(0.99)), "p999_ms": ms(lat.pct(0.999)),
		"max_ms": ms(float64(r.maxLat.Load())), "lag_p99_ms": ms(lag.pct(0.99)),
		"lag_max_ms": ms(float64(r.maxLag.Load())), "closed_by_server": r.closed.Load(),
		"client_cpu_s": round(cpu, 2), "run_s": round(float64(end-r.t0)/1e9, 3),
	}
	var nerr int64
	for k, name := range errKindNames {
		n := r.errs[k].Load()
		res["errors_"+name] = n
		nerr += n
	}
	res["errors"] = nerr
	if f := failed.Load(); f > 0 {
		r.errText = append([]string{fmt.Sprintf("%d initial connect(s) failed: %v", f, firstErr.Load())}, r.errText...)
	}
	if len(r.errText) > 0 {
		res["error"] = strings.Join(r.errText, "; ")
	}
	if cfg.verbose {
		fmt.Fprintf(os.Stderr, "paced %s x%d conns at %g/s: %.0f req/s, p50 %.2f ms, p99 %.2f ms, p99.9 %.2f ms, max %.2f ms, %d errors, client CPU %.1f s\n",
			cfg.url, cfg.conns, rate, float64(r.completed.Load())/secs, lat.pct(0.5)/1e6, lat.pct(0.99)/1e6,
			lat.pct(0.999)/1e6, float64(r.maxLat.Load())/1e6, nerr, cpu)
	}
	return res, nil
}

// pace sends each connection its slots: connection i of N at
// t0 + i*period/N + k*period, until the end of the measured window. It
// sleeps with nanosleep on its own thread: the runtime's timers wake up to
// a millisecond late, which would count as latency.
func (r *pacedRun) pace(wakes []chan int64) {
	runtime.LockOSThread()
	n := int64(len(wakes))
	for j := int64(0); ; j++ {
		i := j % n
		sched := r.t0 + j/n*r.period + i*r.period/n
		if sched >= r.until {
			break
		}
		for {
			d := sched - r.now()
			if d <= 0 {
				break
			}
			ts := syscall.NsecToTimespec(d)
			syscall.Nanosleep(&ts, nil)
		}
		select {
		case wakes[i] <- sched:
		default: // 64 slots behind: the connection is stuck
			r.slotError(errTimeout, sched, int(i), fmt.Errorf("64 slots behind"))
		}
	}
	for _, w := range wakes {
		close(w)
	}
}

// connLoop runs one connection's slots until the pacer is done. c is nil
// when its first dial failed.
func (r *pacedRun) connLoop(id int, c net.Conn, wake <-chan int64) {
	var br *bufio.Reader
	closeConn := func() {
		if c != nil {
			c.Close()
			c = nil
		}
	}
	defer closeConn()
	var prev int64 // when the previous answer came
	for sched := range wake {
		if c == nil {
			var err error
			if c, err = net.DialTimeout("tcp", r.addr, r.cfg.timeout); err != nil {
				c = nil
				r.slotError(errConnect, sched, id, err)
				continue
			}
			br = nil
		}
		if br == nil {
			br = bufio.NewReaderSize(c, 4096)
		}
		sent := r.now()
		lag := sent - max(sched, prev)
		deadline := r.start.Add(time.Duration(sent) + r.cfg.timeout)
		c.SetDeadline(deadline)
		if _, err := c.Write(r.req); err != nil {
			r.slotError(errReset, sched, id, err)
			closeConn()
			continue
		}
		status, n, keep, err := readResponse(br)
		done := r.now()
		prev = done
		if err != nil {
			kind := errReset
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				kind = errTimeout
			} else if errors.Is(err, errMalformed) {
				kind = errStatus
			}
			r.slotError(kind, sched, id, err)
			closeConn()
			continue
		}
		if !keep {
			r.closed.Add(1)
			closeConn()
		}
		switch {
		case status != r.cfg.expectStatus:
			r.slotError(errStatus, sched, id, fmt.Errorf("status %d, not %d", status, r.cfg.expectStatus))
		case r.cfg.expectLength >= 0 && n != int64(r.cfg.expectLength):
			r.slotError(errLength, sched, id, fmt.Errorf("body of %d bytes, not %d", n, r.cfg.expectLength))
		case sched >= r.from && sched < r.until:
			r.completed.Add(1)
			r.lat.add(done - sched)
			r.lag.add(lag)
			atomicMax(&r.maxLat, done-sched)
			atomicMax(&r.maxLag, lag)
		}
	}
}

var errMalformed = errors.New("malformed response")

// readResponse reads one whole HTTP/1.1 response: its status, body length
// (the body is read and dropped) and whether the connection stays open.
func readResponse(br *bufio.Reader) (status int, n int64, keep bool, err error) {
	line, err := readLine(br)
	if err != nil {
		return 0, 0, false, err
	}
	// HTTP/1.1 200 OK
	if len(line) < 12 || !strings.HasPrefix(line, "HTTP/1.") || line[8] != ' ' {
		return 0, 0, false, fmt.Errorf("%w: status line %q", errMalformed, line)
	}
	if status, err = strconv.Atoi(line[9:12]); err != nil {
		return 0, 0, false, fmt.Errorf("%w: status line %q", errMalformed, line)
	}
	keep = line[7] == '1' // HTTP/1.0 closes unless told otherwise
	length, chunked := int64(-1), false
	for {
		h, err := readLine(br)
		if err != nil {
			return 0, 0, false, err
		}
		if h == "" {
			break
		}
		name, value, ok := strings.Cut(h, ":")
		if !ok {
			return 0, 0, false, fmt.Errorf("%w: header line %q", errMalformed, h)
		}
		value = strings.TrimSpace(value)
		switch strings.ToLower(name) {
		case "content-length":
			if length, err = strconv.ParseInt(value, 10, 64); err != nil || length < 0 {
				return 0, 0, false, fmt.Errorf("%w: content-length %q", errMalformed, value)
			}
		case "transfer-encoding":
			chunked = strings.EqualFold(value, "chunked")
		case "connection":
			for _, t := range strings.Split(value, ",") {
				switch strings.ToLower(strings.TrimSpace(t)) {
				case "close":
					keep = false
				case "keep-alive":
					keep = true
				}
			}
		}
	}
	switch {
	case chunked:
		n, err = readChunked(br)
	case length >= 0:
		n, err = io.CopyN(io.Discard, br, length)
	default: // no length: the body runs to the end of the connection
		n, err = io.Copy(io.Discard, br)
		keep = false
	}
	return status, n, keep, err
}

func readLine(br *bufio.Reader) (string, error) {
	line, err := br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		return "", fmt.Errorf("%w: line longer than %d bytes", errMalformed, br.Size())
	}
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return "", err
	}
	return strings.TrimRight(string(line), "\r\n"), nil
}

func readChunked(br *bufio.Reader) (int64, error) {
	var n int64
	for {
		line, err := readLine(br)
		if err != nil {
			return n, err
		}
		size, _, _ := strings.Cut(line, ";")
		k, err := strconv.ParseInt(strings.TrimSpace(size), 16, 64)
		if err != nil || k < 0 {
			return n, fmt.Errorf("%w: chunk size %q", errMalformed, line)
		}
		if k == 0 {
			for { // trailers, then the empty line
				if line, err = readLine(br); err != nil || line == "" {
					return n, err
				}
			}
		}
		if _, err := io.CopyN(io.Discard, br, k); err != nil {
			return n, err
		}
		n += k
		if line, err = readLine(br); err != nil || line != "" {
			return n, fmt.Errorf("%w: no CRLF after a chunk", errMalformed)
		}
	}
}
