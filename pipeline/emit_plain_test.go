package pipeline

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"
)

// TestPlainMappingMatchesGeneral maps random text batches with random plain mappings twice, through the
// plain path (Mapping.plain) and through the general one, and requires the same records, bytes, counts
// and rejects. The mappings vary what the plain path decides on its own: families and qualifier order,
// on_null, skip_empty, columns past the end of the rows, NULL and empty fields, key columns that are also
// cells or trimmed, composite and hashed keys, and the batches mapped in one loop (mapPlainRows).
func TestPlainMappingMatchesGeneral(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	plainSeen, oneSeen := 0, 0 // mappings, and those whose rows are one record each (Mapping.plainOne)
	fieldsSeen := 0            // ... and those whose every field is in reach (appendPlainFields)
	directSeen := 0            // mappings whose key is its field in the batch (Mapper.keyDirect)
	batchSeen := 0             // ... and whose batches were mapped by mapPlainRows
	for iter := 0; iter < 1000; iter++ {
		cfg, width := randomPlainConfig(rng)
		m, err := Compile(cfg)
		if err != nil {
			t.Fatalf("mapping %d: %v\n%+v", iter, err, cfg)
		}
		if m.plain == nil {
			t.Fatalf("mapping %d is not plain: %+v", iter, cfg)
		}
		plainSeen++
		if m.plainOne {
			oneSeen++
		}
		rows := make([][]string, 1+rng.Intn(60))
		for i := range rows {
			rows[i] = make([]string, width)
			for j := range rows[i] {
				switch rng.Intn(6) {
				case 0:
					rows[i][j] = NUL
				case 1:
					rows[i][j] = ""
				case 2:
					rows[i][j] = " " + fmt.Sprint(rng.Intn(100)) + " "
				case 3:
					if rng.Intn(4) == 0 { // a value length of two bytes, or just one
						rows[i][j] = strings.Repeat("w", 120+rng.Intn(20))
						break
					}
					if rng.Intn(4) == 0 { // not UTF-8: refused as a key of type string
						rows[i][j] = "\xffz"
						break
					}
					if rng.Intn(3) == 0 { // copied a word at a time (plainShort): 2, 4 or 8 words, or more
						rows[i][j] = strings.Repeat(string(rune('a'+rng.Intn(26))), 9+rng.Intn(64))
						break
					}
					rows[i][j] = fmt.Sprintf("v%d", rng.Intn(1000))
				default:
					rows[i][j] = fmt.Sprintf("v%d", rng.Intn(1000))
				}
			}
		}
		b := textBatch("t.csv", 1, int64(rng.Intn(1000)), rows)
		var outs [2]CellBatch
		var mps [2]*Mapper
		for k := range outs {
			mps[k] = m.NewMapper()
			mps[k].general = k == 1
			mps[k].JobTimestamp = 1700000000000
			// Both start from the same non-empty batch: records are appended.
			outs[k].Buf = append(outs[k].Buf, "xyz"...)
			if err := mps[k].mapBatch(b, nil, &outs[k]); err != nil {
				t.Fatalf("mapping %d, path %d: %v", iter, k, err)
			}
		}
		if !bytes.Equal(outs[0].Buf, outs[1].Buf) || !slices.Equal(outs[0].Records, outs[1].Records) {
			t.Fatalf("mapping %d (%+v): plain and general records differ:\n plain   %v\n general %v", iter, cfg,
				outs[0].Records, outs[1].Records)
		}
		if mps[0].plainAt != nil && mps[0].plainMax < width {
			fieldsSeen++
		}
		if mps[0].keyDirect {
			directSeen++
		}
		if mps[0].plainBatch(b, b.NumCols) {
			batchSeen++
		}
		if mps[0].counts != mps[1].counts {
			t.Fatalf("mapping %d: counts differ: plain %+v, general %+v", iter, mps[0].counts, mps[1].counts)
		}
		r0, r1 := &mps[0].rejects, &mps[1].rejects
		if r0.n != r1.n || r0.first != r1.first || !bytes.Equal(r0.lines, r1.lines) {
			t.Fatalf("mapping %d: rejects differ: plain %d %q, general %d %q", iter, r0.n, r0.first, r1.n, r1.first)
		}
	}
	if plainSeen == 0 || oneSeen < 20 || fieldsSeen < 20 || directSeen < 20 || batchSeen < 20 {
		t.Fatalf("%d plain mappings were generated, %d of one record per row, %d of them through appendPlainFields, %d with the key field taken directly, %d mapped by mapPlainRows",
			plainSeen, oneSeen, fieldsSeen, directSeen, batchSeen)
	}
}

// randomPlainConfig returns a mapping whose cells are all plain, and the width of the rows to map it
// with (columns at or past it are absent).
func randomPlainConfig(rng *rand.Rand) (*MappingConfig, int) {
	ncols := 2 + rng.Intn(7)
	cfg := &MappingConfig{ImportTsv: rng.Intn(2) == 0}
	width := ncols
	if cfg.ImportTsv {
		width -= rng.Intn(3) // ImportTsv rows may lack the last columns
	}
	fams := []string{"a", "b", "cf"}
	used := map[string]bool{}
	for c := 0; c < ncols; c++ {
		cc := ColumnConfig{Name: fmt.Sprintf("c%d", c), Index: ptr(c), Type: "bytes"}
		if rng.Intn(3) == 0 {
			cc.OnNull = "empty"
		}
		cc.SkipEmpty = rng.Intn(3) == 0
		if c > 0 || rng.Intn(2) == 0 { // column 0 is often the key only
			cell := fmt.Sprintf("%s:q%d", fams[rng.Intn(len(fams))], rng.Intn(8))
			if rng.Intn(8) == 0 {
				cell = fams[rng.Intn(len(fams))] + ":" // empty qualifier
			}
			if !used[cell] || rng.Intn(4) == 0 { // sometimes two columns to one cell
				used[cell] = true
				cc.Cell = cell
			}
		}
		if cc.Cell == "" && rng.Intn(3) == 0 {
			cc.Trim = rng.Intn(2) == 0 // trimmed, or another type: fine for a column that is not a cell
			cc.Type = "string"
		}
		cfg.Columns = append(cfg.Columns, cc)
	}
	if len(used) == 0 {
		cfg.Columns[1].Cell = "a:only"
		cfg.Columns[1].Trim = false
	}
	switch rng.Intn(3) {
	case 0:
		cfg.RowKey = []PartConfig{{Column: "c0"}}
	case 1:
		cfg.RowKey = []PartConfig{{Column: "c0"}, {Literal: ptr("|")}, {Column: fmt.Sprintf("c%d", rng.Intn(ncols))}}
	default:
		cfg.RowKey = []PartConfig{{Hash: &HashConfig{Parts: []PartConfig{{Column: "c1"}}, Bytes: 2}}, {Column: "c0"}}
	}
	if rng.Intn(2) == 0 {
		cfg.Timestamp.Value = ptr(int64(rng.Intn(1 << 30)))
	}
	return cfg, width
}

// TestAppendPlainFieldsMatchesReference appends random rows through appendPlainFields (plainShort's
// word copies, then the general loop) and checks each against a cell-by-cell reference: values of
// every length from 0 to 130 bytes (one, two, four or eight words, or past plainShort), NULL and empty
// fields under every skip rule, fields read in any order, and data with and without room past its end.
func TestAppendPlainFieldsMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	words := 0 // cells plainShort copied with more than two words
	for iter := 0; iter < 3000; iter++ {
		nf := 1 + rng.Intn(9)
		var data []byte
		var ends []int32
		var nulls []bool
		rows := 1 + rng.Intn(4)
		for range rows * nf {
			null := rng.Intn(6) == 0
			n := 0
			if !null {
				switch rng.Intn(4) {
				case 0:
					n = rng.Intn(17)
				case 1:
					n = 17 + rng.Intn(48)
				default:
					n = rng.Intn(131)
				}
				if rng.Intn(8) == 0 {
					n = 0
				}
			} else if rng.Intn(2) == 0 {
				n = rng.Intn(10) // bytes under a NULL: not its value
			}
			for range n {
				data = append(data, byte('a'+rng.Intn(26)))
			}
			ends = append(ends, int32(len(data)))
			nulls = append(nulls, null)
		}
		if rng.Intn(2) == 0 {
			data = slices.Clip(data) // no room past the last value: plainShort leaves the end to the loop
		} else {
			data = slices.Grow(data, 64)
		}
		at := make([]plainField, 1+rng.Intn(nf))
		for k := range at {
			nullEmpty, skipEmpty := rng.Intn(3) == 0, rng.Intn(3) == 0
			at[k] = plainField{f: int32(rng.Intn(nf)), famQual: int32(1 + rng.Intn(20)), code: byte(2*k + 1),
				skipNull: !nullEmpty || skipEmpty, skipEmpty: skipEmpty}
		}
		buf := []byte("xy")
		for i := range rows {
			base := i * nf
			start := int32(0)
			if base > 0 {
				start = ends[base-1]
			}
			rowEnds, rowNulls := ends[base:base+nf], nulls[base:base+nf]
			var want []byte
			var wantSum uint64
			wantCells, wantFirst := 0, 0
			for k, a := range at {
				s, e := start, rowEnds[a.f]
				if a.f > 0 {
					s = rowEnds[a.f-1]
				}
				null := rowNulls[a.f]
				if null && a.skipNull || !null && e == s && a.skipEmpty {
					continue
				}
				if null {
					e = s
				}
				if wantCells == 0 {
					wantFirst = k
				}
				want = append(want, a.code)
				want = binary.AppendUvarint(want, uint64(e-s))
				want = append(want, data[s:e]...)
				wantSum += uint64(a.famQual) + uint64(e-s)
				wantCells++
				if e-s > 16 && e-s <= plainWordMax {
					words++
				}
			}
			before := string(buf)
			var sum uint64
			var cells int
			buf, sum, cells = appendPlainFields(buf, data, rowEnds, rowNulls, start, at)
			if got := buf[len(before):]; !bytes.Equal(got, want) || sum != wantSum || cells != wantCells ||
				string(buf[:len(before)]) != before {
				t.Fatalf("iteration %d row %d (at %+v): got %q sum %d cells %d, want %q sum %d cells %d",
					iter, i, at, got, sum, cells, want, wantSum, wantCells)
			}
			if first := firstPlainWritten(rowEnds, rowNulls, start, at); first != wantFirst {
				t.Fatalf("iteration %d row %d: first written cell %d, want %d", iter, i, first, wantFirst)
			}
		}
	}
	if words < 1000 {
		t.Fatalf("only %d cells of 17 to %d bytes", words, plainWordMax)
	}
}
