package main

// Session mode (-sessions N), for the soak test (test/soak_SUITE.erl):
// Websocket sessions opened and closed, many in parallel. -conns workers
// each take the next session until N have been started. A session is one
// TCP connection (h1: RFC 6455 upgrade; h2: h2c prior knowledge and one
// RFC 8441 extended CONNECT stream): connect, echo -messages messages (one
// in flight, each checked byte for byte), send a close frame (1000), wait
// for the server's close frame (code 1000) and, over h1, for the server to
// close the TCP connection (RFC 6455 7.1.1: the server closes first); then
// close the socket. A session counts as completed only when all of that
// happened within -timeout; anything else is an error, counted, and the
// run goes on, so that the counts say how many sessions failed.

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

type sessionRun struct {
	cfg       *config
	addr      string
	host      string
	path      string
	offer     string
	payloads  [][]byte
	opcode    byte
	r         *run
	next      atomic.Int64 // sessions started
	completed atomic.Int64
	frames    atomic.Int64
	errMu     sync.Mutex
	errs      []string
	nerr      atomic.Int64
}

func runSessions(cfg *config, addr, host, path, offer string, payloads [][]byte, opcode byte) (map[string]any, error) {
	s := &sessionRun{cfg: cfg, addr: addr, host: host, path: path, offer: offer,
		payloads: payloads, opcode: opcode,
		r: &run{cfg: cfg, stop: make(chan struct{}), failed: make(chan struct{}), measureUntil: 1 << 62}}
	s.r.start = time.Now()
	var wg sync.WaitGroup
	for w := 0; w < cfg.conns; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				id := s.next.Add(1)
				if id > cfg.sessions {
					return
				}
				if err := s.one(int(id)); err != nil {
					s.fail(int(id), err)
				} else {
					s.completed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	secs := max(time.Since(s.r.start).Seconds(), 1e-9)
	nerr := s.nerr.Load()
	res := map[string]any{
		"tool": "wsload", "url": cfg.url, "proto": cfg.proto, "mode": "sessions", "kind": cfg.kind,
		"size": cfg.size, "conns": cfg.conns, "deflate": cfg.deflate, "messages": cfg.messages,
		"sessions": cfg.sessions, "completed": s.completed.Load(), "frames": s.frames.Load(),
		"seconds": round(secs, 3), "sessions_s": round(float64(s.completed.Load())/secs, 1),
		"errors": nerr,
	}
	if nerr > 0 {
		res["error"] = strings.Join(s.errs, "; ")
	}
	if cfg.verbose {
		fmt.Fprintf(os.Stderr, "%s sessions %s %dB x%d messages, %d workers, deflate %v: %d/%d completed in %.1f s (%.0f/s), %d errors\n",
			cfg.proto, cfg.kind, cfg.size, cfg.messages, cfg.conns, cfg.deflate,
			s.completed.Load(), cfg.sessions, secs, float64(s.completed.Load())/secs, nerr)
	}
	return res, nil
}

func (s *sessionRun) fail(id int, err error) {
	s.nerr.Add(1)
	s.errMu.Lock()
	if len(s.errs) < 5 {
		s.errs = append(s.errs, fmt.Sprintf("session %d: %v", id, err))
	}
	s.errMu.Unlock()
}

// one runs a session from connect to close.
func (s *sessionRun) one(id int) error {
	cfg := s.cfg
	c := &conn{id: id, cfg: cfg, payloads: s.payloads, opcode: s.opcode,
		p: newParser(4 << 10), inflight: make(chan sent, 1), drained: make(chan struct{}, 1), r: s.r}
	if err := c.dial(s.addr, s.host, s.path, s.offer); err != nil {
		return err
	}
	defer c.t.close()
	if err := c.setup(); err != nil {
		return err
	}
	readEnd := make(chan error, 1)
	go func() { readEnd <- c.t.readLoop(c.p) }()
	deadline := time.NewTimer(cfg.timeout)
	defer deadline.Stop()
	for i := 0; i < cfg.messages; i++ {
		idx := i % len(c.payloads)
		c.inflight <- sent{idx: idx, at: s.r.now()}
		var f []byte
		if c.frames != nil {
			f = c.frames[idx]
		} else {
			f = appendFrame(nil, true, c.opcode, c.defl.compress(c.payloads[idx]), c.keys[idx])
		}
		if err := c.t.write([][]byte{f}); err != nil {
			return fmt.Errorf("message %d: %v", i, err)
		}
		select {
		case <-c.drained:
			s.frames.Add(1)
		case err := <-readEnd:
			return fmt.Errorf("message %d: %v", i, err)
		case <-deadline.C:
			return fmt.Errorf("message %d: no echo within %v", i, cfg.timeout)
		}
	}
	c.closing.Store(true)
	var key [4]byte
	rand.Read(key[:])
	if err := c.t.write([][]byte{appendFrame(nil, false, opClose, []byte{0x03, 0xe8}, key)}); err != nil {
		return fmt.Errorf("close: %v", err)
	}
	select {
	case err := <-readEnd:
		if err != errClosed {
			return fmt.Errorf("close: connection ended before the server's close frame: %v", err)
		}
	case <-deadline.C:
		return fmt.Errorf("close: no close frame from the server within %v", cfg.timeout)
	}
	if code := c.closeCode.Load(); code != 1000 {
		return fmt.Errorf("close: the server answered code %d, not 1000", code)
	}
	if t, ok := c.t.(*h1Transport); ok {
		return t.waitServerClose(cfg.timeout)
	}
	return nil
}

// waitServerClose reads until the server closes the connection (after the
// close handshake, RFC 6455 7.1.1); any byte is an error.
func (t *h1Transport) waitServerClose(timeout time.Duration) error {
	t.c.SetReadDeadline(time.Now().Add(timeout))
	var b [1]byte
	n, err := t.c.Read(b[:])
	switch {
	case n > 0:
		return fmt.Errorf("close: bytes from the server after its close frame")
	case errors.Is(err, io.EOF):
		return nil
	case errors.Is(err, os.ErrDeadlineExceeded):
		return fmt.Errorf("close: the server did not close the connection within %v", timeout)
	default:
		var ne *net.OpError
		if errors.As(err, &ne) {
			return fmt.Errorf("close: %v", ne.Err)
		}
		return fmt.Errorf("close: %v", err)
	}
}
