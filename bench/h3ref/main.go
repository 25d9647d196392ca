// h3ref: quic-go's HTTP/3 server as a reference in bench/run.sh (issue 25).
//
//	h3ref -addr 127.0.0.1:PORT -cert CERT.pem -key KEY.pem
//
// GET / answers "Hello world!" (text/plain, as Mustang's hello handler);
// POST / reads the body whole and answers its length.
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"

	"github.com/quic-go/quic-go/http3"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "address")
	cert := flag.String("cert", "", "certificate (PEM)")
	key := flag.String("key", "", "key (PEM)")
	flag.Parse()
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "POST" {
			n, _ := io.Copy(io.Discard, r.Body)
			w.Header().Set("content-type", "text/plain")
			fmt.Fprintf(w, "%d", n)
			return
		}
		w.Header().Set("content-type", "text/plain")
		w.Write([]byte("Hello world!"))
	})
	log.Fatal(http3.ListenAndServeQUIC(*addr, *cert, *key, mux))
}
