package jobs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hfload/hfload/internal/engine"
	"github.com/hfload/hfload/internal/storage"
)

// Output in a bucket (--out s3://bucket/prefix). A bucket has no rename: an object becomes visible
// when its upload completes. So, as Hadoop's S3A committers do, every HFile is a multipart upload to
// its final key, its parts sent while it is written (and verified as it streams), and nothing is
// completed until the whole load is written and verified:
//
//	<prefix>/.hfload.lock          while a run writes (a conditional write, If-None-Match: *)
//	<prefix>/_hfload-commit.json   only during the commit: the uploads to complete and the manifest
//	<prefix>/<family>/<hfile>      visible once its upload is completed, in the commit
//	<prefix>/_rejects.jsonl        if rows were rejected, uploaded at the commit
//	<prefix>/_manifest.json        last: its presence means the load is complete
//
// BulkLoadHFilesTool.visitBulkHFiles lists <prefix>/ and takes only directories whose names are legal
// family names, and in them only files not starting with "_" (nor references or links): the lock,
// the commit record, the rejects and the manifest are plain objects directly under the prefix, which
// it skips. A run killed before its commit leaves only incomplete multipart uploads, which no listing
// shows; the next run aborts them. A run killed during its commit leaves the commit record, and the
// next run completes what it names and writes its manifest (rolls forward), as a local commit does.
const (
	bucketCommitName = "_hfload-commit.json"
	bucketLockName   = OutLockName
)

// BucketStaging is one run's output into a bucket prefix, holding the prefix's lock while it exists.
// Its Sink uploads files; Commit completes them and writes the manifest last; Abort discards them.
type BucketStaging struct {
	st        storage.Store
	prefix    string // key prefix, no trailing "/"
	runID     string
	recovered []string

	mu      sync.Mutex
	open    map[string]storage.Upload // by key, until Close or Abort
	pending map[string]storage.Pending
	lock    *bucketLock // the lock over the prefix: this staging's own, or an incremental job's
	ownLock bool        // taken by this staging (released by Commit and Abort)
	done    bool
}

// bucketCommit is the commit record.
type bucketCommit struct {
	RunID    string            `json:"run_id"`
	Uploads  []storage.Pending `json:"uploads"`
	Manifest json.RawMessage   `json:"manifest"`
}

// NewBucketStaging prepares a one-off run of job into its out ("s3://bucket/prefix"): it takes the
// prefix's lock (with the job's lock_lease and break_lock), recovers what a killed run left (rolls an
// interrupted commit forward, aborts incomplete uploads), and checks the prefix holds no earlier load
// (ErrOutputExists).
func NewBucketStaging(ctx context.Context, job *Job, runID string, opts storage.S3Options) (*BucketStaging, error) {
	lo, err := job.bucketLockOptions()
	if err != nil {
		return nil, err
	}
	loc, err := storage.Parse(job.Out)
	if err != nil {
		return nil, fmt.Errorf("%w: --out: %w", ErrConfig, err)
	}
	st, err := storage.OpenBucket(ctx, loc, opts)
	if err != nil {
		return nil, err
	}
	return newBucketStaging(ctx, st, strings.Trim(loc.Key, "/"), runID, nil, lo)
}

// newBucketStaging prepares a run into prefix of st. With held nil, it takes the prefix's lock first
// (with o); else held is the caller's lock that covers the prefix (an incremental job's, see bucketJob).
func newBucketStaging(ctx context.Context, st storage.Store, prefix, runID string, held *bucketLock, o lockOptions) (*BucketStaging, error) {
	b := &BucketStaging{st: st, prefix: prefix, runID: runID, open: map[string]storage.Upload{}, pending: map[string]storage.Pending{}, lock: held}
	if held == nil {
		var err error
		var notes []string
		b.lock, notes, err = takeBucketLock(ctx, st, b.key(bucketLockName), "write "+b.URL(), o)
		b.recovered = append(b.recovered, notes...)
		if err != nil {
			return nil, err
		}
		b.ownLock = true
	}
	fail := func(err error) (*BucketStaging, error) {
		b.releaseLock(context.WithoutCancel(ctx))
		return nil, err
	}
	if err := b.recover(ctx); err != nil {
		return fail(err)
	}
	objs, err := st.List(ctx, b.key(""))
	if err != nil {
		return fail(err)
	}
	for _, o := range objs {
		if o.Key != b.key(bucketLockName) {
			return fail(fmt.Errorf("%w: %s holds %s (a committed load or other objects); write to an empty prefix",
				ErrOutputExists, st.URL(b.key("")), st.URL(o.Key)))
		}
	}
	return b, nil
}

func (b *BucketStaging) key(name string) string {
	if b.prefix == "" {
		return name
	}
	return b.prefix + "/" + name
}

// URL is the output's URL.
func (b *BucketStaging) URL() string { return strings.TrimSuffix(b.st.URL(b.key("")), "/") }

// HadoopURL is the output's URL as HBase's bulk load names it: s3a:// (Hadoop's S3A file system),
// gs:// (the GCS connector), abfss://container@account.dfs.core.windows.net/ (ABFS).
func (b *BucketStaging) HadoopURL() string { return storage.HadoopURL(b.st, b.key("")) }

// Recovered says what the preparation found from a killed run and did about it.
func (b *BucketStaging) Recovered() []string { return b.recovered }

// recover rolls forward a commit a killed run left, aborts the incomplete uploads of killed runs and
// removes the work files of killed distributed runs (the lock says no live run owns them).
func (b *BucketStaging) recover(ctx context.Context) error {
	rec, err := b.readCommit(ctx)
	if err != nil {
		return err
	}
	if rec != nil {
		if err := b.finish(ctx, rec); err != nil {
			return fmt.Errorf("completing the commit of run %s: %w", rec.RunID, err)
		}
		b.recovered = append(b.recovered, fmt.Sprintf("completed the interrupted commit of run %s (%d files)", rec.RunID, len(rec.Uploads)))
	}
	ups, err := b.st.Uploads(ctx, b.key(""))
	if err != nil {
		return err
	}
	for _, u := range ups {
		if err := b.st.Abort(ctx, u); err != nil {
			return err
		}
	}
	if len(ups) > 0 {
		b.recovered = append(b.recovered, fmt.Sprintf("aborted %d incomplete uploads of a killed run", len(ups)))
	}
	return b.removeKilledWork(ctx) // a distributed run's shared files (run_distributed_bucket.go)
}

func (b *BucketStaging) readCommit(ctx context.Context) (*bucketCommit, error) {
	r, err := b.st.Reader(ctx, b.key(bucketCommitName), 0)
	if errors.Is(err, storage.ErrNotExist) && !storage.IsKind(err, storage.KindNoBucket) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var rec bucketCommit
	if err := json.NewDecoder(r).Decode(&rec); err != nil {
		return nil, fmt.Errorf("%s: %w", b.st.URL(b.key(bucketCommitName)), err)
	}
	return &rec, nil
}

// Sink is where the engine writes the HFiles: one multipart upload per file.
func (b *BucketStaging) Sink() engine.Sink { return bucketSink{b} }

type bucketSink struct{ b *BucketStaging }

// FileMemory is what one file being uploaded holds in part buffers (engine.BufferingSink): the engine
// reserves it from --memory for every file it writes at once.
func (s bucketSink) FileMemory() int64 {
	if ub, ok := s.b.st.(storage.UploadBuffering); ok {
		return ub.UploadMemory()
	}
	return 0
}

var _ engine.BufferingSink = bucketSink{}

func (s bucketSink) Create(ctx context.Context, family, name string, o engine.FileOptions) (engine.File, error) {
	key := s.b.key(path.Join(family, name))
	up, err := s.b.st.Create(ctx, key)
	if err != nil {
		return nil, err
	}
	s.b.mu.Lock()
	s.b.open[key] = up
	s.b.mu.Unlock()
	return &bucketFile{b: s.b, ctx: ctx, key: key, up: up}, nil
}

type bucketFile struct {
	b   *BucketStaging
	ctx context.Context
	key string
	up  storage.Upload
}

func (f *bucketFile) Write(p []byte) (int, error) { return f.up.Write(p) }

// Close stores the file's last part; the upload stays incomplete (invisible) until Commit.
func (f *bucketFile) Close() error {
	p, err := f.up.Finish(f.ctx)
	if err != nil {
		return err
	}
	f.b.mu.Lock()
	delete(f.b.open, f.key)
	f.b.pending[f.key] = p
	f.b.mu.Unlock()
	return nil
}

func (f *bucketFile) Abort() {
	f.up.Abort(context.WithoutCancel(f.ctx))
	f.b.mu.Lock()
	delete(f.b.open, f.key)
	f.b.mu.Unlock()
}

// Commit makes the load visible: the rejects file (if any) is uploaded, a commit record names every
// upload and holds the manifest, the uploads are completed, the manifest is written last and the
// record and lock are removed. Every file the manifest lists must have been written and closed, and
// nothing else.
func (b *BucketStaging) Commit(ctx context.Context, m *Manifest, rejects string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.open) > 0 {
		return fmt.Errorf("internal error, refusing to commit: %d files still open", len(b.open))
	}
	rec := &bucketCommit{RunID: b.runID}
	want := map[string]bool{}
	for _, f := range m.Files {
		k := b.key(f.Path)
		want[k] = true
		p, ok := b.pending[k]
		if !ok {
			return fmt.Errorf("internal error, refusing to commit: %s was not written", b.st.URL(k))
		}
		if p.Size != f.Bytes {
			return fmt.Errorf("internal error, refusing to commit: %s holds %d bytes, the manifest says %d", b.st.URL(k), p.Size, f.Bytes)
		}
		rec.Uploads = append(rec.Uploads, p)
	}
	for k := range b.pending {
		if !want[k] {
			return fmt.Errorf("internal error, refusing to commit: %s is not in the manifest", b.st.URL(k))
		}
	}
	sort.Slice(rec.Uploads, func(i, j int) bool { return rec.Uploads[i].Key < rec.Uploads[j].Key })
	if m.RunID == "" {
		m.RunID = b.runID
	}
	m.SetCommands(b.HadoopURL())
	var err error
	if rec.Manifest, err = m.Marshal(); err != nil {
		return err
	}
	if rejects != "" {
		data, err := os.ReadFile(rejects)
		if err != nil {
			return fmt.Errorf("rejects file: %w", err)
		}
		if err := b.st.Put(ctx, b.key("_rejects.jsonl"), data, storage.PutOptions{}); err != nil {
			return err
		}
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	// Still the holder, for a whole lease from here: else another run took the prefix over.
	if err := b.lock.confirm(ctx); err != nil {
		return err
	}
	if err := b.st.Put(ctx, b.key(bucketCommitName), data, storage.PutOptions{}); err != nil {
		return err
	}
	if err := b.finish(ctx, rec); err != nil {
		return err
	}
	b.pending = map[string]storage.Pending{}
	b.done = true
	b.releaseLock(ctx)
	return nil
}

// finish completes the uploads of a commit record (several at a time), writes its manifest and
// removes the record.
func (b *BucketStaging) finish(ctx context.Context, rec *bucketCommit) error {
	sem := make(chan struct{}, 8)
	errs := make(chan error, len(rec.Uploads))
	var wg sync.WaitGroup
	for _, p := range rec.Uploads {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			errs <- b.st.Complete(ctx, p)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	// The record holds the manifest compacted (json.Marshal of a RawMessage): written as Marshal
	// writes it, a rolled-forward manifest is the one an uninterrupted commit writes.
	m, err := ReadManifest(bytes.NewReader(rec.Manifest))
	if err != nil {
		return fmt.Errorf("%s: %w", b.st.URL(b.key(bucketCommitName)), err)
	}
	data, err := m.Marshal()
	if err != nil {
		return err
	}
	if err := b.st.Put(ctx, b.key(ManifestName), data, storage.PutOptions{}); err != nil {
		return err
	}
	return b.st.Delete(ctx, b.key(bucketCommitName))
}

// Abort discards the run's uploads and releases the lock; after a successful Commit it does nothing.
// Uploads it cannot abort (the store is unreachable) are aborted by the next run.
func (b *BucketStaging) Abort() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second) // an unreachable store: leave it to the next run
	defer cancel()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		return nil
	}
	b.done = true
	var errs []error
	for _, u := range b.open {
		errs = append(errs, u.Abort(ctx))
	}
	for _, p := range b.pending {
		errs = append(errs, b.st.Abort(ctx, p))
	}
	b.open, b.pending = nil, nil
	b.releaseLock(ctx)
	return errors.Join(errs...)
}

// releaseLock releases the lock if this staging took it.
func (b *BucketStaging) releaseLock(ctx context.Context) {
	if b.ownLock {
		b.lock.release(ctx)
	}
}
