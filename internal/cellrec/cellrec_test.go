package cellrec

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/hfload/hfload/internal/kv"
)

func TestRoundTripWithDictAndLiterals(t *testing.T) {
	d := NewDict([][]byte{[]byte("b"), []byte("a"), []byte("b"), []byte("zz")})
	if d.Len() != 3 || string(d.At(0)) != "a" || string(d.At(2)) != "zz" {
		t.Fatalf("dict not sorted and deduplicated: %q", d.q)
	}
	ia, _ := d.Index([]byte("a"))
	izz, _ := d.Index([]byte("zz"))
	if _, ok := d.Index([]byte("c")); ok {
		t.Fatal("Index found a qualifier the dictionary does not hold")
	}
	rec := AppendHeader(nil, []byte("row1"), []byte("d"), -5, kv.TypeDelete)
	rec = d.AppendCell(rec, ia, []byte("va"))
	rec = AppendLiteralCell(rec, []byte("m"), nil)
	rec = d.AppendQualifierCell(rec, []byte("y"), bytes.Repeat([]byte{7}, 300)) // literal: not in d
	rec = d.AppendCell(rec, izz, []byte("vz"))
	n, err := d.Validate(rec)
	if err != nil || n != 4 {
		t.Fatalf("Validate = %d, %v", n, err)
	}
	h, cells, err := ParseHeader(rec)
	if err != nil || string(h.Row) != "row1" || string(h.Family) != "d" || h.TS != -5 || h.Type != kv.TypeDelete {
		t.Fatalf("header %+v, %v", h, err)
	}
	if got := d.Cells(cells); got != 4 {
		t.Fatalf("Cells = %d", got)
	}
	want := []struct{ q, v string }{{"a", "va"}, {"m", ""}, {"y", strings.Repeat("\x07", 300)}, {"zz", "vz"}}
	lastQ, lastOff := d.Last(cells)
	if string(lastQ) != "zz" {
		t.Fatalf("Last = %q", lastQ)
	}
	if q, v, rest := d.Next(cells[lastOff:]); string(q) != "zz" || string(v) != "vz" || len(rest) != 0 {
		t.Fatalf("Last offset %d does not start the last cell", lastOff)
	}
	for i, w := range want {
		var q, v []byte
		q, v, cells = d.Next(cells)
		if string(q) != w.q || string(v) != w.v {
			t.Fatalf("cell %d = %q=%q, want %q=%q", i, q, v, w.q, w.v)
		}
	}
	if len(cells) != 0 {
		t.Fatalf("%d bytes left", len(cells))
	}
	if string(Row(rec)) != "row1" || RowPrefix(rec) != Prefix([]byte("row1")) {
		t.Fatal("Row/RowPrefix")
	}
	// The KeyValues it stands for.
	kvs := d.AppendKeyValues(nil, rec)
	want0 := kv.AppendKeyValue(nil, []byte("row1"), []byte("d"), []byte("a"), -5, kv.TypeDelete, []byte("va"))
	if !bytes.HasPrefix(kvs, want0) {
		t.Fatalf("first KeyValue %x, want %x", kvs[:len(want0)], want0)
	}
	if KeyValueSize(&h, 1, 2) != len(want0) {
		t.Fatalf("KeyValueSize = %d, want %d", KeyValueSize(&h, 1, 2), len(want0))
	}
}

func TestValidateRefusesMalformedRecords(t *testing.T) {
	d := NewDict([][]byte{[]byte("a"), []byte("b")})
	good := d.AppendCell(AppendHeader(nil, []byte("r"), []byte("f"), 1, kv.TypePut), 0, []byte("v"))
	cases := map[string][]byte{
		"empty":           nil,
		"no cells":        AppendHeader(nil, []byte("r"), []byte("f"), 1, kv.TypePut),
		"empty row":       d.AppendCell(AppendHeader(nil, nil, []byte("f"), 1, kv.TypePut), 0, nil),
		"type Minimum":    d.AppendCell(AppendHeader(nil, []byte("r"), []byte("f"), 1, kv.TypeMinimum), 0, nil),
		"truncated":       good[:len(good)-1],
		"index outside":   d.AppendCell(AppendHeader(nil, []byte("r"), []byte("f"), 1, kv.TypePut), 2, nil),
		"not ascending":   d.AppendCell(d.AppendCell(AppendHeader(nil, []byte("r"), []byte("f"), 1, kv.TypePut), 1, nil), 0, nil),
		"equal quals":     AppendLiteralCell(d.AppendCell(AppendHeader(nil, []byte("r"), []byte("f"), 1, kv.TypePut), 0, nil), []byte("a"), nil),
		"row too long":    d.AppendCell(AppendHeader(nil, make([]byte, kv.MaxRowLength+1), []byte("f"), 1, kv.TypePut), 0, nil),
		"family too long": d.AppendCell(AppendHeader(nil, []byte("r"), make([]byte, 128), 1, kv.TypePut), 0, nil),
		"bad row length":  {0xff, 0xff, 0xff},
	}
	if _, err := d.Validate(good); err != nil {
		t.Fatalf("good record refused: %v", err)
	}
	for name, rec := range cases {
		if _, err := d.Validate(rec); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// Every truncation of a good two-cell record is refused, never a panic, except the one at the end of
	// its first cell, which is a valid one-cell record.
	first := d.AppendCell(AppendHeader(nil, []byte("row"), []byte("fam"), 1, kv.TypePut), 0, []byte("x"))
	long := AppendLiteralCell(bytes.Clone(first), []byte("c"), []byte("yy"))
	for i := 0; i < len(long); i++ {
		if n, err := d.Validate(long[:i]); i == len(first) {
			if err != nil || n != 1 {
				t.Errorf("first cell alone: %d, %v", n, err)
			}
		} else if err == nil {
			t.Errorf("truncation to %d bytes accepted", i)
		}
	}
}

// Compare must order cells exactly as kv.CompareKeys orders their keys.
func TestCompareAgreesWithCompareKeys(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	pick := func(alphabet string, max int) []byte {
		n := r.IntN(max + 1)
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		return b
	}
	types := []kv.Type{kv.TypePut, kv.TypeDelete, kv.TypeDeleteColumn, kv.TypeDeleteFamily}
	type cell struct {
		h Header
		q []byte
	}
	gen := func() cell {
		row := pick("ab\x00\xff", 3)
		if len(row) == 0 {
			row = []byte{'a'}
		}
		return cell{Header{Row: row, Family: pick("fg", 2), TS: int64(r.IntN(3)) - 1, Type: types[r.IntN(len(types))]}, pick("xy\x00", 3)}
	}
	sign := func(c int) int {
		switch {
		case c < 0:
			return -1
		case c > 0:
			return 1
		}
		return 0
	}
	for i := 0; i < 200000; i++ {
		a, b := gen(), gen()
		ka := AppendKey(nil, &a.h, a.q)
		kb := AppendKey(nil, &b.h, b.q)
		want := sign(kv.CompareKeys(ka, kb))
		if got := sign(Compare(&a.h, a.q, &b.h, b.q)); got != want {
			t.Fatalf("Compare(%s, %s) = %d, CompareKeys = %d", kv.Key(ka), kv.Key(kb), got, want)
		}
		if bytes.Equal(a.h.Row, b.h.Row) {
			if got := sign(CompareInRow(&a.h, a.q, &b.h, b.q)); got != want {
				t.Fatalf("CompareInRow(%s, %s) = %d, want %d", kv.Key(ka), kv.Key(kb), got, want)
			}
		}
		if pa, pb := Prefix(a.h.Row), Prefix(b.h.Row); pa != pb && (pa < pb) != (bytes.Compare(a.h.Row, b.h.Row) < 0) {
			t.Fatalf("prefixes of %q and %q disagree with the rows", a.h.Row, b.h.Row)
		}
	}
}

func TestFromKeyValuesGroupsRuns(t *testing.T) {
	d := NewDict([][]byte{[]byte("q1")})
	kv := func(row, q string, ts int64) []byte {
		return kv.AppendKeyValue(nil, []byte(row), []byte("f"), []byte(q), ts, kv.TypePut, []byte(row+q))
	}
	in := [][]byte{kv("r1", "q1", 5), kv("r1", "q2", 5), kv("r1", "q2", 4), kv("r2", "q0", 5), kv("r2", "q0", 5)}
	var sizes []int
	var all []byte
	err := d.FromKeyValues(in, func(rec []byte, n int) error {
		if m, err := d.Validate(rec); err != nil || m != n {
			t.Fatalf("emitted record invalid: %d %v", m, err)
		}
		sizes = append(sizes, n)
		all = d.AppendKeyValues(all, rec)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// r1 q1,q2 @5 | r1 q2 @4 | r2 q0 | r2 q0 (equal qualifiers start a new record)
	if want := []int{2, 1, 1, 1}; !slices.Equal(sizes, want) {
		t.Fatalf("record sizes %v, want %v", sizes, want)
	}
	if !bytes.Equal(all, bytes.Join(in, nil)) {
		t.Fatal("records do not expand back to the KeyValues")
	}
}

func FuzzValidate(f *testing.F) {
	d := NewDict([][]byte{[]byte("a"), []byte("bb")})
	f.Add(d.AppendCell(AppendHeader(nil, []byte("r"), []byte("f"), 1, kv.TypePut), 1, []byte("v")))
	f.Add([]byte{1, 'r', 0, 0, 0, 0, 0, 0, 0, 0, 1, 4, 2, 'x', 0})
	f.Fuzz(func(t *testing.T, rec []byte) {
		n, err := d.Validate(rec)
		if err != nil {
			return
		}
		// A valid record can be walked without panics and expands to n well-formed KeyValues.
		h, cells, _ := ParseHeader(rec)
		if d.Cells(cells) != n {
			t.Fatalf("Cells = %d, Validate = %d", d.Cells(cells), n)
		}
		kvs := d.AppendKeyValues(nil, rec)
		for i := 0; i < n; i++ {
			_, _, m, err := kv.SplitKeyValue(kvs)
			if err != nil {
				t.Fatal(err)
			}
			kvs = kvs[m:]
		}
		if len(kvs) != 0 || len(h.Row) == 0 {
			t.Fatal("expansion mismatch")
		}
	})
}

// Validate gives the same verdict and cell count through its one-byte fast path as the full check, on
// records built to take either path and on every damage to them; a nil Dict refuses dictionary cells.
//
// With a dictionary of more than 64 qualifiers, a code of two bytes (an index of 64 or more) must not
// pass for a code of one.
func TestValidateShortPathAgreesWithCheck(t *testing.T) {
	var big [][]byte
	for i := range 100 {
		big = append(big, []byte{'a' + byte(i/26), 'a' + byte(i%26)})
	}
	for _, d := range []*Dict{NewDict([][]byte{[]byte("a"), []byte("b"), []byte("c"), []byte("q")}), NewDict(big)} {
		validateShortAgreesWithCheck(t, d)
	}
}

// A value of 128 to 191 bytes has a two-byte length whose first byte (0x80-0xbf) has bit 6 clear: the
// fast path must not read it as a one-byte length and the value's last bytes as cells. This record is
// malformed (a byte after the value is no cell) but reads as two good cells that way.
func TestValidateShortPathTwoByteLength(t *testing.T) {
	d := NewDict([][]byte{[]byte("q"), []byte("r")})
	val := bytes.Repeat([]byte{'a'}, 128)
	val[127] = 3 // read as the code of qualifier 1, then the trailing 0 as its value's length
	rec := AppendHeader(nil, []byte("row"), []byte("f"), 1, kv.TypePut)
	rec = append(d.AppendCell(rec, 0, val), 0)
	if _, _, err := d.check(nil, rec, false); err == nil {
		t.Fatal("the full check takes the record")
	}
	if n, err := d.Validate(rec); err == nil {
		t.Fatalf("Validate takes a malformed record as %d cells", n)
	}
	good := d.AppendCell(AppendHeader(nil, []byte("row"), []byte("f"), 1, kv.TypePut), 0, val)
	if n, err := d.Validate(good); err != nil || n != 1 {
		t.Fatalf("Validate of one cell with a 128-byte value: %d cells, %v", n, err)
	}
}

// validateShortAgreesWithCheck is TestValidateShortPathAgreesWithCheck with dictionary d.
func validateShortAgreesWithCheck(t *testing.T, d *Dict) {
	r := rand.New(rand.NewPCG(5, 6))
	for iter := 0; iter < 20000; iter++ {
		rowLen := 1 + r.IntN(3)
		if r.IntN(10) == 0 {
			rowLen = 130 // a two-byte length: the long way
		}
		rec := AppendHeader(nil, make([]byte, rowLen), []byte("f"), 1, []kv.Type{kv.TypePut, kv.TypeDelete, kv.TypeMinimum}[r.IntN(3)])
		for c := 0; c < 1+r.IntN(4); c++ {
			v := make([]byte, r.IntN(3))
			if r.IntN(10) == 0 {
				v = make([]byte, 200)
			} else if r.IntN(10) == 0 {
				// 128 to 191 bytes: a first length byte 0x80-0xbf, which is not a one-byte length either
				v = make([]byte, 128+r.IntN(64))
				for i := range v {
					v[i] = byte(r.IntN(8)) // small codes and lengths, which a misread would take as cells
				}
			}
			if r.IntN(2) == 0 {
				rec = d.AppendCell(rec, r.IntN(d.Len()+1), v) // sometimes an index outside the dictionary
			} else {
				rec = AppendLiteralCell(rec, []byte{"abqz"[r.IntN(4)]}, v)
			}
		}
		if r.IntN(3) == 0 {
			rec[r.IntN(len(rec))] ^= byte(1 << r.IntN(8))
		}
		if r.IntN(5) == 0 {
			rec = rec[:r.IntN(len(rec)+1)]
		}
		for _, dict := range []*Dict{d, nil} {
			_, wantN, wantErr := dict.check(nil, rec, false)
			n, err := dict.Validate(rec)
			if (err == nil) != (wantErr == nil) || n != wantN {
				t.Fatalf("iteration %d: Validate = %d, %v; the full check says %d, %v (record %x)", iter, n, err, wantN, wantErr, rec)
			}
		}
	}
}

// BenchmarkValidate: an orders-like record (8-byte row, 7 dictionary cells of 1-10 bytes) through
// Validate (the one-byte path) and through the full check, in the same run.
func BenchmarkValidate(b *testing.B) {
	quals := [][]byte{[]byte("comment"), []byte("customer_id"), []byte("order_ts"), []byte("product_id"),
		[]byte("quantity"), []byte("status"), []byte("unit_price")}
	d := NewDict(quals)
	rec := AppendHeader(nil, []byte("12345678"), []byte("d"), 1700000000000, kv.TypePut)
	for i, v := range []string{"leave it", "123456", "2024-01-01 00:00:00", "4321", "3", "PAID", "99.99"} {
		rec = d.AppendCell(rec, i, []byte(v))
	}
	b.Run("Validate", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if n, err := d.Validate(rec); err != nil || n != 7 {
				b.Fatal(n, err)
			}
		}
	})
	b.Run("check", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, n, err := d.check(nil, rec, false); err != nil || n != 7 {
				b.Fatal(n, err)
			}
		}
	})
	if _, ok := d.validShort(rec); !ok {
		b.Fatal("the record did not take the one-byte path")
	}
}

// BenchmarkNextTags walks the cells of a five-cell record (dictionary qualifiers, short values), as the
// write phase does for every cell.
func BenchmarkNextTags(b *testing.B) {
	d := NewDict([][]byte{[]byte("a"), []byte("b"), []byte("c"), []byte("e"), []byte("f")})
	var cells []byte
	for i, v := range []string{"593908", "306.39", "SHIPPED", "1700000000", "note 74013"} {
		cells = d.AppendCell(cells, i, []byte(v))
	}
	b.SetBytes(int64(len(cells)))
	n := 0
	for b.Loop() {
		for c := cells; len(c) > 0; {
			var q, v []byte
			q, v, _, c = d.NextTags(c)
			n += len(q) + len(v)
		}
	}
	if n == 0 {
		b.Fatal("no cells")
	}
}
