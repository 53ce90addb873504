package storage

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"net"
	"testing"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
)

// countingConn counts the writes to a connection.
type countingConn struct {
	net.Conn
	writes int
}

func (c *countingConn) Write(p []byte) (int, error) {
	c.writes++
	return c.Conn.Write(p)
}

// TestBodyConnWrites: a request body as net/http sends it (a LimitReader over the part) goes over a
// real loopback connection in writes of bodyWriteSize, byte for byte; and the S3 store's HTTP client
// dials such connections.
func TestBodyConnWrites(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan []byte, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- nil
			return
		}
		defer c.Close()
		b, _ := io.ReadAll(c)
		got <- b
	}()

	part := make([]byte, 5<<20+123)
	rand.NewChaCha8([32]byte{1}).Read(part)
	bw := &bodyWriter{}
	tr := bw.httpClient(awshttp.NewBuildableClient()).(*awshttp.BuildableClient).GetTransport()
	conn, err := tr.DialContext(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	bc, ok := conn.(*bodyConn)
	if !ok {
		t.Fatalf("the S3 client's transport dials %T, not a *bodyConn", conn)
	}
	cc := &countingConn{Conn: bc.Conn}
	bc.Conn = cc
	n, err := bc.ReadFrom(io.LimitReader(bytes.NewReader(part), int64(len(part))))
	if err != nil || n != int64(len(part)) {
		t.Fatalf("ReadFrom: %d of %d bytes, %v", n, len(part), err)
	}
	conn.Close()
	if want := (len(part) + bodyWriteSize - 1) / bodyWriteSize; cc.writes != want {
		t.Errorf("%d writes for a %d-byte body, want %d of at most %d bytes", cc.writes, len(part), want, bodyWriteSize)
	}
	if b := <-got; !bytes.Equal(b, part) {
		t.Fatalf("the server received %d bytes, not the %d sent", len(b), len(part))
	}

	st, err := NewS3(context.Background(), "b", S3Options{})
	if err != nil {
		t.Fatal(err)
	}
	bcl, ok := st.client.Options().HTTPClient.(*awshttp.BuildableClient)
	if !ok {
		t.Fatalf("the S3 client's HTTP client is a %T", st.client.Options().HTTPClient)
	}
	conn, err = bcl.GetTransport().DialContext(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, ok := conn.(*bodyConn); !ok {
		t.Fatalf("NewS3's client dials %T, not a *bodyConn", conn)
	}
}
