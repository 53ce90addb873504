package jobs

import (
	"context"
	"io"
	"os"
	"path/filepath"

	"github.com/hfload/hfload/internal/storage"
)

// fingerprintRemote is Fingerprint of an object (s3://, gs://, azblob://bucket/key): its size and last-modified time,
// and with checksum, the SHA-256 of its bytes streamed once more.
func fingerprintRemote(ctx context.Context, url string, checksum bool) (InputFile, error) {
	st, key, err := remoteStore(ctx, url)
	if err != nil {
		return InputFile{}, err
	}
	info, err := st.Stat(ctx, key)
	if err != nil {
		return InputFile{}, err
	}
	in := InputFile{Path: url, Size: info.Size, MTime: info.ModTime.UTC(), ETag: info.ETag}
	if checksum {
		if in.Checksum, err = ChecksumFile(ctx, url); err != nil {
			return InputFile{}, err
		}
	}
	return in, nil
}

// openForChecksum opens a local file or streams an object.
func openForChecksum(ctx context.Context, path string) (io.ReadCloser, error) {
	if !storage.IsRemote(path) {
		return os.Open(path)
	}
	st, key, err := remoteStore(ctx, path)
	if err != nil {
		return nil, err
	}
	return st.Reader(ctx, key, 0)
}

func remoteStore(ctx context.Context, url string) (storage.Store, string, error) {
	loc, err := storage.Parse(url)
	if err != nil {
		return nil, "", err
	}
	st, err := storage.OpenBucket(ctx, loc, storage.S3Options{})
	if err != nil {
		return nil, "", err
	}
	return st, loc.Key, nil
}

// absInput is the identity state remembers an input by: the absolute path of a local file, the URL of
// an object.
func absInput(path string) (string, error) {
	if storage.IsRemote(path) {
		return path, nil
	}
	return filepath.Abs(path)
}

// validateStorage checks where things may live: inputs and out may be in a bucket (s3://, gs://, azblob://), also for an
// incremental job; state_dir, tmp_dir, rejects, splits and labels are local.
func (j *Job) validateStorage(p *problems) {
	for _, in := range j.Input {
		if storage.IsRemote(in) {
			if _, err := storage.Parse(in); err != nil {
				p.add("input: %v", err)
			}
		}
	}
	if storage.IsRemote(j.Out) {
		if _, err := storage.Parse(j.Out); err != nil {
			p.add("out: %v", err)
		}
	}
	if storage.IsRemote(j.StateDir) {
		p.add("state_dir: %s must be a local directory: the job's lock is a flock, which the kernel drops when its holder dies, "+
			"and a bucket has none (out may be in a bucket: its prefix is then locked with a conditional write as well)", j.StateDir)
	}
	for _, f := range []struct{ key, val string }{{"tmp_dir", j.TmpDir}, {"rejects", j.Rejects}, {"splits", j.Splits}, {"labels", j.Labels}} {
		if storage.IsRemote(f.val) {
			p.add("%s: %s must be a local path (spill files and these need a file system; only input and out may be in a bucket)", f.key, f.val)
		}
	}
}
