package hfilewriter

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/hfload/hfload/internal/kv"
)

// AppendPartsRowHash with HashRow(row) writes AppendParts' bytes, for every bloom type and over many
// bloom chunks; a hash that is not the row's changes the ROW bloom (so the given hash is what is used).
func TestAppendPartsRowHashSameBytes(t *testing.T) {
	write := func(opts WriterOptions, hash func(row []byte) (RowHash, bool)) []byte {
		t.Helper()
		var buf bytes.Buffer
		w, err := NewWriter(&buf, opts)
		if err != nil {
			t.Fatal(err)
		}
		for r := 0; r < 3000; r++ {
			row := []byte(fmt.Sprintf("C%06d-%010d", r/20, r*7919))
			for c := 0; c < 3; c++ {
				q, v := []byte{byte('a' + c)}, []byte(fmt.Sprintf("value %d/%d", r, c))
				rh, ok := hash(row)
				if ok && c == 0 {
					err = w.AppendPartsRowHash(row, []byte("f"), q, 1700000000000, kv.TypePut, v, nil, rh)
				} else {
					err = w.AppendParts(row, []byte("f"), q, 1700000000000, kv.TypePut, v, nil)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	plain := func([]byte) (RowHash, bool) { return 0, false }
	hashed := func(row []byte) (RowHash, bool) { return HashRow(row), true }
	for _, bloom := range []BloomType{BloomRow, BloomRowCol, BloomNone} {
		opts := DefaultWriterOptions()
		opts.Bloom, opts.BloomBlockSize = bloom, 512 // many chunks
		want := write(opts, plain)
		if got := write(opts, hashed); !bytes.Equal(got, want) {
			t.Errorf("bloom %v: AppendPartsRowHash wrote %d bytes that differ from AppendParts' %d", bloom, len(got), len(want))
		}
		wrong := write(opts, func(row []byte) (RowHash, bool) { return HashRow(append([]byte("x"), row...)), true })
		if same := bytes.Equal(wrong, want); same != (bloom != BloomRow) {
			t.Errorf("bloom %v: a wrong row hash left the file the same: %v", bloom, same)
		}
	}
}
