package storage

import (
	"context"
	"errors"
)

// Versioned is a store that writes and deletes an object only while it holds the version the caller
// expects (a compare-and-swap on the server), and says which version it wrote: S3 (If-None-Match /
// If-Match on PutObject, If-Match on DeleteObject), Cloud Storage (ifGenerationMatch) and Azure Blob
// Storage (If-None-Match / If-Match). A lock with a lease is built on it (jobs: the holder renews its
// own version, a taker replaces only the exact stale version it read, so two takers cannot both win).
// A local directory is not Versioned: its locks are flocks.
type Versioned interface {
	// PutIf stores data under key only if key holds version match (Info.ETag as Stat reports it), or,
	// with match "", only if key is absent; it returns the stored object's Info (ETag: its version).
	// It fails with ErrExists (match "") or ErrChanged (key holds another version, or is gone).
	PutIf(ctx context.Context, key string, data []byte, match string) (Info, error)
	// DeleteIf deletes key only if it holds version match: ErrChanged if it holds another one. An
	// absent key is not an error.
	DeleteIf(ctx context.Context, key, match string) error
}

// ErrChanged: a conditional write or delete found the object replaced by another version (or gone).
var ErrChanged = errors.New("the object was replaced or removed by another writer")

// errReadChanged: a read pinned to a version (Open, Reader) found the object replaced or deleted.
var errReadChanged = errors.New("the object was replaced or deleted while it was read")

// readChanged is the error of a read of key whose version is gone.
func readChanged(url string) error {
	return &Error{Op: "read", URL: url, Kind: KindChanged, Err: errReadChanged}
}

// conditionFailed makes a failed conditional write with match set report KindChanged: a store says
// "precondition failed" (KindExists here) or "no such object" when the version is not there.
func conditionFailed(err error, match string) error {
	var e *Error
	if match == "" || !errors.As(err, &e) {
		return err
	}
	if e.Kind == KindExists || e.Kind == KindNotFound {
		e.Kind = KindChanged
	}
	return err
}

// absentIsDeleted settles a refused conditional delete: a key that is absent now needs no delete (a
// store may refuse If-Match on an absent key instead of saying it is not there).
func absentIsDeleted(ctx context.Context, st Store, key string, err error) error {
	if !IsKind(err, KindChanged) {
		return err
	}
	if _, serr := st.Stat(ctx, key); IsKind(serr, KindNotFound) {
		return nil
	}
	return err
}
