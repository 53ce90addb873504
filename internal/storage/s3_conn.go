package storage

import (
	"context"
	"io"
	"net"
	"net/http"
	"sync"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// bodyWriteSize is the size of the writes that send a request body over a plain-HTTP connection.
//
// net/http sends a body of known length as io.Copy(conn, io.LimitReader(body, n)); the limit hides
// the body's WriteTo, so the copy falls to the TCP connection's generic ReadFrom, which writes 32 KiB
// at a time: about 30,000 write(2) calls per GiB of parts. A connection whose ReadFrom copies with a
// larger buffer sends the same bytes in 8x fewer calls. TLS connections write records of at most
// 16 KiB whatever the copy: this changes plain HTTP only (a local gateway, an on-premises store).
const bodyWriteSize = 256 << 10

// bodyWriter hands the connections of one store a shared pool of body buffers (at most one per
// request body being sent: PartsInFlight per open upload).
type bodyWriter struct {
	bufs sync.Pool // *[]byte of bodyWriteSize
}

// httpClient returns c (the SDK's default client) with connections whose request bodies are sent in
// writes of bodyWriteSize; any other client is returned as it is.
func (w *bodyWriter) httpClient(c s3.HTTPClient) s3.HTTPClient {
	bc, ok := c.(*awshttp.BuildableClient)
	if !ok || bc == nil {
		return c
	}
	return bc.WithTransportOptions(w.wrapDial)
}

// plainHTTPClient is the HTTP client of a Cloud Storage or Azure store at a plain-HTTP endpoint (an
// emulator, an on-premises gateway): Go's default transport, dialing connections that send request
// bodies in writes of bodyWriteSize. Stores at HTTPS endpoints keep their SDK's or Go's client (TLS
// writes records of at most 16 KiB whatever the copy).
func (w *bodyWriter) plainHTTPClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	w.wrapDial(tr)
	return &http.Client{Transport: tr}
}

// wrapDial makes tr dial bodyConns.
func (w *bodyWriter) wrapDial(tr *http.Transport) {
	dial := tr.DialContext
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &bodyConn{Conn: conn, w: w}, nil
	}
}

// bodyConn is a connection whose ReadFrom (what net/http's body copy reaches) writes bodyWriteSize
// bytes at a time.
type bodyConn struct {
	net.Conn
	w *bodyWriter
}

func (c *bodyConn) ReadFrom(r io.Reader) (int64, error) {
	bp, _ := c.w.bufs.Get().(*[]byte)
	if bp == nil {
		b := make([]byte, bodyWriteSize)
		bp = &b
	}
	defer c.w.bufs.Put(bp)
	return io.CopyBuffer(writeOnly{c.Conn}, r, *bp) // writeOnly: not the connection's own ReadFrom
}

// writeOnly hides everything but Write from io.CopyBuffer.
type writeOnly struct{ io.Writer }
