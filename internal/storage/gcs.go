package storage

import (
	"context"
	"errors"
	"io"
	"strconv"
	"time"

	gcs "cloud.google.com/go/storage"
	"github.com/googleapis/gax-go/v2"
	"google.golang.org/api/iterator"
)

// Cloud Storage (gs://bucket/key) through Google's own client, cloud.google.com/go/storage: it is the
// module Beam's Go SDK already brings into this repository, it resumes chunked uploads and checks each
// upload's CRC32C, and it reads credentials from Application Default Credentials
// (GOOGLE_APPLICATION_CREDENTIALS, gcloud's ADC file, the metadata server) and an emulator from the
// standard STORAGE_EMULATOR_HOST. Credentials never appear in errors: they name the object and the kind.

const gcsChunkAlign = 256 << 10 // resumable upload chunks are multiples of 256 KiB

// NewGCS returns a Store over a Cloud Storage bucket. It makes no request: a missing bucket or
// rejected credentials show in the first operation's error.
func NewGCS(ctx context.Context, bucket string, opts S3Options) (Store, error) {
	opts = opts.withDefaults()
	opts.PartSize = (opts.PartSize + gcsChunkAlign - 1) / gcsChunkAlign * gcsChunkAlign
	client, err := gcs.NewClient(ctx)
	if err != nil {
		return nil, &Error{Op: "configure", URL: "gs://" + bucket, Kind: KindCredentials, Err: err, Hint: gcsCredentialsHint(err)}
	}
	b := &gcsBackend{client: client, name: bucket, opts: opts}
	b.bkt = client.Bucket(bucket).Retryer(
		gcs.WithPolicy(gcs.RetryAlways), // staged names are written once; copies and deletes are idempotent here
		gcs.WithMaxAttempts(opts.MaxAttempts),
		gcs.WithBackoff(gax.Backoff{Initial: 100 * time.Millisecond, Max: opts.MaxBackoff, Multiplier: 2}))
	return &blobStore{b: b, opts: opts}, nil
}

type gcsBackend struct {
	client *gcs.Client
	bkt    *gcs.BucketHandle
	name   string
	opts   S3Options
}

func (g *gcsBackend) url(key string) string       { return "gs://" + g.name + "/" + key }
func (g *gcsBackend) hadoopURL(key string) string { return trimSlash(g.url(key)) }
func (g *gcsBackend) uploadMemory() int64         { return g.opts.PartSize }

func (g *gcsBackend) stat(ctx context.Context, key string) (Info, error) {
	a, err := g.bkt.Object(key).Attrs(ctx)
	if err != nil {
		return Info{}, g.wrap(ctx, "stat", key, err)
	}
	return Info{Key: key, Size: a.Size, ModTime: a.Updated, ETag: strconv.FormatInt(a.Generation, 10)}, nil
}

func (g *gcsBackend) list(ctx context.Context, prefix string) ([]Info, error) {
	q := &gcs.Query{Prefix: prefix}
	if err := q.SetAttrSelection([]string{"Name", "Size", "Updated", "Generation"}); err != nil {
		return nil, err
	}
	it := g.bkt.Objects(ctx, q)
	var out []Info
	for {
		a, err := it.Next()
		if err == iterator.Done {
			return out, nil
		}
		if err != nil {
			if isGCSNotFound(err) {
				return nil, &Error{Op: "list", URL: g.url(prefix), Kind: KindNoBucket, Err: err}
			}
			return nil, g.wrap(ctx, "list", prefix, err)
		}
		out = append(out, Info{Key: a.Name, Size: a.Size, ModTime: a.Updated, ETag: strconv.FormatInt(a.Generation, 10)})
	}
}

func (g *gcsBackend) put(ctx context.Context, key string, data []byte, ifAbsent bool) error {
	o := g.bkt.Object(key)
	if ifAbsent {
		o = o.If(gcs.Conditions{DoesNotExist: true})
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := o.NewWriter(ctx)
	w.ChunkSize = 0 // one request
	if _, err := w.Write(data); err != nil {
		return g.wrap(ctx, "put", key, err)
	}
	return g.wrap(ctx, "put", key, w.Close())
}

func (g *gcsBackend) del(ctx context.Context, key string) error {
	err := g.bkt.Object(key).Delete(ctx)
	if errors.Is(err, gcs.ErrObjectNotExist) {
		return nil
	}
	return g.wrap(ctx, "delete", key, err)
}

func (g *gcsBackend) copy(ctx context.Context, src, dst string) error {
	_, err := g.bkt.Object(dst).CopierFrom(g.bkt.Object(src)).Run(ctx)
	return g.wrap(ctx, "complete", dst, err)
}

func (g *gcsBackend) get(ctx context.Context, key, version string, off, n int64) (io.ReadCloser, error) {
	o := g.bkt.Object(key)
	if version != "" {
		gen, err := strconv.ParseInt(version, 10, 64)
		if err == nil {
			o = o.Generation(gen)
		}
	}
	r, err := o.NewRangeReader(ctx, off, n)
	if err != nil {
		if version != "" && errors.Is(err, gcs.ErrObjectNotExist) {
			return nil, &Error{Op: "read", URL: g.url(key), Kind: KindNotFound, Err: errors.New("the object was replaced or deleted while it was read")}
		}
		return nil, g.wrap(ctx, "read", key, err)
	}
	return r, nil
}

// write streams a resumable upload in chunks of PartSize; the object appears when finish succeeds.
func (g *gcsBackend) write(ctx context.Context, key, name string) (blobWriter, error) {
	wctx, cancel := context.WithCancel(ctx)
	o := g.bkt.Object(key).If(gcs.Conditions{DoesNotExist: true})
	w := o.NewWriter(wctx)
	w.ChunkSize = int(g.opts.PartSize)
	w.ChunkRetryDeadline = time.Duration(g.opts.MaxAttempts) * g.opts.MaxBackoff
	return &gcsWriter{g: g, ctx: ctx, key: name, w: w, cancelFn: cancel}, nil
}

type gcsWriter struct {
	g        *gcsBackend
	ctx      context.Context
	key      string // for messages: the upload's final key
	w        *gcs.Writer
	cancelFn context.CancelFunc
}

func (w *gcsWriter) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	if err != nil {
		return n, w.g.wrap(w.ctx, "upload", w.key, err)
	}
	return n, nil
}

func (w *gcsWriter) finish() error {
	defer w.cancelFn()
	return w.g.wrap(w.ctx, "upload", w.key, w.w.Close())
}

func (w *gcsWriter) cancel() { w.cancelFn() }
