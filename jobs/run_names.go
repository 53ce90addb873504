package jobs

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"

	"github.com/hfload/hfload/pipeline"
)

// HFile names (engine.Spec.NameSeed, internal/engine/names.go). Outputs of several runs or workers end
// up side by side (one bulk-load directory, one bucket prefix), so two different loads must not name
// their files alike, while an identical rerun must produce the same names (and bytes). The seed
// (NameSeed) is the SHA-256 of the settings that shape the files (RunSpec.SettingsSeed: mapping, HFile
// options, duplicates policy, split options and the resolved split points, the cell timestamp) and of
// the content of every input: the SHA-256 the manifest records, taken from the bytes the load read
// (text inputs) or computed while they are read (Parquet: the pass the manifest needs anyway, started
// with the read). Standard input has no checksum; its runs are told apart by settings and timestamp
// only. An incremental run (state_dir) adds the previous watermark, which filters what it loads. The labels
// file counts by its content, not its path.

// nameSeedExclude are job keys that do not change the files' content: where things go, how the run
// behaves, how inputs are found (their content counts, not their paths).
var nameSeedExclude = []string{"name", "input", "out", "rejects", "max_rejects", "workers", "json", "reload", "break_lock",
	"lock_lease", "state_dir", "tmp_dir", "memory", "labels"}

// nameSeed returns RunSpec.SettingsSeed: the job's file-shaping settings, the timestamp and the split points.
func (j *Job) nameSeed(ts int64, splits [][]byte) ([]byte, error) {
	settings, err := j.Settings()
	if err != nil {
		return nil, err
	}
	for _, k := range nameSeedExclude {
		delete(settings, k)
	}
	b, err := json.Marshal(settings) // sorted keys: deterministic
	if err != nil {
		return nil, fmt.Errorf("name seed: %w", err)
	}
	h := sha256.New()
	h.Write(b)
	if j.Labels != "" { // its path is excluded; its content (the ordinals stored in visibility tags) counts
		labels, err := os.ReadFile(j.Labels)
		if err != nil {
			return nil, fmt.Errorf("%w: labels: %w", ErrConfig, err)
		}
		binary.Write(h, binary.BigEndian, uint64(len(labels)))
		h.Write(labels)
	}
	// The timestamp, then each split point's length and bytes (what binary.Write and Write gave them one
	// by one: two calls per split point, 10,000 and more for a table of that many regions), in one write.
	n := 8
	for _, s := range splits {
		n += 4 + len(s)
	}
	buf := binary.BigEndian.AppendUint64(make([]byte, 0, n), uint64(ts))
	for _, s := range splits {
		buf = binary.BigEndian.AppendUint32(buf, uint32(len(s)))
		buf = append(buf, s...)
	}
	h.Write(buf)
	return h.Sum(nil), nil
}

// startChecksums starts checksumming, in the background, the inputs the load does not digest as it
// reads them (digests[i] nil: Parquet); wait puts their checksums into digests.
func startChecksums(ctx context.Context, inputs []pipeline.Input, digests []*inputDigest) (wait func() error) {
	type result struct {
		i   int
		sum string
		err error
	}
	var todo []int
	for i, in := range inputs {
		if i < len(digests) && digests[i] == nil && in.Path != "-" {
			todo = append(todo, i)
		}
	}
	done := make(chan result, len(todo))
	go func() {
		for _, i := range todo {
			sum, err := ChecksumFile(ctx, inputs[i].Path)
			done <- result{i, sum, err}
		}
	}()
	return func() error {
		for range todo {
			r := <-done
			if r.err != nil {
				return fmt.Errorf("%w: checksum %s: %w", ErrIO, inputs[r.i].Path, r.err)
			}
			digests[r.i] = &inputDigest{sum: r.sum}
		}
		return nil
	}
}

// NameSeed is a run's HFile name seed (engine.Spec.NameSeed): the SHA-256 of the settings seed
// (RunSpec.SettingsSeed) and of every input's content checksum, in input order, in the one form the
// manifest records ("sha256:<hex>", InputFile.Checksum; "" for standard input, which has none). Every
// driver computes it from the same two: `hfload run` (local or bucket output) from the fingerprints it
// takes while reading, hfload-beam's reducers from those its map tasks report, so both name the same
// output alike.
func NameSeed(settings []byte, checksums []string) []byte {
	h := sha256.New()
	h.Write(settings)
	for _, c := range checksums {
		if c == "" {
			c = "-"
		}
		fmt.Fprintf(h, "\x00%s", c)
	}
	return h.Sum(nil)
}

// Checksums are the inputs' checksums (NameSeed's second argument).
func Checksums(inputs []InputFile) []string {
	out := make([]string, len(inputs))
	for i, in := range inputs {
		out[i] = in.Checksum
	}
	return out
}

// incrementalNameSeed is the name seed of an incremental run: it loads the planned inputs (fingerprinted
// with checksums before the read), filtered by the previous watermark prev (nil: none).
func incrementalNameSeed(settings []byte, load []InputFile, prev *Watermark) func() ([]byte, error) {
	sums := Checksums(load)
	if prev != nil {
		sums = append(sums, fmt.Sprintf("watermark:%s:%s>%s", prev.Column, prev.Type, prev.Value))
	}
	seed := NameSeed(settings, sums)
	return func() ([]byte, error) { return seed, nil }
}

func digestAt(digests []*inputDigest, i int) *inputDigest {
	if i < len(digests) {
		return digests[i]
	}
	return nil
}
