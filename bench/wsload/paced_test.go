package main

import (
	"bufio"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestReadResponse(t *testing.T) {
	cases := []struct {
		name, in     string
		status       int
		n            int64
		keep, broken bool
	}{
		{"content-length", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", 200, 5, true, false},
		{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhel\r\n2;x=y\r\nlo\r\n0\r\nT: 1\r\n\r\n", 200, 5, true, false},
		{"close", "HTTP/1.1 404 Not Found\r\nConnection: close\r\ncontent-length: 0\r\n\r\n", 404, 0, false, false},
		{"http/1.0", "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", 200, 2, false, false},
		{"http/1.0 keep-alive", "HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 2\r\n\r\nok", 200, 2, true, false},
		{"to the end", "HTTP/1.1 200 OK\r\n\r\nabc", 200, 3, false, false},
		{"bad status line", "HTTP/1.1 2x0 OK\r\n\r\n", 0, 0, false, true},
		{"bad header", "HTTP/1.1 200 OK\r\nnocolon\r\n\r\n", 0, 0, false, true},
		{"short body", "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabc", 200, 3, true, true},
	}
	for _, c := range cases {
		status, n, keep, err := readResponse(bufio.NewReader(strings.NewReader(c.in)))
		if (err != nil) != c.broken {
			t.Errorf("%s: error %v", c.name, err)
			continue
		}
		if c.broken {
			continue
		}
		if status != c.status || n != c.n || keep != c.keep {
			t.Errorf("%s: got status %d, %d bytes, keep %v; want %d, %d, %v", c.name, status, n, keep, c.status, c.n, c.keep)
		}
	}
}

// stubServer answers each request with answer(k), k the request's number
// over all connections (from 0), after delay(k); answer "" closes the
// connection instead.
func stubServer(t *testing.T, delay func(k int64) time.Duration, answer func(k int64) string) (string, *atomic.Int64) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	var count atomic.Int64
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					line, err := br.ReadString('\n')
					if err != nil {
						return
					}
					if line != "\r\n" {
						continue // the request line and headers
					}
					k := count.Add(1) - 1
					time.Sleep(delay(k))
					a := answer(k)
					if a == "" {
						return
					}
					io.WriteString(c, a)
				}
			}()
		}
	}()
	return "http://" + l.Addr().String() + "/sleep", &count
}

const okAnswer = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"

func pacedConfig(url string) *config {
	return &config{url: url, mode: "paced", conns: 1, rate: 10, connectRate: 1000,
		duration: time.Second, timeout: 5 * time.Second, expectStatus: 200, expectLength: 5}
}

func num(t *testing.T, res map[string]any, key string) float64 {
	switch v := res[key].(type) {
	case float64:
		return v
	case int64:
		return float64(v)
	case int:
		return float64(v)
	}
	t.Fatalf("no %s in %v", key, res)
	return 0
}

// One connection, 10 requests a second for 1 s; the third answer takes
// 450 ms. The four slots that passed meanwhile go out at once when it
// comes, and their latencies count from their own slots (350, 250, 150,
// 50 ms): the schedule is not moved, no slot is skipped or sent twice.
func TestPacedCoordinatedOmission(t *testing.T) {
	url, count := stubServer(t, func(k int64) time.Duration {
		if k == 2 {
			return 450 * time.Millisecond
		}
		return 0
	}, func(int64) string { return okAnswer })
	res, err := runPaced(pacedConfig(url))
	if err != nil {
		t.Fatal(err)
	}
	if got := num(t, res, "requests"); got != 10 || num(t, res, "errors") != 0 || count.Load() != 10 {
		t.Fatalf("want 10 requests answered and sent, no error: %v (server saw %d)", res, count.Load())
	}
	if max := num(t, res, "max_ms"); max < 440 || max > 700 {
		t.Errorf("max %v ms, want the 450 ms answer", max)
	}
	// p90: the 9th of 10 latencies, the first slot sent late (350 ms)
	if p90 := num(t, res, "p90_ms"); p90 < 330 || p90 > 600 {
		t.Errorf("p90 %v ms, want ~350 ms: the late slots count from their schedule", p90)
	}
	if p50 := num(t, res, "p50_ms"); p50 > 100 {
		t.Errorf("p50 %v ms, want the prompt answers", p50)
	}
}

// A connection the server closes without answering is a reset; it is
// opened again for the next slot. Wrong statuses and lengths are counted
// apart and are not latencies.
func TestPacedErrors(t *testing.T) {
	url, count := stubServer(t, func(int64) time.Duration { return 0 }, func(k int64) string {
		switch k {
		case 1:
			return ""
		case 4:
			return "HTTP/1.1 503 Unavailable\r\nContent-Length: 5\r\n\r\nbusy!"
		case 6:
			return "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc"
		}
		return okAnswer
	})
	res, err := runPaced(pacedConfig(url))
	if err != nil {
		t.Fatal(err)
	}
	if num(t, res, "errors_reset") != 1 || num(t, res, "errors_status") != 1 ||
		num(t, res, "errors_length") != 1 || num(t, res, "errors") != 3 || num(t, res, "requests") != 7 {
		t.Fatalf("want 7 requests, 1 reset, 1 status and 1 length error: %v (server saw %d)", res, count.Load())
	}
}

// Nothing listening: the run fails at once.
func TestPacedNoServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	if _, err := runPaced(pacedConfig("http://" + addr + "/")); err == nil {
		t.Fatal("want an error when no connection opens")
	}
}
