package beamtask

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/hfload/hfload/internal/cellrec"
	"github.com/hfload/hfload/jobs"
	"github.com/hfload/hfload/partition"
	"github.com/hfload/hfload/pipeline"
)

// Sample maps one unit's rows and returns the bottom-k sample of its row keys with their bytes (see
// partition.Sampler), offered exactly as Load offers them: once per run of records of one row within a
// batch, with the KeyValue bytes they stand for. Rejects are not written here (the map task does).
func Sample(ctx context.Context, t *Task, spec *jobs.RunSpec, unit int) ([]byte, error) {
	in, _, err := t.input(spec, unit)
	if err != nil {
		return nil, err
	}
	sm := partition.NewSampler(jobs.SplitSampleKeys, jobs.SplitSampleSeed)
	opts := spec.Pipeline
	opts.Rejects, opts.MaxRejects = nil, -1
	sink := func(cb *pipeline.CellBatch) error {
		var row []byte
		var rowBytes, rows, total int64
		for i := range cb.Records {
			r := cellrec.Row(cb.Record(i))
			if row == nil || !bytes.Equal(r, row) {
				if row != nil {
					sm.Offer(row, rowBytes)
				}
				row, rowBytes = r, 0
				rows++
			}
			rowBytes += int64(cb.Records[i].KVBytes)
			total += int64(cb.Records[i].KVBytes)
		}
		if row != nil {
			sm.Offer(row, rowBytes)
			sm.Count(rows, total)
		}
		return nil
	}
	if _, err := pipeline.Run(ctx, []pipeline.Input{in}, spec.Mapping, opts, sink); err != nil {
		return nil, fmt.Errorf("sample %s: %w", in.Path, err)
	}
	return encodeSample(sm.Sample()), nil
}

// MergeSamples merges two encoded samples into the sample of the union of their inputs. A key of the
// union's bottom-k is in the bottom-k of every part it occurs in, with that part's exact bytes, so
// offering every key of both parts to a fresh sampler gives what one sampler over all rows gives: the
// merge is associative and commutative, a combine.
func MergeSamples(a, b []byte) ([]byte, error) {
	sm := partition.NewSampler(jobs.SplitSampleKeys, jobs.SplitSampleSeed)
	for _, enc := range [][]byte{a, b} {
		keys, err := decodeSample(enc)
		if err != nil {
			return nil, err
		}
		for _, k := range keys {
			sm.Offer(k.Row, k.Bytes)
		}
	}
	return encodeSample(sm.Sample()), nil
}

// SplitsFromSample computes the run's split points from the merged sample and writes them where the
// launcher reads them (Collect); it returns them encoded for the map tasks.
func SplitsFromSample(ctx context.Context, t *Task, spec *jobs.RunSpec, enc []byte) ([]byte, error) {
	keys, err := decodeSample(enc)
	if err != nil {
		return nil, err
	}
	out := EncodeSplits(partition.SplitsFromSample(keys, spec.SplitSample))
	st, err := t.open(ctx, spec)
	if err != nil {
		return nil, err
	}
	if err := st.put(ctx, splitsFile, out); err != nil {
		return nil, err
	}
	return out, nil
}

func encodeSample(keys []partition.SampleKey) []byte {
	out := binary.AppendUvarint(nil, uint64(len(keys)))
	for _, k := range keys {
		out = binary.AppendUvarint(out, uint64(len(k.Row)))
		out = append(out, k.Row...)
		out = binary.AppendVarint(out, k.Bytes)
	}
	return out
}

var errCorrupt = errors.New("beam: corrupt encoded sample or splits")

func decodeSample(b []byte) ([]partition.SampleKey, error) {
	if len(b) == 0 {
		return nil, nil
	}
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, errCorrupt
	}
	b = b[k:]
	keys := make([]partition.SampleKey, 0, n)
	for i := uint64(0); i < n; i++ {
		l, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < l {
			return nil, errCorrupt
		}
		row := b[k : k+int(l)]
		b = b[k+int(l):]
		v, k := binary.Varint(b)
		if k <= 0 {
			return nil, errCorrupt
		}
		b = b[k:]
		keys = append(keys, partition.SampleKey{Row: row, Bytes: v})
	}
	return keys, nil
}

// EncodeSplits and DecodeSplits carry split points between stages.
func EncodeSplits(s partition.Splits) []byte {
	out := binary.AppendUvarint([]byte{1}, uint64(len(s)))
	for _, k := range s {
		out = binary.AppendUvarint(out, uint64(len(k)))
		out = append(out, k...)
	}
	return out
}

// DecodeSplits is the inverse of EncodeSplits.
func DecodeSplits(b []byte) (partition.Splits, error) {
	if len(b) == 0 || b[0] != 1 {
		return nil, errCorrupt
	}
	b = b[1:]
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, errCorrupt
	}
	b = b[k:]
	var out partition.Splits
	for i := uint64(0); i < n; i++ {
		l, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < l {
			return nil, errCorrupt
		}
		out = append(out, append([]byte(nil), b[k:k+int(l)]...))
		b = b[k+int(l):]
	}
	return out, nil
}

// writeFileAtomic writes data to path through a temporary name unique to this process and attempt.
func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("beam: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("beam: %w", err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("beam: write %s: %w", path, err)
	}
	return nil
}
