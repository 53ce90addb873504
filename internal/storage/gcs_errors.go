package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
)

// httpError turns a non-2xx reply into an *Error naming the object, from its status and the JSON
// API's error message. A 404 of an object is told apart from a missing bucket by asking for the bucket.
func (g *gcsBackend) httpError(ctx context.Context, op, key string, resp *http.Response) error {
	defer resp.Body.Close()
	var body struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	msg := strings.TrimSpace(string(data))
	if json.Unmarshal(data, &body) == nil && body.Error.Message != "" {
		msg = body.Error.Message
	}
	if len(msg) > 300 {
		msg = msg[:300] + "…"
	}
	e := &Error{Op: op, URL: g.url(key), Err: &cleanError{msg: fmt.Sprintf("HTTP %d: %s", resp.StatusCode, scrub(msg))}}
	switch resp.StatusCode {
	case http.StatusNotFound:
		e.Kind = KindNotFound
		if op == "list" || g.bucketMissing(ctx) {
			e.Kind = KindNoBucket
		}
	case http.StatusPreconditionFailed:
		e.Kind = KindExists
	case http.StatusUnauthorized:
		e.Kind, e.Hint = KindCredentials, "the server rejected the credentials (HTTP 401; check GOOGLE_APPLICATION_CREDENTIALS or `gcloud auth application-default login`)"
	case http.StatusForbidden:
		e.Kind = KindAccessDenied
	default:
		if gcsRetryStatus(resp.StatusCode) {
			e.Kind = KindUnreachable
			e.Err = &cleanError{msg: fmt.Sprintf("HTTP %d: %s; retried with backoff", resp.StatusCode, scrub(msg))}
		}
	}
	return e
}

// bucketMissing asks whether the bucket exists (on an error path only).
func (g *gcsBackend) bucketMissing(ctx context.Context) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, g.base+"/storage/v1/b/"+url.PathEscape(g.name)+"?fields=name", nil)
	if err != nil {
		return false
	}
	resp, err := g.client.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusNotFound
}

// wrap classifies a failed request (no reply) into an *Error naming the object.
func (g *gcsBackend) wrap(ctx context.Context, op, key string, err error) error {
	if err == nil {
		return nil
	}
	var se *Error
	if errors.As(err, &se) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	e := &Error{Op: op, URL: g.url(key), Kind: KindOther, Err: &cleanError{msg: scrub(err.Error()), cause: err}}
	switch {
	case gcsAuthTransport(err):
		e.Kind, e.Hint = KindCredentials, gcsCredentialsHint(err)
	case unreachable(err):
		e.Kind = KindUnreachable
	}
	return e
}

// gcsAuthTransport: the request failed inside the HTTP client before any network error or reply: the
// credentials layer (reading or signing with the key, fetching a token) refused it.
func gcsAuthTransport(err error) bool {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return false
	}
	var oe *net.OpError
	var errno syscall.Errno
	var ne net.Error
	inner := ue.Err
	return !errors.As(inner, &oe) && !errors.As(inner, &errno) && !errors.Is(inner, io.EOF) && !errors.Is(inner, io.ErrUnexpectedEOF) &&
		!(errors.As(inner, &ne) && ne.Timeout()) && !errors.Is(inner, context.Canceled) && !errors.Is(inner, context.DeadlineExceeded)
}

// gcsCredentialsHint says where Cloud Storage credentials come from; it quotes no credential.
func gcsCredentialsHint(err error) string {
	detail := firstLine(scrub(err.Error()))
	return "no usable Google credentials (" + detail + "); set GOOGLE_APPLICATION_CREDENTIALS to a service account key or " +
		"workload identity file, run `gcloud auth application-default login`, or run on Google Cloud with a service account"
}
