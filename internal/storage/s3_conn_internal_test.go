package storage

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
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

// TestPlainHTTPClients: Cloud Storage and Azure stores at a plain-HTTP endpoint (an emulator) send
// their uploads through connections that write bodies in bodyWriteSize (the upload paths themselves
// run against fake-gcs-server and Azurite in the conformance tests); HTTPS endpoints keep their
// SDK's or Go's client.
func TestPlainHTTPClients(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	dialsBodyConn := func(name string, c *http.Client) {
		t.Helper()
		tr, ok := c.Transport.(*http.Transport)
		if !ok {
			t.Fatalf("%s: transport %T", name, c.Transport)
		}
		conn, err := tr.DialContext(context.Background(), "tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, ok := conn.(*bodyConn); !ok {
			t.Fatalf("%s dials %T, not a *bodyConn", name, conn)
		}
	}

	t.Setenv("STORAGE_EMULATOR_HOST", ln.Addr().String())
	st, err := NewGCS(context.Background(), "b", S3Options{})
	if err != nil {
		t.Fatal(err)
	}
	dialsBodyConn("the Cloud Storage emulator client", st.(*blobStore).b.(*gcsBackend).client)

	azurite := "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=a2V5;BlobEndpoint=http://" +
		ln.Addr().String() + "/devstoreaccount1;"
	t.Setenv("AZURE_STORAGE_CONNECTION_STRING", azurite)
	st, err = NewAzure(context.Background(), "", "c", S3Options{})
	if err != nil {
		t.Fatal(err)
	}
	plain := st.(*blobStore).b.(*azureBackend).plain
	if plain == nil {
		t.Fatal("an Azure store at an http:// blob endpoint uses the SDK's client")
	}
	dialsBodyConn("the Azure client at an http:// endpoint", plain)

	for cs, want := range map[string]bool{
		azurite: true,
		"DefaultEndpointsProtocol=http;AccountName=a;AccountKey=a2V5":                                     true,
		"DefaultEndpointsProtocol=https;AccountName=a;AccountKey=a2V5;EndpointSuffix=core.windows.net":    false,
		"DefaultEndpointsProtocol=http;AccountName=a;AccountKey=a2V5;BlobEndpoint=https://a.example.com/": false,
		"AccountName=a;AccountKey=a2V5;BlobEndpoint=HTTP://127.0.0.1:10000/a":                             true,
	} {
		if got := azurePlainHTTP(cs); got != want {
			t.Errorf("azurePlainHTTP(%q) = %v", cs, got)
		}
	}
	t.Setenv("AZURE_STORAGE_CONNECTION_STRING", "DefaultEndpointsProtocol=https;AccountName=a;AccountKey=a2V5;EndpointSuffix=core.windows.net")
	if st, err = NewAzure(context.Background(), "", "c", S3Options{}); err != nil || st.(*blobStore).b.(*azureBackend).plain != nil {
		t.Fatalf("an Azure store at an https:// endpoint: %v", err)
	}
}
