// echofloor: one connection, one message in flight: writes a message, reads
// its echo whole, checks it, repeats for -d; prints round trips per second.
// With -ws PATH it first makes the RFC 6455 handshake and sends masked binary
// frames of -size bytes, expecting the unmasked echo; without, it sends -size
// raw bytes and expects them back. Used by bench/echo_floor.sh to measure
// how fast a round trip can be on this machine, next to a Websocket echo.
//
//	echofloor -addr 127.0.0.1:18084 -size 1024 -d 3s
//	echofloor -addr 127.0.0.1:18081 -ws /ws -size 1024 -d 3s
//	echofloor -serve -addr 127.0.0.1:18085   (a raw echo server in Go)
package main

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:18084", "host:port")
	ws := flag.String("ws", "", "Websocket path (raw TCP echo when empty)")
	size := flag.Int("size", 1024, "message size in bytes (below 65536)")
	dur := flag.Duration("d", 3*time.Second, "measurement time")
	warm := flag.Duration("warmup", time.Second, "warm-up time, not counted")
	serve := flag.Bool("serve", false, "be a raw TCP echo server on -addr instead")
	flag.Parse()
	if *serve {
		echoServer(*addr)
	}
	if *size < 126 || *size > 65535 {
		fail(fmt.Errorf("-size must be 126..65535"))
	}
	c, err := net.Dial("tcp", *addr)
	if err != nil {
		fail(err)
	}
	c.(*net.TCPConn).SetNoDelay(true)
	payload := make([]byte, *size)
	rand.Read(payload)
	out, want := payload, payload
	if *ws != "" {
		fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
			"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n", *ws, *addr)
		r := bufio.NewReader(c)
		resp, err := http.ReadResponse(r, nil)
		if err != nil || resp.StatusCode != 101 || r.Buffered() != 0 {
			fail(fmt.Errorf("handshake: %v %v", err, resp))
		}
		mask := []byte{0x11, 0x22, 0x33, 0x44}
		out = append([]byte{0x82, 0x80 | 126, byte(*size >> 8), byte(*size)}, mask...)
		for i, b := range payload {
			out = append(out, b^mask[i%4])
		}
		want = append([]byte{0x82, 126, byte(*size >> 8), byte(*size)}, payload...)
	}
	in := make([]byte, len(want))
	roundTrip := func() {
		if _, err := c.Write(out); err != nil {
			fail(err)
		}
		if _, err := io.ReadFull(c, in); err != nil {
			fail(err)
		}
		if !bytes.Equal(in, want) {
			fail(fmt.Errorf("the echo differs from what was sent"))
		}
	}
	for end := time.Now().Add(*warm); time.Now().Before(end); {
		roundTrip()
	}
	n := 0
	start := time.Now()
	for end := start.Add(*dur); time.Now().Before(end); n++ {
		roundTrip()
	}
	secs := time.Since(start).Seconds()
	json.NewEncoder(os.Stdout).Encode(map[string]any{"addr": *addr, "ws": *ws, "size": *size,
		"round_trips": n, "seconds": secs, "round_trips_s": float64(n) / secs})
}

// echoServer: the Go floor, a goroutine per connection copying bytes back.
func echoServer(addr string) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fail(err)
	}
	fmt.Println("echofloor listening on", addr)
	for {
		c, err := ln.Accept()
		if err != nil {
			fail(err)
		}
		go func(c net.Conn) { io.Copy(c, c); c.Close() }(c)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "echofloor:", err)
	os.Exit(1)
}
