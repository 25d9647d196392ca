package main

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

const (
	opCont   = 0x0
	opText   = 0x1
	opBinary = 0x2
	opClose  = 0x8
	opPing   = 0x9
	opPong   = 0xA
)

var errClosed = errors.New("websocket closed by the server")

// appendFrame appends one masked client frame (FIN set) to dst.
func appendFrame(dst []byte, rsv1 bool, op byte, payload []byte, key [4]byte) []byte {
	b0 := 0x80 | op
	if rsv1 {
		b0 |= 0x40
	}
	n := len(payload)
	switch {
	case n < 126:
		dst = append(dst, b0, 0x80|byte(n))
	case n < 65536:
		dst = append(dst, b0, 0x80|126, byte(n>>8), byte(n))
	default:
		dst = append(dst, b0, 0x80|127)
		dst = binary.BigEndian.AppendUint64(dst, uint64(n))
	}
	dst = append(dst, key[:]...)
	start := len(dst)
	dst = append(dst, payload...)
	maskBytes(dst[start:], key)
	return dst
}

// maskBytes XORs b with the repeated 4-byte key, 8 bytes at a time.
func maskBytes(b []byte, key [4]byte) {
	k32 := binary.LittleEndian.Uint32(key[:])
	k64 := uint64(k32) | uint64(k32)<<32
	i := 0
	for ; i+8 <= len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], binary.LittleEndian.Uint64(b[i:])^k64)
	}
	for ; i < len(b); i++ {
		b[i] ^= key[i&3]
	}
}

// parser turns the server's byte stream into messages. buf[r:] holds the
// bytes not parsed yet.
type parser struct {
	buf []byte
	r   int

	inMsg   bool
	msgOp   byte
	msgRsv1 bool
	msg     []byte

	// onMessage gets each complete data message (payload valid only
	// during the call); onControl each control frame.
	onMessage func(op byte, rsv1 bool, payload []byte) error
	onControl func(op byte, payload []byte) error
}

func newParser(size int) *parser { return &parser{buf: make([]byte, 0, size)} }

// space returns free room at the end of buf (at least min bytes),
// compacting or growing it first.
func (p *parser) space(min int) []byte {
	if cap(p.buf)-len(p.buf) < min {
		unread := len(p.buf) - p.r
		if p.r > 0 && cap(p.buf)-unread >= min {
			copy(p.buf, p.buf[p.r:])
			p.buf = p.buf[:unread]
			p.r = 0
		} else {
			nb := make([]byte, unread, 2*cap(p.buf)+min)
			copy(nb, p.buf[p.r:])
			p.buf = nb
			p.r = 0
		}
	}
	return p.buf[len(p.buf):cap(p.buf)]
}

func (p *parser) feed(b []byte) error {
	copy(p.space(len(b)), b)
	p.buf = p.buf[:len(p.buf)+len(b)]
	return p.parse()
}

// parse handles every complete frame in the buffer; it returns nil when it
// needs more bytes.
func (p *parser) parse() error {
	for {
		b := p.buf[p.r:]
		if len(b) < 2 {
			break
		}
		fin := b[0]&0x80 != 0
		rsv1 := b[0]&0x40 != 0
		if b[0]&0x30 != 0 {
			return fmt.Errorf("server frame with RSV2/RSV3 set")
		}
		op := b[0] & 0x0f
		if b[1]&0x80 != 0 {
			return fmt.Errorf("masked server frame")
		}
		hl := 2
		n := uint64(b[1] & 0x7f)
		switch n {
		case 126:
			hl = 4
			if len(b) < hl {
				return p.need(hl)
			}
			n = uint64(binary.BigEndian.Uint16(b[2:]))
		case 127:
			hl = 10
			if len(b) < hl {
				return p.need(hl)
			}
			n = binary.BigEndian.Uint64(b[2:])
			if n > 1<<31 {
				return fmt.Errorf("server frame of %d bytes", n)
			}
		}
		total := hl + int(n)
		if len(b) < total {
			return p.need(total)
		}
		payload := b[hl:total]
		p.r += total
		if op >= 0x8 {
			if !fin || n > 125 {
				return fmt.Errorf("bad control frame")
			}
			if err := p.onControl(op, payload); err != nil {
				return err
			}
			continue
		}
		switch {
		case op == opCont && !p.inMsg:
			return fmt.Errorf("continuation frame outside a message")
		case op != opCont && p.inMsg:
			return fmt.Errorf("new message inside a fragmented one")
		case op != opCont && op != opText && op != opBinary:
			return fmt.Errorf("unknown opcode %d", op)
		}
		if op != opCont && fin {
			if err := p.onMessage(op, rsv1, payload); err != nil {
				return err
			}
			continue
		}
		if op != opCont {
			p.inMsg, p.msgOp, p.msgRsv1, p.msg = true, op, rsv1, p.msg[:0]
		}
		p.msg = append(p.msg, payload...)
		if fin {
			p.inMsg = false
			if err := p.onMessage(p.msgOp, p.msgRsv1, p.msg); err != nil {
				return err
			}
		}
	}
	if p.r == len(p.buf) {
		p.buf, p.r = p.buf[:0], 0
	}
	return nil
}

// need makes room for a frame of total bytes starting at r.
func (p *parser) need(total int) error {
	have := len(p.buf) - p.r
	if cap(p.buf)-p.r < total {
		p.space(total - have)
	}
	return nil
}

// --- permessage-deflate (RFC 7692) ---------------------------------------

type pmd struct {
	serverNoCtx bool // server_no_context_takeover: the server resets per message
	clientNoCtx bool // client_no_context_takeover: we reset per message
}

// parseExtensions reads a Sec-WebSocket-Extensions answer; ok is false
// when permessage-deflate was not accepted.
func parseExtensions(h string) (pmd, bool, error) {
	var p pmd
	if strings.TrimSpace(h) == "" {
		return p, false, nil
	}
	exts := strings.Split(h, ",")
	if len(exts) != 1 {
		return p, false, fmt.Errorf("server answered several extensions: %q", h)
	}
	parts := strings.Split(exts[0], ";")
	if strings.TrimSpace(parts[0]) != "permessage-deflate" {
		return p, false, fmt.Errorf("server answered an extension not offered: %q", h)
	}
	for _, a := range parts[1:] {
		k, v, _ := strings.Cut(strings.TrimSpace(a), "=")
		v = strings.Trim(v, `"`)
		switch k {
		case "server_no_context_takeover":
			p.serverNoCtx = true
		case "client_no_context_takeover":
			p.clientNoCtx = true
		case "server_max_window_bits":
			// any window up to 32 KiB inflates with Go's 32 KiB window
			if n, err := strconv.Atoi(v); err != nil || n < 8 || n > 15 {
				return p, false, fmt.Errorf("bad server_max_window_bits %q", v)
			}
		case "client_max_window_bits":
			return p, false, fmt.Errorf("server sent client_max_window_bits, which was not offered")
		default:
			return p, false, fmt.Errorf("unknown permessage-deflate parameter %q", k)
		}
	}
	return p, true, nil
}

type deflater struct {
	w     *flate.Writer
	buf   bytes.Buffer
	noCtx bool
}

func newDeflater(level int, noCtx bool) *deflater {
	d := &deflater{noCtx: noCtx}
	d.w, _ = flate.NewWriter(&d.buf, level)
	return d
}

// compress returns the compressed message (valid until the next call),
// without the 00 00 ff ff tail of the sync flush.
func (d *deflater) compress(p []byte) []byte {
	d.buf.Reset()
	if d.noCtx {
		d.w.Reset(&d.buf)
	}
	d.w.Write(p)
	d.w.Flush()
	b := d.buf.Bytes()
	return b[:len(b)-4]
}

// The tail appended to each message (RFC 7692 7.2.2), followed by a final
// empty stored block so that the reader ends with io.EOF.
var inflateTail = []byte{0x00, 0x00, 0xff, 0xff, 0x01, 0x00, 0x00, 0xff, 0xff}

type twoReader struct {
	a, b []byte
}

func (t *twoReader) Read(p []byte) (int, error) {
	if len(t.a) == 0 {
		t.a, t.b = t.b, nil
		if len(t.a) == 0 {
			return 0, io.EOF
		}
	}
	n := copy(p, t.a)
	t.a = t.a[n:]
	return n, nil
}

func (t *twoReader) ReadByte() (byte, error) {
	if len(t.a) == 0 {
		t.a, t.b = t.b, nil
		if len(t.a) == 0 {
			return 0, io.EOF
		}
	}
	c := t.a[0]
	t.a = t.a[1:]
	return c, nil
}

// inflater decompresses server messages; with context takeover the last
// 32 KiB of output is the next message's dictionary.
type inflater struct {
	r     io.ReadCloser
	src   twoReader
	dict  []byte
	out   []byte
	noCtx bool
}

func newInflater(noCtx bool) *inflater {
	f := &inflater{noCtx: noCtx, out: make([]byte, 0, 128<<10)}
	f.r = flate.NewReader(&f.src)
	return f
}

func (f *inflater) inflate(p []byte, limit int) ([]byte, error) {
	f.src = twoReader{a: p, b: inflateTail}
	var dict []byte
	if !f.noCtx {
		dict = f.dict
	}
	if err := f.r.(flate.Resetter).Reset(&f.src, dict); err != nil {
		return nil, err
	}
	out := f.out[:0]
	for {
		if len(out) == cap(out) {
			out = append(out, 0)[:len(out)]
		}
		n, err := f.r.Read(out[len(out):cap(out)])
		out = out[:len(out)+n]
		if len(out) > limit {
			return nil, fmt.Errorf("inflated message larger than %d bytes", limit)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("inflate: %v", err)
		}
	}
	f.out = out
	if !f.noCtx {
		const win = 32 << 10
		if len(out) >= win {
			f.dict = append(f.dict[:0], out[len(out)-win:]...)
		} else {
			f.dict = append(f.dict, out...)
			if len(f.dict) > win {
				f.dict = f.dict[:copy(f.dict, f.dict[len(f.dict)-win:])]
			}
		}
	}
	return out, nil
}
