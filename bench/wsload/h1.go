package main

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// h1Transport: RFC 6455 over a plain TCP connection.
type h1Transport struct {
	c  net.Conn
	mu sync.Mutex
}

// dialH1 connects and does the RFC 6455 handshake; leftover bytes after the
// 101 answer stay in p. It returns the Sec-WebSocket-Extensions answer.
func dialH1(addr, host, path string, deflateOffer string, p *parser, timeout time.Duration) (*h1Transport, string, error) {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, "", err
	}
	c.(*net.TCPConn).SetNoDelay(true)
	var k [16]byte
	rand.Read(k[:])
	key := base64.StdEncoding.EncodeToString(k[:])
	var req strings.Builder
	fmt.Fprintf(&req, "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n", path, host, key)
	if deflateOffer != "" {
		fmt.Fprintf(&req, "Sec-WebSocket-Extensions: %s\r\n", deflateOffer)
	}
	req.WriteString("\r\n")
	c.SetDeadline(time.Now().Add(timeout))
	if _, err := c.Write([]byte(req.String())); err != nil {
		c.Close()
		return nil, "", err
	}
	// Read the answer head into the parser's buffer.
	var head []byte
	for {
		sp := p.space(4096)
		n, err := c.Read(sp)
		p.buf = p.buf[:len(p.buf)+n]
		if i := bytes.Index(p.buf, []byte("\r\n\r\n")); i >= 0 {
			head = append([]byte(nil), p.buf[:i+4]...)
			p.r = i + 4
			break
		}
		if err != nil {
			c.Close()
			return nil, "", fmt.Errorf("handshake: %v", err)
		}
		if len(p.buf) > 64<<10 {
			c.Close()
			return nil, "", fmt.Errorf("handshake: answer head too large")
		}
	}
	c.SetDeadline(time.Time{})
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(head)), nil)
	if err != nil {
		c.Close()
		return nil, "", fmt.Errorf("handshake: %v", err)
	}
	if resp.StatusCode != 101 {
		c.Close()
		return nil, "", fmt.Errorf("handshake: status %d, not 101", resp.StatusCode)
	}
	h := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	if resp.Header.Get("Sec-WebSocket-Accept") != base64.StdEncoding.EncodeToString(h[:]) {
		c.Close()
		return nil, "", fmt.Errorf("handshake: bad Sec-WebSocket-Accept")
	}
	if !strings.EqualFold(resp.Header.Get("Upgrade"), "websocket") {
		c.Close()
		return nil, "", fmt.Errorf("handshake: no Upgrade: websocket")
	}
	return &h1Transport{c: c}, strings.Join(resp.Header.Values("Sec-WebSocket-Extensions"), ", "), nil
}

func (t *h1Transport) write(bufs [][]byte) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(bufs) == 1 {
		_, err := t.c.Write(bufs[0])
		return err
	}
	nb := net.Buffers(bufs)
	_, err := nb.WriteTo(t.c)
	return err
}

func (t *h1Transport) tryWrite(b []byte) bool {
	if !t.mu.TryLock() {
		return false
	}
	defer t.mu.Unlock()
	t.c.Write(b)
	return true
}

// readLoop feeds the parser until an error.
func (t *h1Transport) readLoop(p *parser) error {
	if err := p.parse(); err != nil { // bytes that came with the 101
		return err
	}
	for {
		sp := p.space(32 << 10)
		n, err := t.c.Read(sp)
		if n > 0 {
			p.buf = p.buf[:len(p.buf)+n]
			if perr := p.parse(); perr != nil {
				return perr
			}
		}
		if err != nil {
			return err
		}
	}
}

func (t *h1Transport) close() { t.c.Close() }
