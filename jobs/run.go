package jobs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"

	"github.com/hfload/hfload/internal/engine"
	"github.com/hfload/hfload/pipeline"
)

// RunSpec is a fully resolved load (engine.Spec) and what the job adds around it.
type RunSpec struct {
	engine.Spec
	// FingerprintInputs makes Load stat and checksum every input file (LoadResult.Inputs) while it
	// writes HFiles, once the inputs have been read: the manifest's input list without a serial pass
	// over the inputs after the load.
	FingerprintInputs bool
	// SettingsSeed: the settings that shape the files (Job.nameSeed); HFile names derive from it and,
	// with FingerprintInputs, from the inputs' checksums (run_names.go).
	SettingsSeed []byte
	// CombineAssociative: Combine (an `aggregate:` section) gives the same bytes when the cells of a key
	// are first folded in runs of consecutive input rows and the partial results folded again, so a
	// distributed driver may fold each map's cells before its shuffle. False for a sum of doubles.
	CombineAssociative bool
	// watermark is an incremental run's watermark filter (nil without one): what a distributed
	// driver's workers filter by (Watermark) and where their reports are added (AddWatermarkReport).
	watermark *watermarkFilter
}

// LoadResult is what Load wrote into the staging directory (engine.Result), with the inputs'
// fingerprints when RunSpec.FingerprintInputs asked for them.
type LoadResult struct {
	engine.Result
	Inputs []InputFile // with FingerprintInputs: every input's size, mtime and checksum
}

// The engine's types and values under the names jobs' callers know.
type (
	// DuplicatePolicy is engine.DuplicatePolicy (--duplicates).
	DuplicatePolicy = engine.DuplicatePolicy
	// VerifyMode is engine.VerifyMode (--verify).
	VerifyMode = engine.VerifyMode
	// Progress is engine.Progress.
	Progress = engine.Progress
	// FileResult is engine.FileResult, one written HFile.
	FileResult = engine.FileResult
)

// Duplicate policies and verify modes (see engine).
const (
	DuplicatesError = engine.DuplicatesError
	DuplicatesFirst = engine.DuplicatesFirst
	DuplicatesLast  = engine.DuplicatesLast
	DuplicatesKeep  = engine.DuplicatesKeep
	VerifyStream    = engine.VerifyStream
	VerifyBlocks    = engine.VerifyBlocks
	VerifyFull      = engine.VerifyFull
	VerifyNone      = engine.VerifyNone
)

// ErrDuplicates is returned (wrapped) when --duplicates error finds equal keys.
var ErrDuplicates = engine.ErrDuplicates

// ParseDuplicatePolicy validates a --duplicates value.
func ParseDuplicatePolicy(s string) (DuplicatePolicy, error) { return engine.ParseDuplicatePolicy(s) }

// ParseVerifyMode validates a --verify value ("" is VerifyStream).
func ParseVerifyMode(s string) (VerifyMode, error) { return engine.ParseVerifyMode(s) }

// Load runs the engine with its HFiles written to dir/<family>/<name> (engine.DirSink). It does not
// commit anything: see Staging.
func Load(ctx context.Context, spec *RunSpec, dir string) (*LoadResult, error) {
	return LoadTo(ctx, spec, engine.DirSink{Dir: dir})
}

// LoadTo is Load writing the HFiles to sink (e.g. a BucketStaging's uploads).
func LoadTo(ctx context.Context, spec *RunSpec, sink engine.Sink) (*LoadResult, error) {
	return loadTo(ctx, spec, sink, false)
}

// loadTo is LoadTo; with rowsOnly the files' results have no FirstKey and LastKey, only their rows
// (engine.Spec.RowBoundsOnly): what a run that builds a manifest of them needs (buildManifest).
func loadTo(ctx context.Context, spec *RunSpec, sink engine.Sink, rowsOnly bool) (*LoadResult, error) {
	es := spec.Spec
	es.RowBoundsOnly = es.RowBoundsOnly || rowsOnly
	if es.NameSeed == nil {
		seed := spec.SettingsSeed
		es.NameSeed = func() ([]byte, error) { return seed, nil }
	}
	var inputs []InputFile
	if spec.FingerprintInputs {
		digests := digestInputs(spec.Inputs)
		defer clearTees(spec.Inputs)
		// A load that fails while reading never asks for the names: its checksumming stops with it.
		sumCtx, stopSums := context.WithCancel(ctx)
		defer stopSums()
		waitChecksums := startChecksums(sumCtx, spec.Inputs, digests)
		// The names need the inputs' checksums before the first file is written: text inputs were
		// hashed as they were read, Parquet inputs since the read began (startChecksums).
		es.NameSeed = func() ([]byte, error) {
			clearTees(spec.Inputs)
			if err := waitChecksums(); err != nil {
				return nil, err
			}
			var err error
			if inputs, err = fingerprintInputs(ctx, spec.Inputs, digests); err != nil {
				return nil, err
			}
			return NameSeed(spec.SettingsSeed, Checksums(inputs)), nil
		}
	}
	res, err := engine.Load(ctx, &es, sink)
	if res == nil {
		return nil, err
	}
	return &LoadResult{Result: *res, Inputs: inputs}, err
}

// clearTees stops the checksumming of digestInputs.
func clearTees(ins []pipeline.Input) {
	for _, in := range ins {
		in.SetTee(nil)
	}
}

// fingerprintInputs stats and checksums the inputs (standard input is listed with size -1). An input
// whose digest (see digestInputs; digests may be nil) saw exactly the file's size in bytes takes its
// checksum from it; the others (Parquet, or a text input not read to its end exactly once) are read
// again and hashed.
func fingerprintInputs(ctx context.Context, inputs []pipeline.Input, digests []*inputDigest) ([]InputFile, error) {
	out := make([]InputFile, 0, len(inputs))
	for i, in := range inputs {
		if in.Path == "-" {
			out = append(out, InputFile{Path: "-", Size: -1})
			continue
		}
		fp, err := Fingerprint(ctx, in.Path, false)
		if err == nil {
			if d := digestAt(digests, i); d != nil && d.sum != "" {
				fp.Checksum = d.sum
			} else if d != nil && d.n == fp.Size {
				fp.Checksum = "sha256:" + hex.EncodeToString(digests[i].h.Sum(nil))
			} else {
				fp.Checksum, err = ChecksumFile(ctx, in.Path)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%w: fingerprint %s: %w", ErrIO, in.Path, err)
		}
		out = append(out, fp)
	}
	return out, nil
}

// inputDigest is the SHA-256 of an input's bytes as the load reads them, and how many it saw.
type inputDigest struct {
	h   hash.Hash
	n   int64
	sum string // "sha256:…" when computed apart from the load's reading (startChecksums)
}

func (d *inputDigest) Write(p []byte) (int, error) {
	d.h.Write(p)
	d.n += int64(len(p))
	return len(p), nil
}

// digestInputs makes the text files among ins checksummed as they are loaded (Input.SetTee): one pass
// over each file instead of a second read, and a checksum of exactly the bytes that were loaded.
// digests[i] is nil where input i cannot be (Parquet, standard input). The caller clears the tees.
func digestInputs(ins []pipeline.Input) []*inputDigest {
	digests := make([]*inputDigest, len(ins))
	for i, in := range ins {
		d := &inputDigest{h: sha256.New()}
		if in.SetTee(d) {
			digests[i] = d
		}
	}
	return digests
}
