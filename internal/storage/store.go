package storage

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"time"
)

// Store is a bucket or a local directory. Keys are slash-separated and relative to the store's root.
// Every method is safe for concurrent use.
type Store interface {
	// URL names key for messages: "s3://bucket/key" or a local path. It never holds credentials.
	URL(key string) string
	// Stat returns the size and version of key; ErrNotExist (errors.Is) if it is absent.
	Stat(ctx context.Context, key string) (Info, error)
	// Open opens key for ranged reads (Parquet footers, then row groups). The object's version is
	// pinned at Open: if it is replaced meanwhile, reads fail instead of mixing two versions.
	// ctx bounds every read of the returned Object.
	Open(ctx context.Context, key string) (Object, error)
	// Reader streams key from byte offset off. A download that drops is resumed where it stopped
	// (with a ranged GET of the same version), so a long sequential read survives transient errors.
	Reader(ctx context.Context, key string, off int64) (io.ReadCloser, error)
	// List returns every object whose key starts with prefix, sorted by key. Uploads that are not
	// complete are not objects.
	List(ctx context.Context, prefix string) ([]Info, error)
	// Put stores data under key at once. With opts.IfAbsent it fails with ErrExists when key exists
	// (S3: If-None-Match: *), atomically.
	Put(ctx context.Context, key string, data []byte, opts PutOptions) error
	// Delete removes key; deleting an absent key is not an error.
	Delete(ctx context.Context, key string) error
	// Create starts an upload to key. Its bytes are stored as they are written; nothing is visible
	// under key until Complete.
	Create(ctx context.Context, key string) (Upload, error)
	// Uploads lists the incomplete uploads whose keys start with prefix (left by this run or by a
	// killed one), sorted by key.
	Uploads(ctx context.Context, prefix string) ([]Pending, error)
	// Complete makes a finished upload visible under its key. Completing an upload that was
	// completed already is not an error when the object is there.
	Complete(ctx context.Context, p Pending) error
	// Abort discards an upload and what it stored. Aborting an unknown upload is not an error.
	Abort(ctx context.Context, p Pending) error
}

// Upload is an object being written. Write sends the bytes (S3: in parts, while later bytes are
// still being written); Finish stores the rest and returns what Complete needs. Call Abort instead of
// Finish to give up (safe after Finish fails; a no-op after Finish succeeds).
type Upload interface {
	io.Writer
	Finish(ctx context.Context) (Pending, error)
	Abort(ctx context.Context) error
}

// Pending is an upload whose bytes are stored but which is not visible yet. It is plain data, so a
// commit record can hold it and another process can complete or abort it.
type Pending struct {
	Key   string `json:"key"`
	ID    string `json:"upload_id"`
	Size  int64  `json:"size,omitempty"`
	Parts []Part `json:"parts,omitempty"` // S3: from Finish; listed again from the server when empty
	// CRC32 says the S3 upload was created with a full-object CRC32 (s3_checksum.go): completing it
	// sends every part's CRC32 and the object's.
	CRC32 bool `json:"crc32,omitempty"`
}

// Part is one stored part of an S3 multipart upload.
type Part struct {
	Number int32  `json:"n"`
	ETag   string `json:"etag"`
	Size   int64  `json:"size,omitempty"`
	CRC32  string `json:"crc32,omitempty"` // as S3 writes it (base64 of the 4 bytes); see s3_checksum.go
}

// Info describes an object.
type Info struct {
	Key     string
	Size    int64
	ModTime time.Time
	ETag    string // S3 entity tag (quotes removed); local: empty
}

// Object is an open object read by ranges.
type Object interface {
	io.ReaderAt
	io.Closer
	Info() Info
}

// PutOptions modify Put.
type PutOptions struct {
	// IfAbsent makes Put fail with ErrExists if the key exists.
	IfAbsent bool
}

var (
	// ErrNotExist: the object (or bucket) does not exist. It is fs.ErrNotExist.
	ErrNotExist = fs.ErrNotExist
	// ErrExists: Put with IfAbsent found the key taken. It is fs.ErrExist.
	ErrExists = fs.ErrExist
)

// Error is a failed storage operation. Its message names the object and says what went wrong in words
// (bucket missing, access denied, credentials rejected, endpoint unreachable, …); it never holds a
// credential or a signed request.
type Error struct {
	Op   string // "read", "list", "upload", …
	URL  string // the object or prefix
	Kind Kind
	Err  error // the underlying error (errors.Is/As reach it)
	// Hint, when set, replaces the kind's default advice for KindCredentials (which names the AWS
	// variables): the GCS and Azure stores say where their credentials come from.
	Hint string
}

// Kind classifies storage errors.
type Kind int

const (
	KindOther        Kind = iota
	KindNotFound          // no such object
	KindNoBucket          // no such bucket
	KindAccessDenied      // the credentials may not do this
	KindCredentials       // no credentials found, or the server rejected them
	KindUnreachable       // the endpoint cannot be reached, or dropped the connection and retries ran out
	KindExists            // Put with IfAbsent: the key exists
	// KindNoConditionalWrites: the store accepted a second Put with IfAbsent of an existing key, so it
	// ignores If-None-Match and cannot hold a lock.
	KindNoConditionalWrites
	// KindChanged: a conditional write (Versioned) found the object at another version, or gone.
	KindChanged
)

func (e *Error) Error() string {
	msg := e.Op + " " + e.URL + ": "
	switch e.Kind {
	case KindNoBucket:
		return msg + "the bucket does not exist"
	case KindAccessDenied:
		return msg + "access denied (the credentials in use may not do this; check the bucket policy or the profile)"
	case KindCredentials:
		if e.Hint != "" {
			return msg + e.Hint
		}
		return msg + credentialsMessage(e.Err)
	case KindUnreachable:
		return msg + "cannot reach the storage endpoint (" + unreachableDetail(e.Err) + ")"
	case KindNotFound:
		return msg + "no such object"
	case KindExists:
		return msg + "the object exists already"
	case KindChanged:
		if errors.Is(e.Err, errReadChanged) {
			return msg + errReadChanged.Error()
		}
		return msg + ErrChanged.Error()
	case KindNoConditionalWrites:
		return msg + "the object store does not honour conditional writes (If-None-Match: *; probed with a second create of this object), " +
			"so hfload cannot lock the output; use a store that honours them (AWS S3 since August 2024, MinIO, Ceph RGW, Versity) or a local directory"
	}
	return msg + scrub(e.Err.Error())
}

func (e *Error) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrNotExist) and errors.Is(err, ErrExists) work whatever the underlying
// error.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrNotExist:
		return e.Kind == KindNotFound || e.Kind == KindNoBucket
	case ErrExists:
		return e.Kind == KindExists
	case ErrChanged:
		return e.Kind == KindChanged
	}
	return false
}

// IsStorageError reports whether err comes from a Store (an I/O failure, exit 3 in hfload).
func IsStorageError(err error) bool {
	var e *Error
	return errors.As(err, &e)
}
