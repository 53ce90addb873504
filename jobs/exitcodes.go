package jobs

import (
	"context"
	"errors"
	"io/fs"
	"os"

	"github.com/hfload/hfload/internal/storage"
	"github.com/hfload/hfload/pipeline"
)

// Sentinel errors. Functions in this package wrap them (errors.Is works), and
// ExitCode maps them to the process exit status.
var (
	// ErrConfig: the job file, a flag or --set is wrong (unknown key, bad
	// value, missing required key). Exit 1.
	ErrConfig = errors.New("configuration error")
	// ErrTooManyRejects: more bad rows than max_rejects. Exit 2.
	ErrTooManyRejects = errors.New("too many rejected rows")
	// ErrIO: reading input or writing output failed. Exit 3.
	ErrIO = errors.New("I/O error")
	// ErrLocked: another run of the same job (or into the same output
	// directory) holds the lock. Exit 4. The error text names the holder.
	ErrLocked = errors.New("locked by another run")
	// ErrInputChanged: an input that an earlier run loaded has changed
	// (size, mtime or checksum); rerun with --reload to load it again. Exit 5.
	ErrInputChanged = errors.New("input changed since it was loaded")
	// ErrOutputExists: the output directory already holds a committed load
	// or other files. Exit 1.
	ErrOutputExists = errors.New("output directory is not empty")
)

// Exit codes of hfload. A rerun with nothing new to load is a success (0);
// the command prints "nothing to do" and why.
const (
	ExitOK          = 0   // success, including an incremental run with nothing new to load
	ExitUsage       = 1   // usage or configuration error (and any unclassified failure)
	ExitRejects     = 2   // bad rows over --max-rejects
	ExitIO          = 3   // I/O error reading input or writing output
	ExitLocked      = 4   // another run holds the job's lock
	ExitChanged     = 5   // a loaded input changed; use --reload
	ExitInterrupted = 130 // cancelled (SIGINT/SIGTERM); staging removed
)

// ExitCode maps an error (possibly wrapped) to the process exit status.
func ExitCode(err error) int {
	var pathErr *fs.PathError
	var linkErr *os.LinkError
	var sysErr *os.SyscallError
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, ErrLocked):
		return ExitLocked
	case errors.Is(err, ErrInputChanged):
		return ExitChanged
	case errors.Is(err, ErrTooManyRejects):
		return ExitRejects
	case storage.IsStorageError(err):
		return ExitIO // a bucket or object could not be read or written (the message says why)
	case errors.Is(err, ErrConfig), errors.Is(err, ErrOutputExists):
		return ExitUsage
	case errors.Is(err, context.Canceled):
		return ExitInterrupted
	case errors.Is(err, ErrIO), errors.Is(err, pipeline.ErrCorruptInput), errors.As(err, &pathErr), errors.As(err, &linkErr), errors.As(err, &sysErr):
		return ExitIO
	default:
		return ExitUsage
	}
}

// classified tags an error with a sentinel kind without changing its text:
// errors.Is(err, kind) holds, and the message stays e.g.
// "job.yaml:12: unknown key ..." instead of "configuration error: job.yaml:12: ...".
type classified struct{ kind, err error }

func (e *classified) Error() string   { return e.err.Error() }
func (e *classified) Unwrap() []error { return []error{e.kind, e.err} }

func classify(kind, err error) error {
	if err == nil || errors.Is(err, kind) {
		return err
	}
	return &classified{kind: kind, err: err}
}
