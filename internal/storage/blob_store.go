package storage

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
)

// Cloud Storage and Azure Blob Storage have no multipart upload that another process can list,
// complete or abort (a GCS resumable session cannot be listed; an Azure blob holding only uncommitted
// blocks can be neither listed by HBase nor deleted). So their uploads are staged objects:
//
//	<dir>/_hfload-upload.<id>.<name>   written while the file is written, complete when it is finished
//	<dir>/<name>                       made by a server-side copy in Complete, then the staged object deleted
//
// BulkLoadHFilesTool.visitBulkHFiles skips every file whose name starts with "_" (and a non-directory
// at the top of the load), so a staged object is never taken by a bulk load, whether a run is writing
// it, was killed after finishing it, or is committing. List hides staged objects (they are uploads,
// not objects); Uploads lists them, so the next run aborts (deletes) what a killed run left. A run
// killed while a file was still being written leaves nothing visible at all: an unfinished GCS
// resumable session, or uncommitted Azure blocks under the staged name, which the services discard
// after a week.
const stagedMarker = "_hfload-upload."

// blobBackend is what a cloud store does natively; blobStore builds the Store contract on it.
// Every error it returns is already an *Error naming the object (or a context error).
type blobBackend interface {
	url(key string) string
	hadoopURL(key string) string
	stat(ctx context.Context, key string) (Info, error)
	list(ctx context.Context, prefix string) ([]Info, error)
	// put stores data under key (absent: only if key is absent; match set: only if key is at version
	// match) and returns the stored version.
	put(ctx context.Context, key string, data []byte, absent bool, match string) (string, error)
	del(ctx context.Context, key, match string) error // match set: only that version; an absent key is not an error
	// write starts streaming key; the object appears when the writer's finish succeeds. Errors name
	// the object as name (the upload's final key, not the staged one).
	write(ctx context.Context, key, name string) (blobWriter, error)
	// copy makes dst a copy of src on the server.
	copy(ctx context.Context, src, dst string) error
	// get reads n bytes of key from off (n < 0: to the end), of version (Info.ETag) if set.
	get(ctx context.Context, key, version string, off, n int64) (io.ReadCloser, error)
	// uploadMemory is the most memory one writer holds.
	uploadMemory() int64
}

type blobWriter interface {
	io.Writer
	finish() error
	cancel()
}

// blobStore is a Store over a blobBackend (Cloud Storage, Azure Blob Storage).
type blobStore struct {
	b    blobBackend
	opts S3Options
}

func (s *blobStore) URL(key string) string                        { return s.b.url(key) }
func (s *blobStore) HadoopURL(key string) string                  { return s.b.hadoopURL(key) }
func (s *blobStore) UploadMemory() int64                          { return s.b.uploadMemory() }
func (s *blobStore) String() string                               { return strings.TrimSuffix(s.b.url(""), "/") }
func (s *blobStore) Delete(ctx context.Context, key string) error { return s.b.del(ctx, key, "") }

func (s *blobStore) Stat(ctx context.Context, key string) (Info, error) {
	if isStaged(key) {
		return Info{}, &Error{Op: "stat", URL: s.b.url(key), Kind: KindNotFound, Err: ErrNotExist}
	}
	return s.b.stat(ctx, key)
}

func (s *blobStore) Put(ctx context.Context, key string, data []byte, opts PutOptions) error {
	_, err := s.b.put(ctx, key, data, opts.IfAbsent, "")
	return err
}

// PutIf stores data under key only if key is absent (match "") or at version match.
func (s *blobStore) PutIf(ctx context.Context, key string, data []byte, match string) (Info, error) {
	v, err := s.b.put(ctx, key, data, match == "", match)
	if err != nil {
		return Info{}, conditionFailed(err, match)
	}
	return Info{Key: key, Size: int64(len(data)), ETag: v}, nil
}

// DeleteIf deletes key only if it is at version match.
func (s *blobStore) DeleteIf(ctx context.Context, key, match string) error {
	return absentIsDeleted(ctx, s, key, conditionFailed(s.b.del(ctx, key, match), match))
}

// List lists the objects under prefix, without staged uploads.
func (s *blobStore) List(ctx context.Context, prefix string) ([]Info, error) {
	all, err := s.b.list(ctx, prefix)
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, o := range all {
		if !isStaged(o.Key) {
			out = append(out, o)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// stagedKey is where the upload id of key is written.
func stagedKey(key, id string) string {
	dir, name := path.Split(key)
	return dir + stagedMarker + id + "." + name
}

func isStaged(key string) bool { return strings.HasPrefix(path.Base(key), stagedMarker) }

// parseStaged returns the final key and upload id of a staged key.
func parseStaged(key string) (final, id string, ok bool) {
	dir, name := path.Split(key)
	rest, ok := strings.CutPrefix(name, stagedMarker)
	if !ok {
		return "", "", false
	}
	id, name, ok = strings.Cut(rest, ".")
	if !ok || id == "" || name == "" {
		return "", "", false
	}
	return dir + name, id, true
}

func (s *blobStore) Create(ctx context.Context, key string) (Upload, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	id := hex.EncodeToString(b[:])
	w, err := s.b.write(ctx, stagedKey(key, id), key)
	if err != nil {
		return nil, err
	}
	return &blobUpload{s: s, ctx: ctx, w: w, p: Pending{Key: key, ID: id}}, nil
}

// Uploads lists the staged uploads whose final keys start with prefix.
func (s *blobStore) Uploads(ctx context.Context, prefix string) ([]Pending, error) {
	all, err := s.b.list(ctx, prefix[:strings.LastIndex(prefix, "/")+1])
	if err != nil {
		return nil, err
	}
	var out []Pending
	for _, o := range all {
		if final, id, ok := parseStaged(o.Key); ok && strings.HasPrefix(final, prefix) {
			out = append(out, Pending{Key: final, ID: id, Size: o.Size})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// Complete copies the staged object to its key on the server, then deletes the staged object. A
// staged object that is gone while the key holds an object of the upload's size was completed before.
func (s *blobStore) Complete(ctx context.Context, p Pending) error {
	src := stagedKey(p.Key, p.ID)
	if err := s.b.copy(ctx, src, p.Key); err != nil {
		if !IsKind(err, KindNotFound) {
			return err
		}
		if info, serr := s.b.stat(ctx, p.Key); serr != nil || (p.Size != 0 && info.Size != p.Size) {
			return &Error{Op: "complete", URL: s.b.url(p.Key), Kind: KindNotFound, Err: fmt.Errorf("the staged upload %s is gone: %w", s.b.url(src), ErrNotExist)}
		}
	}
	return s.b.del(ctx, src, "")
}

// Abort deletes the staged object; an unknown upload is not an error.
func (s *blobStore) Abort(ctx context.Context, p Pending) error {
	return s.b.del(ctx, stagedKey(p.Key, p.ID), "")
}

// blobUpload streams to the staged object.
type blobUpload struct {
	s     *blobStore
	ctx   context.Context
	w     blobWriter
	p     Pending
	state int // 0 writing, 1 finished, 2 aborted
}

func (u *blobUpload) Write(b []byte) (int, error) {
	if u.state != 0 {
		return 0, &Error{Op: "upload", URL: u.s.b.url(u.p.Key), Err: errors.New("write after Finish or Abort")}
	}
	n, err := u.w.Write(b)
	u.p.Size += int64(n)
	return n, err
}

func (u *blobUpload) Finish(ctx context.Context) (Pending, error) {
	if u.state != 0 {
		return Pending{}, &Error{Op: "upload", URL: u.s.b.url(u.p.Key), Err: errors.New("Finish after Finish or Abort")}
	}
	if err := u.w.finish(); err != nil {
		return Pending{}, err
	}
	u.state = 1
	return u.p, nil
}

func (u *blobUpload) Abort(ctx context.Context) error {
	if u.state == 1 || u.state == 2 {
		return nil
	}
	u.state = 2
	u.w.cancel()
	return u.s.Abort(ctx, u.p)
}

// Open pins the object's version (generation or ETag) for ranged reads.
func (s *blobStore) Open(ctx context.Context, key string) (Object, error) {
	info, err := s.Stat(ctx, key)
	if err != nil {
		return nil, err
	}
	return &blobObject{s: s, ctx: ctx, info: info}, nil
}

type blobObject struct {
	s    *blobStore
	ctx  context.Context
	info Info
}

func (o *blobObject) Info() Info   { return o.info }
func (o *blobObject) Close() error { return nil }

// ReadAt reads with one ranged GET, resumed where it stopped if the body drops.
func (o *blobObject) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("read %s: negative offset", o.s.URL(o.info.Key))
	}
	if off >= o.info.Size {
		return 0, io.EOF
	}
	want := p[:min(int64(len(p)), o.info.Size-off)]
	done, err := readFullAt(o.ctx, want, off, o.s.opener(o.ctx, o.info), o.s.dropped(o.info.Key), o.s.readRetry())
	if err == nil && done < len(p) {
		err = io.EOF
	}
	return done, err
}

// Reader streams key from off, resuming with a ranged read of the same version when the body drops.
func (s *blobStore) Reader(ctx context.Context, key string, off int64) (io.ReadCloser, error) {
	info, err := s.Stat(ctx, key)
	if err != nil {
		return nil, err
	}
	return newResumingReader(ctx, off, info.Size, s.opener(ctx, info), s.dropped(key), s.readRetry())
}

// opener reads ranges of the version of the object that info describes.
func (s *blobStore) opener(ctx context.Context, info Info) rangeOpener {
	return func(off, n int64) (io.ReadCloser, int64, error) {
		body, err := s.b.get(ctx, info.Key, info.ETag, off, n)
		return body, info.Size, err
	}
}

func (s *blobStore) dropped(key string) dropError {
	return func(off int64, err error) error {
		return &Error{Op: "read", URL: s.URL(key), Kind: KindUnreachable, Err: fmt.Errorf("download dropped at byte %d: %w", off, err)}
	}
}

func (s *blobStore) readRetry() readRetry {
	return readRetry{attempts: s.opts.MaxAttempts, maxBackoff: s.opts.MaxBackoff, retryable: func(err error) bool {
		return IsKind(err, KindUnreachable) || IsKind(err, KindOther)
	}}
}

var (
	_ Store     = (*blobStore)(nil)
	_ Versioned = (*blobStore)(nil)
)

// StagedKey is where a GCS or Azure upload's bytes are stored until Complete (for tests and
// messages).
func StagedKey(p Pending) string { return stagedKey(p.Key, p.ID) }

// cleanError shows msg and unwraps to cause.
type cleanError struct {
	msg   string
	cause error
}

func (e *cleanError) Error() string { return e.msg }
func (e *cleanError) Unwrap() error { return e.cause }

func trimSlash(s string) string {
	for len(s) > 0 && s[len(s)-1] == '/' {
		s = s[:len(s)-1]
	}
	return s
}
