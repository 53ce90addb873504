package storage

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
)

// wrap classifies an SDK error into an *Error naming the object.
func (s *S3) wrap(op, key string, err error) error {
	if err == nil {
		return nil
	}
	var se *Error
	if errors.As(err, &se) {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return &Error{Op: op, URL: s.URL(key), Kind: classify(err), Err: err}
}

func classify(err error) Kind {
	switch apiCode(err) {
	case "NoSuchBucket":
		return KindNoBucket
	case "NoSuchKey", "NotFound":
		return KindNotFound
	case "AccessDenied", "Forbidden", "AllAccessDisabled", "AccountProblem":
		return KindAccessDenied
	case "InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken", "InvalidToken", "TokenRefreshRequired", "InvalidSecurity", "XAdminUserNotFound", "InvalidClientTokenId", "UnrecognizedClientException":
		return KindCredentials
	case "PreconditionFailed":
		return KindExists
	}
	switch httpStatus(err) {
	case 404:
		return KindNotFound
	case 403:
		return KindAccessDenied
	case 412:
		return KindExists
	}
	if credentialsMissing(err) {
		return KindCredentials
	}
	if unreachable(err) {
		return KindUnreachable
	}
	return KindOther
}

func apiCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

func httpStatus(err error) int {
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

// credentialsMissing: the SDK found no credentials in any source of its chain.
func credentialsMissing(err error) bool {
	s := err.Error()
	return strings.Contains(s, "get credentials") || strings.Contains(s, "retrieve credentials") ||
		strings.Contains(s, "refresh cached credentials") || strings.Contains(s, "static credentials are empty")
}

func unreachable(err error) bool {
	var ne net.Error
	var oe *net.OpError
	return errors.As(err, &oe) || errors.As(err, &ne) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.EPIPE) ||
		strings.Contains(err.Error(), "connection reset") || strings.Contains(err.Error(), "EOF")
}

// retryable reports whether a failed read may succeed if tried again (a dropped connection or a
// server error), as opposed to a missing object or a refusal.
func retryable(err error) bool {
	if IsKind(err, KindChanged) {
		return false
	}
	switch classify(err) {
	case KindUnreachable:
		return true
	case KindOther:
		return httpStatus(err) >= 500 || httpStatus(err) == 0
	}
	return false
}

func credentialsMessage(err error) string {
	if credentialsMissing(err) && apiCode(err) == "" {
		return "no credentials found (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE, or run with an instance or container role)"
	}
	if c := apiCode(err); c != "" {
		return "the server rejected the credentials (" + c + "; check AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY or the profile)"
	}
	return "the AWS configuration could not be loaded: " + scrub(err.Error())
}

func unreachableDetail(err error) string {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Addr != nil {
		return oe.Op + " " + oe.Addr.String() + ": " + scrub(oe.Err.Error())
	}
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 && i+2 < len(s) {
		s = s[i+2:]
	}
	return scrub(s) + "; retried with backoff"
}

// scrub removes anything that looks like a credential from a message: "Credential=AKIA…/…" scopes,
// signatures and session tokens. SDK errors hold none of them, but a server's message might echo a
// header.
func scrub(s string) string {
	for _, marker := range []string{"Credential=", "Signature=", "X-Amz-Security-Token", "X-Amz-Signature", "x-amz-security-token", "AWS4-HMAC-SHA256"} {
		if i := strings.Index(s, marker); i >= 0 {
			s = s[:i] + "[redacted]"
		}
	}
	return s
}
