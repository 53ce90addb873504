package storage

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
)

// wrap classifies an Azure error into an *Error naming the object. Its text keeps the service's error
// code and HTTP status only (never a request, a SAS query or a key).
func (a *azureBackend) wrap(ctx context.Context, op, key string, err error) error {
	if err == nil {
		return nil
	}
	var se *Error
	if errors.As(err, &se) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	e := &Error{Op: op, URL: a.url(key), Kind: KindOther}
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		e.Err = &cleanError{msg: scrubAzure(err.Error()), cause: err}
		switch {
		case azureCredentialsProblem(err):
			e.Kind, e.Hint = KindCredentials, "no usable Microsoft Entra ID credentials ("+firstLine(scrubAzure(err.Error()))+"); set AZURE_STORAGE_CONNECTION_STRING or AZURE_STORAGE_KEY, or sign in (az login, managed identity)"
		case unreachable(err):
			e.Kind = KindUnreachable
		}
		return e
	}
	e.Err = &cleanError{msg: fmt.Sprintf("HTTP %d %s", re.StatusCode, re.ErrorCode), cause: err}
	switch {
	case bloberror.HasCode(err, bloberror.ContainerNotFound, bloberror.ContainerBeingDeleted):
		e.Kind = KindNoBucket
	case bloberror.HasCode(err, bloberror.BlobNotFound, bloberror.CannotVerifyCopySource) || re.StatusCode == http.StatusNotFound:
		e.Kind = KindNotFound
	case bloberror.HasCode(err, bloberror.BlobAlreadyExists, bloberror.ConditionNotMet) || re.StatusCode == http.StatusPreconditionFailed:
		e.Kind = KindExists
	case bloberror.HasCode(err, bloberror.AuthenticationFailed, bloberror.InvalidAuthenticationInfo, bloberror.NoAuthenticationInformation) || re.StatusCode == http.StatusUnauthorized:
		e.Kind = KindCredentials
		e.Hint = "the server rejected the credentials (" + re.ErrorCode + "; check AZURE_STORAGE_KEY, the SAS token or AZURE_STORAGE_CONNECTION_STRING)"
	case re.StatusCode == http.StatusForbidden:
		// A wrong key is AuthenticationFailed on Azure, AuthorizationFailure on Azurite (which Azure
		// also answers for a firewall or a missing role); a HEAD reply may carry no code at all.
		e.Kind = KindAccessDenied
		if re.ErrorCode == "" || strings.HasPrefix(re.ErrorCode, "Authentication") || re.ErrorCode == "AuthorizationFailure" {
			e.Kind = KindCredentials
			e.Hint = "the server refused the credentials (HTTP 403" + codeSuffix(re.ErrorCode) + "): the key, SAS token or sign-in was rejected, or may not do this; check AZURE_STORAGE_KEY / AZURE_STORAGE_CONNECTION_STRING and the account's role assignments"
		}
	case re.StatusCode >= 500:
		e.Kind = KindOther
	}
	return e
}

func codeSuffix(code string) string {
	if code == "" {
		return ""
	}
	return " " + code
}

func azureCredentialsProblem(err error) bool {
	s := err.Error()
	return strings.Contains(s, "Credential") || strings.Contains(s, "credential") || strings.Contains(s, "authentication failed")
}

// scrubAzure removes what may be a secret from an Azure message: SAS signatures, account keys and
// bearer tokens.
func scrubAzure(s string) string {
	for _, marker := range []string{"sig=", "AccountKey=", "SharedAccessSignature=", "Bearer ", "Authorization"} {
		if i := strings.Index(s, marker); i >= 0 {
			s = s[:i] + "[redacted]"
		}
	}
	return scrub(s)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
