package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/hfload/hfload/internal/storage"
)

// ErrCorruptInput marks an input whose bytes end early or do not decode: a truncated .gz/.zst stream, a
// Parquet file cut short or damaged. It is an input I/O error (exit 3), not a bad row.
var ErrCorruptInput = errors.New("truncated or corrupt input")

// CorruptInputError names the input and the decoder's own complaint:
// "truncated or corrupt input orders.csv.gz (unexpected EOF)".
type CorruptInputError struct {
	Path string
	Err  error
}

func (e *CorruptInputError) Error() string {
	return fmt.Sprintf("truncated or corrupt input %s (%v)", e.Path, e.Err)
}

func (e *CorruptInputError) Unwrap() []error { return []error{ErrCorruptInput, e.Err} }

// corruptInput wraps a decoder's error as a CorruptInputError unless it is not about the bytes: end of
// input, cancellation, or an error of the underlying file or stream (kept as it is: a failing disk is
// not a corrupt file).
func corruptInput(path string, err error) error {
	var pe *fs.PathError
	var ce *CorruptInputError
	switch {
	case err == nil, err == io.EOF, errors.As(err, &ce), errors.As(err, &pe),
		errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded),
		storage.IsStorageError(err): // a bucket read that failed (after its retries) is not a corrupt file
		return err
	}
	if path == "-" {
		path = "standard input"
	}
	return &CorruptInputError{Path: path, Err: err}
}

// corruptReader turns a decompressor's read errors into CorruptInputErrors.
type corruptReader struct {
	r    io.Reader
	path string
}

func (c corruptReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if err != nil {
		err = corruptInput(c.path, err)
	}
	return n, err
}
