package beamtask

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/hfload/hfload/internal/engine"
	"github.com/hfload/hfload/internal/storage"
	"github.com/hfload/hfload/jobs"
)

// stores are a task's shared storage: the work area (Task.Work: a directory every worker mounts at the
// same path, or a bucket prefix) and, for an output in a bucket (Task.Out), that bucket's HFile keys.
// Files shared through a bucket are written on the worker's local disk first (Task.TmpDir) and
// uploaded once complete: a map task holds one upload at a time, not one per (region, family).
type stores struct {
	work    storage.Store
	prefix  string // the work area's key prefix in a bucket; "" with a local work directory
	dir     string // the local work directory; "" in a bucket
	out     storage.Store
	outKey  string // the output prefix's key in its bucket
	tmpDir  string // the worker's local scratch ("": the system's)
	buckets map[string]storage.Store
}

// open connects to the task's shared storage (a bucket's client is made here, with the upload sizes
// of `hfload run` for the job's memory budget).
func (t *Task) open(ctx context.Context, spec *jobs.RunSpec) (*stores, error) {
	s := &stores{tmpDir: t.TmpDir, buckets: map[string]storage.Store{}}
	bucket := func(loc storage.Location) (storage.Store, error) {
		id := loc.Scheme + "://" + loc.Account + "/" + loc.Bucket
		if st, ok := s.buckets[id]; ok {
			return st, nil
		}
		st, err := storage.OpenBucket(ctx, loc, jobs.BucketUploadOptions(spec))
		if err != nil {
			return nil, err
		}
		s.buckets[id] = st
		return st, nil
	}
	loc, err := storage.Parse(t.Work)
	if err != nil {
		return nil, fmt.Errorf("%w: work area: %w", jobs.ErrConfig, err)
	}
	if loc.IsRemote() {
		if s.work, err = bucket(loc); err != nil {
			return nil, err
		}
		s.prefix = strings.Trim(loc.Key, "/")
	} else {
		s.work, s.dir = storage.NewLocal(t.Work), t.Work
	}
	if t.Out != "" {
		loc, err := storage.Parse(t.Out)
		if err != nil || !loc.IsRemote() {
			return nil, fmt.Errorf("%w: output %s is not a bucket URL (%v)", jobs.ErrConfig, t.Out, err)
		}
		if s.out, err = bucket(loc); err != nil {
			return nil, err
		}
		s.outKey = strings.Trim(loc.Key, "/")
	}
	return s, nil
}

func (s *stores) key(rel string) string { return storage.JoinKey(s.prefix, rel) }

// tmpFile is the local file an attempt writes the shared file rel into before publishing it (putFile):
// next to it in a local work directory (a rename publishes it), else in the worker's scratch.
func (s *stores) tmpFile(rel, attempt string) (string, error) {
	if s.dir != "" {
		p := filepath.Join(s.dir, filepath.FromSlash(rel)) + "." + attempt + ".tmp"
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", fmt.Errorf("%w: work area: %w", jobs.ErrIO, err)
		}
		return p, nil
	}
	dir := s.tmpDir
	if dir == "" {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "hfload-"+attempt+"-"+strings.ReplaceAll(rel, "/", "-")), nil
}

// putFile publishes the complete local file tmp (from tmpFile) as the shared file rel: a rename in a
// local work directory, an upload to a bucket (after which tmp is removed). Two attempts publish the
// same bytes; the last one stays.
func (s *stores) putFile(ctx context.Context, rel, tmp string) error {
	if s.dir != "" {
		if err := os.Rename(tmp, filepath.Join(s.dir, filepath.FromSlash(rel))); err != nil {
			os.Remove(tmp)
			return fmt.Errorf("%w: work area: %w", jobs.ErrIO, err)
		}
		return nil
	}
	defer os.Remove(tmp)
	f, err := os.Open(tmp)
	if err != nil {
		return fmt.Errorf("%w: %w", jobs.ErrIO, err)
	}
	defer f.Close()
	up, err := s.work.Create(ctx, s.key(rel))
	if err != nil {
		return err
	}
	if _, err := io.Copy(up, f); err != nil {
		up.Abort(context.WithoutCancel(ctx))
		return err
	}
	p, err := up.Finish(ctx)
	if err != nil {
		up.Abort(context.WithoutCancel(ctx))
		return err
	}
	return s.work.Complete(ctx, p)
}

// put stores a small shared file (a summary, the split points) at once.
func (s *stores) put(ctx context.Context, rel string, data []byte) error {
	if s.dir != "" {
		return writeFileAtomic(filepath.Join(s.dir, filepath.FromSlash(rel)), data)
	}
	return s.work.Put(ctx, s.key(rel), data, storage.PutOptions{})
}

// reader streams the shared file rel.
func (s *stores) reader(ctx context.Context, rel string) (io.ReadCloser, error) {
	if s.dir != "" {
		return os.Open(filepath.Join(s.dir, filepath.FromSlash(rel)))
	}
	return s.work.Reader(ctx, s.key(rel), 0)
}

// readerAt streams the shared file rel from byte offset off (a ranged GET in a bucket).
func (s *stores) readerAt(ctx context.Context, rel string, off int64) (io.ReadCloser, error) {
	if s.dir == "" {
		return s.work.Reader(ctx, s.key(rel), off)
	}
	f, err := os.Open(filepath.Join(s.dir, filepath.FromSlash(rel)))
	if err != nil {
		return nil, err
	}
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// size returns the size of the shared file rel.
func (s *stores) size(ctx context.Context, rel string) (int64, error) {
	if s.dir != "" {
		fi, err := os.Stat(filepath.Join(s.dir, filepath.FromSlash(rel)))
		if err != nil {
			return 0, err
		}
		return fi.Size(), nil
	}
	info, err := s.work.Stat(ctx, s.key(rel))
	return info.Size, err
}

// get reads the small shared file rel.
func (s *stores) get(ctx context.Context, rel string) ([]byte, error) {
	r, err := s.reader(ctx, rel)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// uploadSink is the engine's Sink for HFiles in a bucket: each file is an upload to its final key,
// finished but not completed; the launcher adopts the uploads (jobs.BucketStaging.Adopt) and its
// commit completes them.
type uploadSink struct {
	st     storage.Store
	prefix string
	mu     sync.Mutex
	done   []storage.Pending
}

func (s *uploadSink) Create(ctx context.Context, family, name string, _ engine.FileOptions) (engine.File, error) {
	up, err := s.st.Create(ctx, storage.JoinKey(s.prefix, family, name))
	if err != nil {
		return nil, err
	}
	return &uploadFile{s: s, ctx: ctx, up: up}, nil
}

func (s *uploadSink) pending() []storage.Pending {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]storage.Pending(nil), s.done...)
}

type uploadFile struct {
	s   *uploadSink
	ctx context.Context
	up  storage.Upload
}

func (f *uploadFile) Write(p []byte) (int, error) { return f.up.Write(p) }

func (f *uploadFile) Close() error {
	p, err := f.up.Finish(f.ctx)
	if err != nil {
		f.up.Abort(context.WithoutCancel(f.ctx))
		return err
	}
	f.s.mu.Lock()
	f.s.done = append(f.s.done, p)
	f.s.mu.Unlock()
	return nil
}

func (f *uploadFile) Abort() { f.up.Abort(context.WithoutCancel(f.ctx)) }
