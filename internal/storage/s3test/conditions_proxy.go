package s3test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// ConditionStripper is an HTTP proxy in front of a real Server that behaves like an object store
// without conditional writes: it removes If-None-Match and If-Match from every request and signs the
// request again with the server's credentials (the client's signature covered those headers), so the
// gateway stores the object unconditionally. Everything else passes through unchanged.
type ConditionStripper struct {
	Endpoint string // http://127.0.0.1:PORT of the proxy
	srv      *Server
	http     *http.Server
	stripped atomic.Int64
}

// StartConditionStripper starts a ConditionStripper in front of s on a free loopback port.
func (s *Server) StartConditionStripper() (*ConditionStripper, error) {
	target, err := url.Parse(s.Endpoint)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &ConditionStripper{Endpoint: "http://" + ln.Addr().String(), srv: s}
	signer := v4.NewSigner()
	creds := aws.Credentials{AccessKeyID: s.AccessKey, SecretAccessKey: s.SecretKey}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Host = r.In.Host // the client signed the proxy's host
			if r.Out.Header.Get("If-None-Match") == "" && r.Out.Header.Get("If-Match") == "" {
				return
			}
			r.Out.Header.Del("If-None-Match")
			r.Out.Header.Del("If-Match")
			r.Out.Header.Del("Authorization")
			r.Out.Header.Del("X-Amz-Date")
			hash := r.Out.Header.Get("X-Amz-Content-Sha256")
			if err := signer.SignHTTP(context.Background(), creds, r.Out, hash, "s3", regionOf(r.In), time.Now()); err == nil {
				p.stripped.Add(1)
			}
		},
	}
	p.http = &http.Server{Handler: rp, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := p.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			_ = err // the listener failed: requests to the proxy fail and the test says so
		}
	}()
	return p, nil
}

// Stripped is how many requests had a condition removed.
func (p *ConditionStripper) Stripped() int64 { return p.stripped.Load() }

// Env is Server.Env with the proxy as the endpoint.
func (p *ConditionStripper) Env() []string {
	env := p.srv.Env()
	for i, kv := range env {
		if strings.HasPrefix(kv, "AWS_ENDPOINT_URL_S3=") {
			env[i] = "AWS_ENDPOINT_URL_S3=" + p.Endpoint
		}
	}
	return env
}

// Close stops the proxy.
func (p *ConditionStripper) Close() error { return p.http.Close() }

// regionOf reads the region from the client's credential scope
// (Authorization: AWS4-HMAC-SHA256 Credential=KEY/DATE/REGION/s3/aws4_request, …).
func regionOf(r *http.Request) string {
	auth := r.Header.Get("Authorization")
	if i := strings.Index(auth, "Credential="); i >= 0 {
		scope := strings.SplitN(auth[i+len("Credential="):], "/", 5)
		if len(scope) >= 3 {
			return scope[2]
		}
	}
	return "us-east-1"
}
