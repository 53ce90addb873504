package jobs

import (
	"context"
	"fmt"
	"strings"

	"github.com/hfload/hfload/internal/engine"
	"github.com/hfload/hfload/internal/storage"
	"github.com/hfload/hfload/partition"
)

// A distributed run (cmd/hfload-beam) into a bucket: its workers upload the HFiles to their final keys
// and leave the uploads pending (storage.Upload.Finish, never Complete); the launcher adopts them into
// the run's BucketStaging, whose Commit completes them with the manifest last, as for `hfload run`.
// The files the workers share (run files, summaries, rejects of work units) are objects under
//
//	<prefix>/.hfload-work/<run id>/
//
// BulkLoadHFilesTool.visitBulkHFiles skips a top-level directory whose name is not a legal family name
// (isLegalColumnFamilyName refuses a leading '.'; HBase's own ".tmp" relies on it), so a bulk load never
// takes them. They are removed before the commit; a killed run's are removed by the next run (recover).
const BucketWorkDir = ".hfload-work"

// WorkURL is where the run's workers share files: s3://bucket/<prefix>/.hfload-work/<run id>.
func (b *BucketStaging) WorkURL() string { return b.st.URL(b.key(BucketWorkDir + "/" + b.runID)) }

// Adopt takes uploads the run's workers finished into the commit: Commit completes them (and requires
// the manifest to list exactly the adopted and the Sink's files); Abort aborts them. Each must be a
// file of a family directory under the prefix.
func (b *BucketStaging) Adopt(ps []storage.Pending) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, p := range ps {
		rel, ok := strings.CutPrefix(p.Key, b.key(""))
		fam, name, _ := strings.Cut(rel, "/")
		if !ok || fam == "" || strings.HasPrefix(fam, ".") || name == "" || strings.Contains(name, "/") {
			return fmt.Errorf("internal error: adopted upload %s is not a family's file under %s", b.st.URL(p.Key), b.URL())
		}
		if q, dup := b.pending[p.Key]; dup && q.ID != p.ID {
			return fmt.Errorf("internal error: two uploads of %s adopted", b.st.URL(p.Key))
		}
		b.pending[p.Key] = p
	}
	return nil
}

// AbortUnadopted aborts every incomplete upload under the prefix that is not adopted: those of failed
// or duplicate attempts of the workers' tasks (a retried task uploads its files again). The lock says
// they are this run's.
func (b *BucketStaging) AbortUnadopted(ctx context.Context) error {
	ups, err := b.st.Uploads(ctx, b.key(""))
	if err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, u := range ups {
		if p, ok := b.pending[u.Key]; ok && p.ID == u.ID {
			continue
		}
		if err := b.st.Abort(ctx, u); err != nil {
			return err
		}
	}
	return nil
}

// RemoveWork removes the run's work files (WorkURL): its objects and any upload left under it.
func (b *BucketStaging) RemoveWork(ctx context.Context) error {
	return b.removeWork(ctx, b.key(BucketWorkDir+"/"+b.runID+"/"))
}

// removeKilledWork removes the work files of killed distributed runs (recover: the lock is ours).
func (b *BucketStaging) removeKilledWork(ctx context.Context) error {
	objs, err := b.st.List(ctx, b.key(BucketWorkDir+"/"))
	if err != nil {
		return err
	}
	if len(objs) == 0 {
		return nil
	}
	if err := b.removeWork(ctx, b.key(BucketWorkDir+"/")); err != nil {
		return err
	}
	b.recovered = append(b.recovered, "removed "+Count(int64(len(objs)), "work file")+" of a killed distributed run")
	return nil
}

func (b *BucketStaging) removeWork(ctx context.Context, prefix string) error {
	ups, err := b.st.Uploads(ctx, prefix)
	if err != nil {
		return err
	}
	for _, u := range ups {
		if err := b.st.Abort(ctx, u); err != nil {
			return err
		}
	}
	objs, err := b.st.List(ctx, prefix)
	if err != nil {
		return err
	}
	for _, o := range objs {
		if err := b.st.Delete(ctx, o.Key); err != nil {
			return err
		}
	}
	return nil
}

// BucketUploadOptions are the upload sizes `hfload run` uses for spec's output in a bucket (see
// bucketOptions): workers writing to the same bucket use them too.
func BucketUploadOptions(spec *RunSpec) storage.S3Options { return bucketOptions(spec.Memory) }

// WriteRegionTo is engine.WriteRegion with the HFiles written to sink (a worker's uploads).
func WriteRegionTo(ctx context.Context, spec *RunSpec, sink engine.Sink, splits partition.Splits, region, fam int,
	feed func(add func(rec []byte, seq uint64) error) error) (*LoadResult, error) {
	res, err := engine.WriteRegion(ctx, &spec.Spec, sink, splits, region, fam, feed)
	if res == nil {
		return nil, err
	}
	return &LoadResult{Result: *res}, err
}
