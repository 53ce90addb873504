package storage_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/hfload/hfload/internal/storage"
)

// conformance checks the Store contract on st (empty at the start). Both implementations run it: the
// local directory and the real S3 gateway.
func conformance(t *testing.T, st storage.Store) {
	ctx := context.Background()
	t.Run("put-stat-read", func(t *testing.T) {
		data := pattern(100_000, 1)
		must(t, st.Put(ctx, "p/a.csv", data, storage.PutOptions{}))
		info, err := st.Stat(ctx, "p/a.csv")
		must(t, err)
		if info.Size != int64(len(data)) || info.Key != "p/a.csv" {
			t.Fatalf("stat: %+v", info)
		}
		r, err := st.Reader(ctx, "p/a.csv", 0)
		must(t, err)
		got, err := io.ReadAll(r)
		must(t, err)
		r.Close()
		if !bytes.Equal(got, data) {
			t.Fatal("Reader: bytes differ")
		}
		r, err = st.Reader(ctx, "p/a.csv", 99_000)
		must(t, err)
		got, err = io.ReadAll(r)
		must(t, err)
		r.Close()
		if !bytes.Equal(got, data[99_000:]) {
			t.Fatalf("Reader at offset: %d bytes", len(got))
		}
		obj, err := st.Open(ctx, "p/a.csv")
		must(t, err)
		defer obj.Close()
		buf := make([]byte, 1000)
		if n, err := obj.ReadAt(buf, 5000); n != 1000 || err != nil || !bytes.Equal(buf, data[5000:6000]) {
			t.Fatalf("ReadAt: n=%d err=%v", n, err)
		}
		if n, err := obj.ReadAt(buf, int64(len(data))-10); n != 10 || err != io.EOF || !bytes.Equal(buf[:10], data[len(data)-10:]) {
			t.Fatalf("ReadAt over the end: n=%d err=%v", n, err)
		}
		if _, err := obj.ReadAt(buf, int64(len(data))); err != io.EOF {
			t.Fatalf("ReadAt at the end: %v", err)
		}
	})
	t.Run("missing", func(t *testing.T) {
		if _, err := st.Stat(ctx, "nope/x"); !errors.Is(err, storage.ErrNotExist) {
			t.Fatalf("Stat of a missing key: %v", err)
		}
		if _, err := st.Reader(ctx, "nope/x", 0); !errors.Is(err, storage.ErrNotExist) {
			t.Fatalf("Reader of a missing key: %v", err)
		}
		must(t, st.Delete(ctx, "nope/x"))
	})
	t.Run("list-glob", func(t *testing.T) {
		for _, k := range []string{"g/1.csv.gz", "g/2.csv.gz", "g/3.parquet", "g/sub/4.csv.gz", "gx/5.csv.gz"} {
			must(t, st.Put(ctx, k, []byte(k), storage.PutOptions{}))
		}
		all, err := st.List(ctx, "g/")
		must(t, err)
		if got := keys(all); got != "g/1.csv.gz g/2.csv.gz g/3.parquet g/sub/4.csv.gz" {
			t.Fatalf("List: %s", got)
		}
		m, err := storage.Glob(ctx, st, "g/*.csv.gz")
		must(t, err)
		if got := keys(m); got != "g/1.csv.gz g/2.csv.gz" {
			t.Fatalf("Glob: %s", got)
		}
		d, err := storage.ListDir(ctx, st, "g")
		must(t, err)
		if got := keys(d); got != "g/1.csv.gz g/2.csv.gz g/3.parquet" {
			t.Fatalf("ListDir: %s", got)
		}
		must(t, st.Delete(ctx, "g/2.csv.gz"))
		m, err = storage.Glob(ctx, st, "g/?.csv.gz")
		must(t, err)
		if got := keys(m); got != "g/1.csv.gz" {
			t.Fatalf("Glob after Delete: %s", got)
		}
	})
	t.Run("put-if-absent", func(t *testing.T) {
		must(t, st.Put(ctx, "lock/x", []byte("one"), storage.PutOptions{IfAbsent: true}))
		err := st.Put(ctx, "lock/x", []byte("two"), storage.PutOptions{IfAbsent: true})
		if !errors.Is(err, storage.ErrExists) {
			t.Fatalf("second Put IfAbsent: %v", err)
		}
		if got := read(t, st, "lock/x"); got != "one" {
			t.Fatalf("lock overwritten: %q", got)
		}
	})
	t.Run("upload-invisible-until-complete", func(t *testing.T) {
		data := pattern(11<<20+12345, 2) // three parts of 5 MiB
		u, err := st.Create(ctx, "out/f/hfile1")
		must(t, err)
		for b := data; len(b) > 0; {
			n := min(len(b), 1<<20+7)
			_, err := u.Write(b[:n])
			must(t, err)
			b = b[n:]
		}
		p, err := u.Finish(ctx)
		must(t, err)
		if p.Size != int64(len(data)) {
			t.Fatalf("pending size %d", p.Size)
		}
		if l, _ := st.List(ctx, "out/"); len(l) != 0 {
			t.Fatalf("an unfinished upload is listed: %s", keys(l))
		}
		if _, err := st.Stat(ctx, "out/f/hfile1"); !errors.Is(err, storage.ErrNotExist) {
			t.Fatalf("an unfinished upload is visible: %v", err)
		}
		ups, err := st.Uploads(ctx, "out/")
		must(t, err)
		if len(ups) != 1 || ups[0].Key != "out/f/hfile1" || ups[0].ID != p.ID {
			t.Fatalf("Uploads: %+v", ups)
		}
		// Complete as another process would: from the key and id alone.
		must(t, st.Complete(ctx, storage.Pending{Key: p.Key, ID: p.ID}))
		if got := read(t, st, "out/f/hfile1"); got != string(data) {
			t.Fatalf("completed object differs (%d bytes)", len(got))
		}
		must(t, st.Complete(ctx, p)) // again: done already
		if ups, _ := st.Uploads(ctx, "out/"); len(ups) != 0 {
			t.Fatalf("Uploads after Complete: %+v", ups)
		}
	})
	t.Run("upload-abort", func(t *testing.T) {
		u, err := st.Create(ctx, "ab/f/h")
		must(t, err)
		_, err = u.Write(pattern(1000, 3))
		must(t, err)
		p, err := u.Finish(ctx)
		must(t, err)
		u2, err := st.Create(ctx, "ab/f/h2")
		must(t, err)
		_, err = u2.Write([]byte("x"))
		must(t, err)
		must(t, u2.Abort(ctx))
		must(t, st.Abort(ctx, p))
		must(t, st.Abort(ctx, p)) // unknown now: not an error
		if l, _ := st.List(ctx, "ab/"); len(l) != 0 {
			t.Fatalf("aborted upload listed: %s", keys(l))
		}
		if ups, _ := st.Uploads(ctx, "ab/"); len(ups) != 0 {
			t.Fatalf("aborted upload pending: %+v", ups)
		}
	})
	t.Run("upload-small", func(t *testing.T) {
		u, err := st.Create(ctx, "small/h")
		must(t, err)
		_, err = u.Write([]byte("tiny"))
		must(t, err)
		p, err := u.Finish(ctx)
		must(t, err)
		must(t, st.Complete(ctx, p))
		if got := read(t, st, "small/h"); got != "tiny" {
			t.Fatalf("small upload: %q", got)
		}
	})
}

func pattern(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 7))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func keys(l []storage.Info) string {
	var b bytes.Buffer
	for i, o := range l {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(o.Key)
	}
	return b.String()
}

func read(t *testing.T, st storage.Store, key string) string {
	t.Helper()
	r, err := st.Reader(context.Background(), key, 0)
	must(t, err)
	defer r.Close()
	b, err := io.ReadAll(r)
	must(t, err)
	return string(b)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
