package engine

import (
	"errors"
	"fmt"

	"github.com/hfload/hfload/hfilewriter"
	"github.com/hfload/hfload/partition"
	"github.com/hfload/hfload/pipeline"
	"github.com/hfload/hfload/sorter"
)

// DuplicatePolicy says what a run does with cells whose keys are exactly equal (same row, family,
// qualifier, timestamp and type), which HBase would silently collapse.
type DuplicatePolicy string

// Duplicate policies (--duplicates).
const (
	DuplicatesError DuplicatePolicy = "error" // fail, naming the first duplicate keys and their rows (default)
	DuplicatesFirst DuplicatePolicy = "first" // keep the cell of the earliest input row
	DuplicatesLast  DuplicatePolicy = "last"  // keep the cell of the latest input row
	DuplicatesKeep  DuplicatePolicy = "keep"  // write every copy (HBase then returns one of them)
)

// ParseDuplicatePolicy validates a --duplicates value.
func ParseDuplicatePolicy(s string) (DuplicatePolicy, error) {
	switch p := DuplicatePolicy(s); p {
	case "":
		return DuplicatesError, nil
	case DuplicatesError, DuplicatesFirst, DuplicatesLast, DuplicatesKeep:
		return p, nil
	}
	return "", fmt.Errorf("unknown duplicates policy %q (want error, first, last or keep)", s)
}

// Spec is a fully resolved load: sources, mapping, split points, family settings and limits. It says
// nothing of job files, state directories or locks; where the files go is the Sink given to Load.
type Spec struct {
	Table    string // the HBase table: file names derive from it
	Inputs   []pipeline.Input
	Mapping  *pipeline.Mapping
	Pipeline pipeline.RunOptions // Workers, MaxRejects, Timestamp, Rejects (the caller's writer)

	// Splits are the region boundaries when known up front (a splits file, uniform or salt splits).
	// Nil with SplitSample == 0 means one region.
	Splits partition.Splits
	// SplitSample > 0 computes that many regions of equal bytes from the data itself.
	SplitSample int

	// Family returns the writer options of a family (compression, bloom, encoding, block size,
	// format version). Nil: HBase's defaults (hfilewriter.WriterOptions{}) for every family.
	Family func(name string) hfilewriter.WriterOptions

	Memory      int64           // hard budget of the load (bytes); default DefaultMemory
	MaxFileSize int64           // roll files at this size, at row boundaries; 0: never
	Duplicates  DuplicatePolicy // default error
	// Combine, when set, folds the values of cells with equal keys (aggregation); it replaces the
	// duplicates policy.
	Combine sorter.CombineFunc
	// CombineErr reports an error Combine could not return (long overflow, ...): it fails the run.
	CombineErr func() error
	// FoldSeqLast: a folded cell carries the seq of its last input (needed when Combine keeps the last).
	FoldSeqLast bool
	// Verify is how every written file is checked before commit (VerifyStream when empty).
	Verify VerifyMode
	// TempDir holds spill files; default: a directory inside the staging area.
	TempDir string
	// RowBoundsOnly leaves each FileResult's FirstKey and LastKey empty: the caller uses the rows of
	// the files' first and last keys only (a manifest lists those), and formatting the whole keys
	// (family, qualifier, timestamp and type) cost ~500 instructions and ~60 bytes of fresh memory a file.
	RowBoundsOnly bool
	// SourceTask is stored as BULKLOAD_SOURCE_TASK.
	SourceTask string
	// NameSeed, when set, is called once every input has been read, or by
	// WriteRegion before it writes: HFile names derive from the seed it returns and the file's table,
	// family, region and part (names.go). A caller passes what makes its run different from another:
	// settings, input checksums. A distributed driver's reducers must get the seed Load would.
	NameSeed func() ([]byte, error)
	// Progress receives progress events; nil = none. It is called from several goroutines.
	Progress func(Progress)

	// familyRecords makes Load sort one record per (row, family) even where it would sort row records
	// (rowrecords.go): the tests compare the two.
	familyRecords bool
}

// VerifyMode is how a run checks every HFile it wrote before committing it (--verify).
type VerifyMode string

// Verify modes.
const (
	// VerifyStream (the default; the empty mode means it) makes Reader.VerifyBlocks' checks on each
	// file's bytes as they are written (hfilewriter.StreamVerifier): every block's header, checksums
	// and decompression, the cells of unencoded blocks by their length fields, the data index against
	// the blocks, the trailer and the file-info totals. Nothing is read back.
	VerifyStream VerifyMode = "stream"
	// VerifyBlocks makes the same checks on each file read back from disk once it is written: it also
	// catches storage that returns other bytes than it was given, at the cost of reading every byte.
	VerifyBlocks VerifyMode = "blocks"
	// VerifyFull reads each file back and also decodes every cell: order and bloom-filter membership
	// (Reader.Verify, what `hfload hfile verify` runs). Several times the CPU of VerifyBlocks.
	VerifyFull VerifyMode = "full"
	// VerifyNone checks nothing (the writer still refuses out-of-order cells).
	VerifyNone VerifyMode = "none"
)

// ParseVerifyMode validates a --verify value ("" is VerifyStream).
func ParseVerifyMode(s string) (VerifyMode, error) {
	switch m := VerifyMode(s); m {
	case "":
		return VerifyStream, nil
	case VerifyStream, VerifyBlocks, VerifyFull, VerifyNone:
		return m, nil
	}
	return "", fmt.Errorf("unknown verify mode %q (want stream, blocks, full or none)", s)
}

// ErrDuplicates is returned (wrapped) when --duplicates error finds equal keys.
var ErrDuplicates = errors.New("duplicate cells")

// DuplicatePolicy is the policy in force: Duplicates, or DuplicatesError when it is empty.
func (spec *Spec) DuplicatePolicy() DuplicatePolicy {
	if spec.Duplicates == "" {
		return DuplicatesError
	}
	return spec.Duplicates
}

// Defaults of Spec.Memory and Spec.MaxFileSize.
const (
	DefaultMemory      = 1 << 30
	DefaultMaxFileSize = 10 << 30
)

const (
	// memoryReserve is what Load keeps outside the sorter's budget for batches in flight, reject
	// buffers and one HFile writer per worker.
	memoryReserve = 48 << 20
	// splitSampleKeys is the capacity of the row sample behind --split-sample: about 1% error on the
	// bytes of each of 8 regions, a few MiB of memory.
	splitSampleKeys = 1 << 16
)
