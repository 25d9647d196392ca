// h3load: an HTTP/3 load client on quic-go (bench/run.sh, issue 25).
//
//	h3load -url https://127.0.0.1:PORT/ -c CONNS -d SECONDS [-upload BYTES] [-h2]
//
// Each of the CONNS connections (one http3.Transport each, so one QUIC
// connection each) runs one request at a time for the duration; -upload
// POSTs a body of that many bytes instead of a GET; -h2 speaks HTTP/2 over
// TLS instead (Go's net/http, one TCP connection per Transport), so that
// HTTP/3 and HTTP/2 are measured with the same client. Prints one JSON line:
// {"requests": N, "errors": N, "seconds": S, "rps": R, "conns": C}.
package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go/http3"
)

func main() {
	url := flag.String("url", "", "URL")
	conns := flag.Int("c", 1, "connections")
	secs := flag.Float64("d", 5, "seconds")
	upload := flag.Int("upload", 0, "POST a body of this many bytes")
	h2 := flag.Bool("h2", false, "HTTP/2 over TLS instead of HTTP/3")
	flag.Parse()
	if *url == "" {
		fmt.Fprintln(os.Stderr, "h3load: -url is required")
		os.Exit(2)
	}
	body := bytes.Repeat([]byte("x"), *upload)
	var ok, bad int64
	deadline := time.Now().Add(time.Duration(*secs * float64(time.Second)))
	start := time.Now()
	var wg sync.WaitGroup
	for i := 0; i < *conns; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var rt http.RoundTripper
			if *h2 {
				t := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
					ForceAttemptHTTP2: true, MaxConnsPerHost: 1}
				defer t.CloseIdleConnections()
				rt = t
			} else {
				t := &http3.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
				defer t.Close()
				rt = t
			}
			client := &http.Client{Transport: rt, Timeout: 30 * time.Second}
			for time.Now().Before(deadline) {
				var req *http.Request
				if *upload > 0 {
					req, _ = http.NewRequestWithContext(context.Background(), "POST", *url, bytes.NewReader(body))
					req.ContentLength = int64(len(body))
				} else {
					req, _ = http.NewRequestWithContext(context.Background(), "GET", *url, nil)
				}
				resp, err := client.Do(req)
				if err != nil {
					atomic.AddInt64(&bad, 1)
					time.Sleep(10 * time.Millisecond)
					continue
				}
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != 200 || (*h2 && resp.ProtoMajor != 2) || (!*h2 && resp.ProtoMajor != 3) {
					atomic.AddInt64(&bad, 1)
				} else {
					atomic.AddInt64(&ok, 1)
				}
			}
		}()
	}
	wg.Wait()
	el := time.Since(start).Seconds()
	out, _ := json.Marshal(map[string]any{"requests": ok, "errors": bad, "seconds": el,
		"rps": float64(ok) / el, "conns": *conns})
	fmt.Println(string(out))
}
