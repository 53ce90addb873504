package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/hfload/hfload/internal/storage"
)

// inputRemote is where a remote input lives: its bucket's store and its key. ctx (the run's, from
// ExpandInputsContext) bounds its reads.
type inputRemote struct {
	ctx   context.Context
	store storage.Store
	key   string
}

// inputStores holds one store per bucket during an expansion, so that a run's inputs share clients
// and connections.
type inputStores map[string]storage.Store

func (s inputStores) get(ctx context.Context, loc storage.Location) (storage.Store, error) {
	id := loc.Scheme + "://" + loc.Account + "/" + loc.Bucket
	if st, ok := s[id]; ok {
		return st, nil
	}
	st, err := storage.OpenBucket(ctx, loc, storage.S3Options{})
	if err != nil {
		return nil, err
	}
	s[id] = st
	return st, nil
}

// inputAddRemote expands one remote input: an object key, a glob over keys ("*" and "?" do not cross
// "/"), or a "directory" (a prefix ending in "/", or a key that is no object but has objects below it),
// which expands like a local directory: the objects directly in it whose format is recognised, skipping
// names starting with "." or "_".
func inputAddRemote(ctx context.Context, p string, format string, stores inputStores, add func(string, int64, *inputRemote) error) error {
	loc, err := storage.Parse(p)
	if err != nil {
		return err
	}
	st, err := stores.get(ctx, loc)
	if err != nil {
		return err
	}
	url := func(key string) string {
		l := loc
		l.Key = key
		return l.String()
	}
	addObj := func(o storage.Info) error {
		return add(url(o.Key), o.Size, &inputRemote{ctx: ctx, store: st, key: o.Key})
	}
	if storage.HasMeta(loc.Key) {
		matches, err := storage.Glob(ctx, st, loc.Key)
		if err != nil {
			return err
		}
		n := 0
		for _, o := range matches {
			if strings.HasSuffix(o.Key, "/") {
				continue // a "directory" marker object
			}
			if err := addObj(o); err != nil {
				return err
			}
			n++
		}
		if n == 0 {
			return fmt.Errorf("input glob %q matches no objects", p)
		}
		return nil
	}
	if loc.Key != "" && !strings.HasSuffix(loc.Key, "/") {
		info, err := st.Stat(ctx, loc.Key)
		if err == nil {
			return addObj(info)
		}
		if !errors.Is(err, storage.ErrNotExist) || storage.IsKind(err, storage.KindNoBucket) {
			return err
		}
		// No such object: a "directory"?
		objs, lerr := storage.ListDir(ctx, st, loc.Key)
		if lerr != nil || len(objs) == 0 {
			return err
		}
	}
	objs, err := storage.ListDir(ctx, st, loc.Key)
	if err != nil {
		return err
	}
	n := 0
	for _, o := range objs {
		name := path.Base(o.Key)
		if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || strings.HasSuffix(o.Key, "/") {
			continue
		}
		if _, err := inputFormat(name, format); err != nil {
			continue
		}
		if err := addObj(o); err != nil {
			return err
		}
		n++
	}
	if n == 0 {
		return fmt.Errorf("input %s holds no csv or parquet objects", p)
	}
	return nil
}

// reader streams the object from its start (resumed with ranged GETs if the download drops).
func (r *inputRemote) reader() (io.ReadCloser, error) { return r.store.Reader(r.ctx, r.key, 0) }

// openParquet reads the object by ranges: the footer, then each row group (one request for a row group
// of at most maxCoalescedRowGroup bytes, else one per column chunk).
func (r *inputRemote) openParquet(name string, fileIndex int, opts SourceOptions) (*ParquetSource, error) {
	obj, err := r.store.Open(r.ctx, r.key)
	if err != nil {
		return nil, err
	}
	ranges := &rowGroupRanges{r: obj}
	src, err := NewParquetSource(ranges, obj.Info().Size, name, fileIndex, opts)
	if err != nil {
		obj.Close()
		return nil, err
	}
	src.closer, src.ranges, src.size = obj, ranges, obj.Info().Size
	return src, nil
}
