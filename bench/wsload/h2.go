package main

import (
	"bufio"
	"fmt"
	"net"
	"sync"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

const (
	h2RecvWindow  = 1 << 30 // our stream and connection receive windows
	h2UpdateAfter = 1 << 26 // replenish after this many bytes received
	h2MaxReadSize = 1 << 20 // our SETTINGS_MAX_FRAME_SIZE
	h2StreamID    = 1
)

// h2Transport: RFC 8441 Websocket on stream 1 of an h2c connection (prior
// knowledge). Writes go through fr under mu; one goroutine reads.
type h2Transport struct {
	c  net.Conn
	bw *bufio.Writer
	fr *http2.Framer

	mu         sync.Mutex // windows, settings, err; never held during I/O
	cond       *sync.Cond
	fmu        sync.Mutex // the framer's write side and bw
	connSend   int64      // send windows (server's)
	streamSend int64
	initWin    int64 // server's SETTINGS_INITIAL_WINDOW_SIZE
	maxFrame   int   // server's SETTINGS_MAX_FRAME_SIZE
	err        error // set by the reader; wakes blocked writers
	wsMu       sync.Mutex

	connRecv, streamRecv int64 // received since the last WINDOW_UPDATE
}

func dialH2(addr, host, path string, deflateOffer string, timeout time.Duration) (*h2Transport, string, error) {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, "", err
	}
	c.(*net.TCPConn).SetNoDelay(true)
	t := &h2Transport{c: c, connSend: 65535, streamSend: 65535, initWin: 65535, maxFrame: 16384}
	t.cond = sync.NewCond(&t.mu)
	t.bw = bufio.NewWriterSize(c, 256<<10)
	t.fr = http2.NewFramer(t.bw, bufio.NewReaderSize(c, 64<<10))
	t.fr.SetMaxReadFrameSize(h2MaxReadSize)
	t.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	fail := func(err error) (*h2Transport, string, error) {
		c.Close()
		return nil, "", fmt.Errorf("h2 handshake: %v", err)
	}
	c.SetDeadline(time.Now().Add(timeout))
	t.bw.WriteString(http2.ClientPreface)
	t.fr.WriteSettings(
		http2.Setting{ID: http2.SettingEnablePush, Val: 0},
		http2.Setting{ID: http2.SettingInitialWindowSize, Val: h2RecvWindow},
		http2.Setting{ID: http2.SettingMaxFrameSize, Val: h2MaxReadSize},
	)
	t.fr.WriteWindowUpdate(0, h2RecvWindow-65535)
	if err := t.bw.Flush(); err != nil {
		return fail(err)
	}
	// The server's SETTINGS first: it must allow extended CONNECT.
	gotSettings, connect := false, false
	for !gotSettings {
		f, err := t.fr.ReadFrame()
		if err != nil {
			return fail(err)
		}
		if sf, ok := f.(*http2.SettingsFrame); ok && !sf.IsAck() {
			gotSettings = true
			if v, ok := sf.Value(http2.SettingEnableConnectProtocol); ok && v == 1 {
				connect = true
			}
		}
		if err := t.handshakeControl(f); err != nil {
			return fail(err)
		}
	}
	if !connect {
		return fail(fmt.Errorf("server did not send SETTINGS_ENABLE_CONNECT_PROTOCOL=1"))
	}
	var hb []byte
	enc := hpack.NewEncoder(&hbuf{&hb})
	hdr := [][2]string{{":method", "CONNECT"}, {":protocol", "websocket"}, {":scheme", "http"},
		{":path", path}, {":authority", host}, {"sec-websocket-version", "13"}}
	if deflateOffer != "" {
		hdr = append(hdr, [2]string{"sec-websocket-extensions", deflateOffer})
	}
	for _, h := range hdr {
		enc.WriteField(hpack.HeaderField{Name: h[0], Value: h[1]})
	}
	if err := t.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: h2StreamID, BlockFragment: hb,
		EndHeaders: true}); err != nil {
		return fail(err)
	}
	if err := t.bw.Flush(); err != nil {
		return fail(err)
	}
	var ext string
	for {
		f, err := t.fr.ReadFrame()
		if err != nil {
			return fail(err)
		}
		done := false
		switch f := f.(type) {
		case *http2.MetaHeadersFrame:
			if f.StreamID != h2StreamID {
				return fail(fmt.Errorf("HEADERS on stream %d", f.StreamID))
			}
			if st := f.PseudoValue("status"); st != "200" {
				return fail(fmt.Errorf(":status %s, not 200", st))
			}
			if f.StreamEnded() {
				return fail(fmt.Errorf("stream ended with the 200"))
			}
			for _, hf := range f.RegularFields() {
				if hf.Name == "sec-websocket-extensions" {
					if ext != "" {
						ext += ", "
					}
					ext += hf.Value
				}
			}
			done = true
		default:
			if err := t.handshakeControl(f); err != nil {
				return fail(err)
			}
		}
		if done {
			break
		}
	}
	c.SetDeadline(time.Time{})
	return t, ext, nil
}

// handshakeControl answers the server's control frames while dialH2 reads
// alone (before readLoop runs): SETTINGS applied and acknowledged,
// WINDOW_UPDATE counted, PING answered; RST_STREAM and GOAWAY end the
// handshake.
func (t *h2Transport) handshakeControl(f http2.Frame) error {
	switch f := f.(type) {
	case *http2.SettingsFrame:
		if f.IsAck() {
			return nil
		}
		if err := t.applySettings(f); err != nil {
			return err
		}
		t.fr.WriteSettingsAck()
		return t.bw.Flush()
	case *http2.WindowUpdateFrame:
		t.windowUpdate(f)
	case *http2.PingFrame:
		if !f.IsAck() {
			t.fr.WritePing(true, f.Data)
			return t.bw.Flush()
		}
	case *http2.RSTStreamFrame:
		return fmt.Errorf("RST_STREAM %v", f.ErrCode)
	case *http2.GoAwayFrame:
		return fmt.Errorf("GOAWAY %v", f.ErrCode)
	}
	return nil
}

type hbuf struct{ b *[]byte }

func (h *hbuf) Write(p []byte) (int, error) { *h.b = append(*h.b, p...); return len(p), nil }

// applySettings (mu held, or during the handshake) records the server's
// settings; the caller acknowledges them.
func (t *h2Transport) applySettings(f *http2.SettingsFrame) error {
	err := f.ForeachSetting(func(s http2.Setting) error {
		switch s.ID {
		case http2.SettingInitialWindowSize:
			t.streamSend += int64(s.Val) - t.initWin
			t.initWin = int64(s.Val)
		case http2.SettingMaxFrameSize:
			t.maxFrame = int(s.Val)
		}
		return nil
	})
	t.cond.Broadcast()
	return err
}

// ctl writes a control frame from the reader without blocking it: the
// writer may hold fmu while the server, not reading, waits for us to read.
func (t *h2Transport) ctl(w func(fr *http2.Framer)) {
	go func() {
		t.fmu.Lock()
		defer t.fmu.Unlock()
		w(t.fr)
		t.bw.Flush()
	}()
}

func (t *h2Transport) windowUpdate(f *http2.WindowUpdateFrame) {
	if f.StreamID == 0 {
		t.connSend += int64(f.Increment)
	} else if f.StreamID == h2StreamID {
		t.streamSend += int64(f.Increment)
	}
	t.cond.Broadcast()
}

// write sends complete Websocket frames as DATA frames, within the
// server's flow-control windows and SETTINGS_MAX_FRAME_SIZE.
func (t *h2Transport) write(bufs [][]byte) error {
	t.wsMu.Lock()
	defer t.wsMu.Unlock()
	t.fmu.Lock()
	defer t.fmu.Unlock()
	for _, b := range bufs {
		for len(b) > 0 {
			t.mu.Lock()
			n := min(int64(len(b)), int64(t.maxFrame), t.connSend, t.streamSend)
			if n <= 0 && t.err == nil {
				t.mu.Unlock()
				if err := t.bw.Flush(); err != nil {
					return err
				}
				t.mu.Lock()
				for t.err == nil && min(t.connSend, t.streamSend) <= 0 {
					t.cond.Wait()
				}
				n = min(int64(len(b)), int64(t.maxFrame), t.connSend, t.streamSend)
			}
			if t.err != nil {
				err := t.err
				t.mu.Unlock()
				return err
			}
			t.connSend -= n
			t.streamSend -= n
			t.mu.Unlock()
			if err := t.fr.WriteData(h2StreamID, false, b[:n]); err != nil {
				return err
			}
			b = b[n:]
		}
	}
	return t.bw.Flush()
}

func (t *h2Transport) tryWrite(b []byte) bool {
	if !t.wsMu.TryLock() {
		return false
	}
	t.wsMu.Unlock()
	go t.write([][]byte{b})
	return true
}

// readLoop reads frames until an error, feeding stream 1's DATA to p.
func (t *h2Transport) readLoop(p *parser) (err error) {
	defer func() {
		t.mu.Lock()
		if t.err == nil {
			t.err = fmt.Errorf("connection reader stopped: %v", err)
		}
		t.cond.Broadcast()
		t.mu.Unlock()
	}()
	for {
		f, err := t.fr.ReadFrame()
		if err != nil {
			return err
		}
		switch f := f.(type) {
		case *http2.DataFrame:
			if f.StreamID != h2StreamID {
				return fmt.Errorf("DATA on stream %d", f.StreamID)
			}
			if err := p.feed(f.Data()); err != nil {
				return err
			}
			l := int64(f.Length)
			t.connRecv += l
			t.streamRecv += l
			if t.connRecv >= h2UpdateAfter || t.streamRecv >= h2UpdateAfter {
				cr, sr := uint32(t.connRecv), uint32(t.streamRecv)
				t.connRecv, t.streamRecv = 0, 0
				t.ctl(func(fr *http2.Framer) {
					if cr > 0 {
						fr.WriteWindowUpdate(0, cr)
					}
					if sr > 0 {
						fr.WriteWindowUpdate(h2StreamID, sr)
					}
				})
			}
			if f.StreamEnded() {
				return fmt.Errorf("server ended the stream")
			}
		case *http2.WindowUpdateFrame:
			t.mu.Lock()
			t.windowUpdate(f)
			t.mu.Unlock()
		case *http2.SettingsFrame:
			if !f.IsAck() {
				t.mu.Lock()
				err := t.applySettings(f)
				t.mu.Unlock()
				if err != nil {
					return err
				}
				t.ctl(func(fr *http2.Framer) { fr.WriteSettingsAck() })
			}
		case *http2.PingFrame:
			if !f.IsAck() {
				d := f.Data
				t.ctl(func(fr *http2.Framer) { fr.WritePing(true, d) })
			}
		case *http2.RSTStreamFrame:
			return fmt.Errorf("RST_STREAM %v on stream %d", f.ErrCode, f.StreamID)
		case *http2.GoAwayFrame:
			return fmt.Errorf("GOAWAY %v", f.ErrCode)
		case *http2.MetaHeadersFrame:
			return fmt.Errorf("unexpected HEADERS on stream %d", f.StreamID)
		}
	}
}

func (t *h2Transport) close() { t.c.Close() }
