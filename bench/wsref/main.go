// wsref: the reference Websocket echo server of Mustang's benchmarks
// (bench/README.md). HTTP/1.1 only (RFC 6455 upgrade): no Go Websocket
// library serves RFC 8441 (Websocket over HTTP/2).
//
//	wsref -addr 127.0.0.1:18083 [-lib auto|gorilla|coder]
//
// GET / answers "ok" (health check); /ws (and /ws/deflate) echo each
// message with its opcode (text as text, binary as binary). Text messages
// are checked for valid UTF-8 (close 1007 otherwise), as RFC 6455 requires
// and as Mustang does: neither library checks it by itself.
// permessage-deflate is accepted when offered: gorilla only without context
// takeover (it answers server_no_context_takeover;
// client_no_context_takeover), coder/websocket with context takeover both
// ways. -lib auto (the default, the one bench/run.sh uses) serves a
// connection with coder/websocket when the client offers permessage-deflate
// (like-for-like with Mustang's context takeover) and with gorilla
// otherwise (the faster of the two without deflate on the 1 KiB pipelined
// workloads; see bench/README.md).
package main

import (
	"bytes"
	"context"
	"flag"
	"log"
	"net/http"
	"strings"
	"unicode/utf8"

	cws "github.com/coder/websocket"
	gws "github.com/gorilla/websocket"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:18083", "listen address")
	lib := flag.String("lib", "auto", "gorilla, coder, or auto: coder when the client offers permessage-deflate, else gorilla")
	validate := flag.Bool("validate-utf8", true, "check text messages are valid UTF-8")
	flag.Parse()
	var gorilla, coder http.HandlerFunc
	{
		up := gws.Upgrader{ReadBufferSize: 128 << 10, WriteBufferSize: 256 << 10,
			EnableCompression: true, CheckOrigin: func(*http.Request) bool { return true }}
		gorilla = func(w http.ResponseWriter, r *http.Request) {
			c, err := up.Upgrade(w, r, nil)
			if err != nil {
				return
			}
			defer c.Close()
			var b bytes.Buffer
			for {
				mt, rd, err := c.NextReader()
				if err != nil {
					return
				}
				b.Reset()
				if _, err := b.ReadFrom(rd); err != nil {
					return
				}
				if mt == gws.TextMessage && *validate && !utf8.Valid(b.Bytes()) {
					c.WriteMessage(gws.CloseMessage, gws.FormatCloseMessage(gws.CloseInvalidFramePayloadData, ""))
					return
				}
				if err := c.WriteMessage(mt, b.Bytes()); err != nil {
					return
				}
			}
		}
	}
	{
		coder = func(w http.ResponseWriter, r *http.Request) {
			c, err := cws.Accept(w, r, &cws.AcceptOptions{InsecureSkipVerify: true,
				CompressionMode: cws.CompressionContextTakeover, CompressionThreshold: 1})
			if err != nil {
				return
			}
			defer c.CloseNow()
			c.SetReadLimit(-1)
			ctx := context.Background()
			var b bytes.Buffer
			for {
				typ, rd, err := c.Reader(ctx)
				if err != nil {
					return
				}
				b.Reset()
				if _, err := b.ReadFrom(rd); err != nil {
					return
				}
				if typ == cws.MessageText && *validate && !utf8.Valid(b.Bytes()) {
					c.Close(cws.StatusInvalidFramePayloadData, "")
					return
				}
				if err := c.Write(ctx, typ, b.Bytes()); err != nil {
					return
				}
			}
		}
	}
	var h http.HandlerFunc
	switch *lib {
	case "gorilla":
		h = gorilla
	case "coder":
		h = coder
	case "auto":
		h = func(w http.ResponseWriter, r *http.Request) {
			if strings.Contains(r.Header.Get("Sec-WebSocket-Extensions"), "permessage-deflate") {
				coder(w, r)
			} else {
				gorilla(w, r)
			}
		}
	default:
		log.Fatalf("-lib: gorilla, coder or auto")
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/ws", h)
	mux.HandleFunc("/ws/deflate", h)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })
	log.Printf("wsref (%s) listening on http://%s/ws", *lib, *addr)
	log.Fatal(http.ListenAndServe(*addr, mux))
}
