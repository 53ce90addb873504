package jobs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestNameSeedLabelsContent (issue 23 item 8): the labels file counts by its content (the ordinals go into
// visibility tags), not by its path.
func TestNameSeedLabelsContent(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	os.WriteFile(in, []byte("id,name,amount\nk1,a,1\n"), 0o644)
	seed := func(name, labels string) []byte {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(labels), 0o644); err != nil {
			t.Fatal(err)
		}
		job := baseJob(in, filepath.Join(dir, "out"))
		job.Labels = p
		spec, err := job.PrepareContext(context.Background(), time.Unix(0, 0))
		if err != nil {
			t.Fatal(err)
		}
		return spec.SettingsSeed
	}
	a := seed("a", "secret=3\n")
	if b := seed("b", "secret=3\n"); !bytes.Equal(a, b) {
		t.Error("the same labels under another path: another seed")
	}
	if c := seed("c", "secret=4\n"); bytes.Equal(a, c) {
		t.Error("other label ordinals: the same seed")
	}
}

// nameSeed hashes the timestamp and the split points as binary.Write and Write did one by one (the
// seed names every HFile: it must not change): no split points, empty and long ones, 10,000.
func TestNameSeedSplitsBytes(t *testing.T) {
	job := &Job{Input: StringList{"in.csv"}, Columns: "HBASE_ROW_KEY,d:v", Timestamp: 1700000000000}
	many := make([][]byte, 10000)
	for i := range many {
		many[i] = []byte{byte(i), byte(i >> 8), 'k'}
	}
	for _, splits := range [][][]byte{nil, {{}}, {[]byte("a"), {}, bytes.Repeat([]byte{0xff}, 70000)}, many} {
		for _, ts := range []int64{0, -1, 1700000000000} {
			got, err := job.nameSeed(ts, splits)
			if err != nil {
				t.Fatal(err)
			}
			// The old code: settings without the excluded keys, then the fields one write at a time.
			settings, err := job.Settings()
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range nameSeedExclude {
				delete(settings, k)
			}
			b, err := json.Marshal(settings)
			if err != nil {
				t.Fatal(err)
			}
			h := sha256.New()
			h.Write(b)
			binary.Write(h, binary.BigEndian, ts)
			for _, s := range splits {
				binary.Write(h, binary.BigEndian, uint32(len(s)))
				h.Write(s)
			}
			if want := h.Sum(nil); !bytes.Equal(got, want) {
				t.Fatalf("%d split points, ts %d: seed %x, want %x", len(splits), ts, got, want)
			}
		}
	}
}
