package storage

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// uploadPrefix starts the names of local uploads in progress: hidden files next to their final name.
// Names starting with "." are skipped by List, by hfload's input listing, and (as illegal family names
// and by Hadoop's hidden-file filters) by HBase's bulk load.
const uploadPrefix = ".hfload-upload-"

// Local is a Store over a local directory.
type Local struct {
	root string
}

// NewLocal returns a Store rooted at dir (which need not exist yet).
func NewLocal(dir string) *Local { return &Local{root: dir} }

func (l *Local) path(key string) string { return filepath.Join(l.root, filepath.FromSlash(key)) }

func (l *Local) URL(key string) string { return l.path(key) }

func (l *Local) wrap(op, key string, err error) error {
	if err == nil {
		return nil
	}
	k := KindOther
	switch {
	case errors.Is(err, fs.ErrNotExist):
		k = KindNotFound
	case errors.Is(err, fs.ErrExist):
		k = KindExists
	case errors.Is(err, fs.ErrPermission):
		k = KindAccessDenied
	}
	return &Error{Op: op, URL: l.URL(key), Kind: k, Err: err}
}

func (l *Local) Stat(ctx context.Context, key string) (Info, error) {
	st, err := os.Stat(l.path(key))
	if err != nil {
		return Info{}, l.wrap("stat", key, err)
	}
	if !st.Mode().IsRegular() {
		return Info{}, l.wrap("stat", key, fmt.Errorf("not a regular file: %w", fs.ErrNotExist))
	}
	return Info{Key: key, Size: st.Size(), ModTime: st.ModTime()}, nil
}

type localObject struct {
	*os.File
	info Info
}

func (o *localObject) Info() Info { return o.info }

func (l *Local) Open(ctx context.Context, key string) (Object, error) {
	f, err := os.Open(l.path(key))
	if err != nil {
		return nil, l.wrap("open", key, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, l.wrap("open", key, err)
	}
	return &localObject{File: f, info: Info{Key: key, Size: st.Size(), ModTime: st.ModTime()}}, nil
}

func (l *Local) Reader(ctx context.Context, key string, off int64) (io.ReadCloser, error) {
	f, err := os.Open(l.path(key))
	if err != nil {
		return nil, l.wrap("read", key, err)
	}
	if off > 0 {
		if _, err := f.Seek(off, io.SeekStart); err != nil {
			f.Close()
			return nil, l.wrap("read", key, err)
		}
	}
	return f, nil
}

// walk calls fn for every regular file under the directory part of prefix whose key starts with
// prefix, in key order.
func (l *Local) walk(prefix string, fn func(key string, d fs.DirEntry) error) error {
	dir := path.Dir(prefix)
	if strings.HasSuffix(prefix, "/") {
		dir = strings.TrimSuffix(prefix, "/")
	}
	if dir == "." {
		dir = ""
	}
	var keys []string
	entries := map[string]fs.DirEntry{}
	err := filepath.WalkDir(l.path(dir), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(l.root, p)
		if err != nil {
			return err
		}
		key := filepath.ToSlash(rel)
		if strings.HasPrefix(key, prefix) {
			keys = append(keys, key)
			entries[key] = d
		}
		return nil
	})
	if err != nil {
		return err
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := fn(k, entries[k]); err != nil {
			return err
		}
	}
	return nil
}

func (l *Local) List(ctx context.Context, prefix string) ([]Info, error) {
	var out []Info
	err := l.walk(prefix, func(key string, d fs.DirEntry) error {
		if strings.HasPrefix(path.Base(key), uploadPrefix) {
			return nil
		}
		st, err := d.Info()
		if err != nil {
			return err
		}
		out = append(out, Info{Key: key, Size: st.Size(), ModTime: st.ModTime()})
		return nil
	})
	if err != nil {
		return nil, l.wrap("list", prefix, err)
	}
	return out, nil
}

func (l *Local) Put(ctx context.Context, key string, data []byte, opts PutOptions) error {
	u, err := l.Create(ctx, key)
	if err != nil {
		return err
	}
	if _, err := u.Write(data); err != nil {
		u.Abort(ctx)
		return err
	}
	p, err := u.Finish(ctx)
	if err != nil {
		u.Abort(ctx)
		return err
	}
	if opts.IfAbsent {
		// A hard link fails if the name exists: an atomic create-if-absent.
		err := os.Link(l.uploadPath(p), l.path(key))
		os.Remove(l.uploadPath(p))
		if err != nil {
			return l.wrap("put", key, err)
		}
		return l.wrap("put", key, syncDir(filepath.Dir(l.path(key))))
	}
	return l.Complete(ctx, p)
}

func (l *Local) Delete(ctx context.Context, key string) error {
	if err := os.Remove(l.path(key)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return l.wrap("delete", key, err)
	}
	return nil
}

// uploadPath is where upload p is written: ".hfload-upload-<id>.<name>" next to the key.
func (l *Local) uploadPath(p Pending) string {
	dir, name := path.Split(p.Key)
	return l.path(dir + uploadPrefix + p.ID + "." + name)
}

func (l *Local) Create(ctx context.Context, key string) (Upload, error) {
	var b [8]byte
	_, _ = rand.Read(b[:])
	p := Pending{Key: key, ID: hex.EncodeToString(b[:])}
	tmp := l.uploadPath(p)
	if err := os.MkdirAll(filepath.Dir(tmp), 0o755); err != nil {
		return nil, l.wrap("upload", key, err)
	}
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, l.wrap("upload", key, err)
	}
	return &localUpload{l: l, f: f, p: p}, nil
}

type localUpload struct {
	l    *Local
	f    *os.File
	p    Pending
	done bool
}

func (u *localUpload) Write(b []byte) (int, error) {
	n, err := u.f.Write(b)
	u.p.Size += int64(n)
	if err != nil {
		return n, u.l.wrap("upload", u.p.Key, err)
	}
	return n, nil
}

func (u *localUpload) Finish(ctx context.Context) (Pending, error) {
	if err := u.f.Sync(); err != nil {
		return Pending{}, u.l.wrap("upload", u.p.Key, err)
	}
	if err := u.f.Close(); err != nil {
		return Pending{}, u.l.wrap("upload", u.p.Key, err)
	}
	u.done = true
	return u.p, nil
}

func (u *localUpload) Abort(ctx context.Context) error {
	if u.done {
		return nil
	}
	u.done = true
	u.f.Close()
	return u.l.Abort(ctx, u.p)
}

func (l *Local) Uploads(ctx context.Context, prefix string) ([]Pending, error) {
	var out []Pending
	// The upload file's key differs from its final key in its last element, so walk the directory
	// part of prefix and match final keys.
	dir := path.Dir(prefix)
	if strings.HasSuffix(prefix, "/") {
		dir = strings.TrimSuffix(prefix, "/")
	}
	if dir == "." {
		dir = ""
	}
	err := l.walk(dir, func(key string, d fs.DirEntry) error {
		d2, name := path.Split(key)
		if !strings.HasPrefix(name, uploadPrefix) {
			return nil
		}
		id, final, ok := strings.Cut(strings.TrimPrefix(name, uploadPrefix), ".")
		if !ok || !strings.HasPrefix(d2+final, prefix) {
			return nil
		}
		st, err := d.Info()
		if err != nil {
			return err
		}
		out = append(out, Pending{Key: d2 + final, ID: id, Size: st.Size()})
		return nil
	})
	if err != nil {
		return nil, l.wrap("list uploads", prefix, err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

func (l *Local) Complete(ctx context.Context, p Pending) error {
	final := l.path(p.Key)
	if err := os.Rename(l.uploadPath(p), final); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if _, serr := os.Stat(final); serr == nil {
				return nil // completed before
			}
		}
		return l.wrap("complete", p.Key, err)
	}
	return l.wrap("complete", p.Key, syncDir(filepath.Dir(final)))
}

func (l *Local) Abort(ctx context.Context, p Pending) error {
	if err := os.Remove(l.uploadPath(p)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return l.wrap("abort", p.Key, err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		return err
	}
	return nil
}
