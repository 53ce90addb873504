package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"

	gcs "cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"
)

// wrap classifies a Cloud Storage error into an *Error naming the object. A 404 of an object is told
// apart from a missing bucket by asking for the bucket (on the error path only).
func (g *gcsBackend) wrap(ctx context.Context, op, key string, err error) error {
	if err == nil {
		return nil
	}
	var se *Error
	if errors.As(err, &se) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	e := &Error{Op: op, URL: g.url(key), Kind: KindOther, Err: gcsClean(err)}
	switch code := gcsCode(err); {
	case errors.Is(err, gcs.ErrBucketNotExist):
		e.Kind = KindNoBucket
	case errors.Is(err, gcs.ErrObjectNotExist) || code == http.StatusNotFound:
		e.Kind = KindNotFound
		if _, berr := g.bkt.Attrs(ctx); errors.Is(berr, gcs.ErrBucketNotExist) {
			e.Kind = KindNoBucket
		}
	case code == http.StatusPreconditionFailed:
		e.Kind = KindExists
	case code == http.StatusUnauthorized:
		e.Kind, e.Hint = KindCredentials, "the server rejected the credentials (HTTP 401; check GOOGLE_APPLICATION_CREDENTIALS or `gcloud auth application-default login`)"
	case code == http.StatusForbidden:
		e.Kind = KindAccessDenied
	case gcsCredentialsProblem(err) || gcsAuthTransport(err):
		e.Kind, e.Hint = KindCredentials, gcsCredentialsHint(err)
	case unreachable(err):
		e.Kind = KindUnreachable
	}
	return e
}

func gcsCode(err error) int {
	var ge *googleapi.Error
	if errors.As(err, &ge) {
		return ge.Code
	}
	return 0
}

func isGCSNotFound(err error) bool {
	return errors.Is(err, gcs.ErrBucketNotExist) || errors.Is(err, gcs.ErrObjectNotExist) || gcsCode(err) == http.StatusNotFound
}

// gcsClean keeps a server error's code and message (never a header or a token) and the cause for
// errors.Is/As.
func gcsClean(err error) error {
	var ge *googleapi.Error
	if errors.As(err, &ge) {
		return &cleanError{msg: fmt.Sprintf("HTTP %d: %s", ge.Code, scrub(ge.Message)), cause: err}
	}
	return &cleanError{msg: scrub(err.Error()), cause: err}
}

// gcsAuthTransport: the request failed inside the HTTP client before any network error or reply: the
// client's credentials layer (reading or signing with the key, fetching a token) refused it.
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

func gcsCredentialsProblem(err error) bool {
	s := err.Error()
	return strings.Contains(s, "credentials") || strings.Contains(s, "oauth2") || strings.Contains(s, "token")
}

// gcsCredentialsHint says where Cloud Storage credentials come from; it quotes no credential.
func gcsCredentialsHint(err error) string {
	detail := scrub(err.Error())
	if i := strings.Index(detail, "\n"); i >= 0 {
		detail = detail[:i]
	}
	return "no usable Google credentials (" + detail + "); set GOOGLE_APPLICATION_CREDENTIALS to a service account key or " +
		"workload identity file, run `gcloud auth application-default login`, or run on Google Cloud with a service account"
}
