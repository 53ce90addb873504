package cellrec

import (
	"bytes"
	"math/rand"
	"testing"

	"github.com/hfload/hfload/internal/kv"
)

// rowCell is one cell of the RowDict tests, with its real family.
type rowCell struct {
	row, fam, q, v, tags []byte
	ts                   int64
	typ                  kv.Type
}

func (c *rowCell) key() []byte { return kv.AppendKey(nil, c.row, c.fam, c.q, c.ts, c.typ) }

// TestRowDictRoundTripAndOrder: a row record's cells split back into the families, qualifiers, values
// and tags they were made of, the record validates, and two cells of row records compare (Compare on
// the row records' headers and qualifiers) exactly as their KeyValues do (kv.CompareKeys). The
// families "a" < "ab" < "b" are chosen so that putting the family's name in front of the qualifier
// instead of its rank would misorder ("a"+"zz" > "ab"+"a").
func TestRowDictRoundTripAndOrder(t *testing.T) {
	for _, tagged := range []bool{false, true} {
		quals := [][]byte{[]byte("a"), []byte("x"), []byte("zz")}
		d := NewDict(quals)
		if tagged {
			d = NewTaggedDict(quals)
		}
		rd, err := NewRowDict(d, [][]byte{[]byte("b"), []byte("ab"), []byte("a")}) // any order
		if err != nil {
			t.Fatal(err)
		}
		if rd.Dict().Tagged() != tagged || rd.Families() != 3 || string(rd.Family(1)) != "ab" {
			t.Fatalf("tagged %v: RowDict %v %d %q", tagged, rd.Dict().Tagged(), rd.Families(), rd.Family(1))
		}
		rng := rand.New(rand.NewSource(7))
		pick := func(s ...string) []byte { return []byte(s[rng.Intn(len(s))]) }
		var all []rowCell
		var recs [][]byte // row records
		var cellsOf [][]rowCell
		for n := 0; n < 300; n++ {
			row, ts, typ := pick("r1", "r2", "r10"), int64(rng.Intn(3)), kv.TypePut
			if rng.Intn(4) == 0 {
				typ = kv.TypeDeleteColumn
			}
			rec := AppendHeader(nil, row, nil, ts, typ)
			var cells []rowCell
			for rank := 0; rank < 3; rank++ {
				if rng.Intn(3) == 0 {
					continue
				}
				var fr []byte // a record of d in this family: ascending qualifiers, some by index, some literal
				for _, q := range [][]byte{[]byte("a"), []byte("m"), []byte("x"), []byte("y"), []byte("zz")} {
					if rng.Intn(2) == 0 {
						continue
					}
					c := rowCell{row: row, fam: rd.Family(rank), q: q, v: pick("", "v", "value"), ts: ts, typ: typ}
					if tagged && rng.Intn(2) == 0 {
						c.tags = kv.TTLTag(int64(rng.Intn(1000)))
					}
					fr = d.AppendQualifierCellTags(fr, c.q, c.v, c.tags)
					cells = append(cells, c)
				}
				if fr == nil {
					continue
				}
				if rec, err = rd.AppendCells(rec, rank, fr); err != nil {
					t.Fatal(err)
				}
			}
			if cells == nil {
				continue
			}
			if got, err := rd.Dict().Validate(rec); err != nil || got != len(cells) {
				t.Fatalf("tagged %v: Validate = %d, %v; want %d cells", tagged, got, err, len(cells))
			}
			recs, cellsOf = append(recs, rec), append(cellsOf, cells)
			all = append(all, cells...)
		}
		// Round trip.
		type rcell struct {
			h Header
			q []byte // the row record's qualifier
		}
		var split []rcell
		for i, rec := range recs {
			h, cells, _ := ParseHeader(rec)
			for j := 0; len(cells) > 0; j++ {
				var q, v, tags []byte
				q, v, tags, cells = rd.Dict().NextTags(cells)
				rank, qual := rd.Split(q)
				w := cellsOf[i][j]
				if !bytes.Equal(rd.Family(rank), w.fam) || !bytes.Equal(qual, w.q) || !bytes.Equal(v, w.v) ||
					!bytes.Equal(tags, w.tags) || !bytes.Equal(h.Row, w.row) || h.TS != w.ts || h.Type != w.typ {
					t.Fatalf("tagged %v: record %d cell %d = %q:%q=%q tags %x; want %q:%q=%q tags %x", tagged, i, j,
						rd.Family(rank), qual, v, tags, w.fam, w.q, w.v, w.tags)
				}
				split = append(split, rcell{h, q})
			}
		}
		// Order.
		for n := 0; n < 20000; n++ {
			i, j := rng.Intn(len(all)), rng.Intn(len(all))
			want := kv.CompareKeys(all[i].key(), all[j].key())
			got := Compare(&split[i].h, split[i].q, &split[j].h, split[j].q)
			if (want < 0) != (got < 0) || (want == 0) != (got == 0) {
				t.Fatalf("tagged %v: %q vs %q: row records compare %d, KeyValues %d", tagged,
					kv.Key(all[i].key()), kv.Key(all[j].key()), got, want)
			}
		}
	}
}

// TestRowDictRefuses: families beyond a byte's ranks, empty, too long or repeated; ranks outside the
// families; malformed cells (an error, dst unchanged).
func TestRowDictRefuses(t *testing.T) {
	d := NewDict([][]byte{[]byte("q")})
	many := make([][]byte, MaxRowFamilies+1)
	for i := range many {
		many[i] = []byte{byte(i >> 8), byte(i), 'f'}
	}
	for name, fams := range map[string][][]byte{
		"none": nil, "too many": many, "empty": {[]byte("a"), nil}, "twice": {[]byte("a"), []byte("a")},
		"too long": {bytes.Repeat([]byte("f"), kv.MaxFamilyLength+1)},
	} {
		if _, err := NewRowDict(d, fams); err == nil {
			t.Errorf("%s: NewRowDict accepted %d families", name, len(fams))
		}
	}
	if _, err := NewRowDict(d, many[:MaxRowFamilies]); err != nil {
		t.Fatalf("%d families: %v", MaxRowFamilies, err)
	}
	rd, err := NewRowDict(d, [][]byte{[]byte("f")})
	if err != nil {
		t.Fatal(err)
	}
	good := d.AppendCell(nil, 0, []byte("v"))
	if _, err := rd.AppendCells(nil, 1, good); err == nil {
		t.Error("AppendCells took rank 1 of 1 family")
	}
	dst := []byte("keep")
	for name, bad := range map[string][]byte{
		"index outside": {2*5 + 1, 1, 'v'}, "short value": {1, 9, 'v'}, "short literal": {2 * 9, 'q'},
	} {
		got, err := rd.AppendCells(dst, 0, bad)
		if err == nil || string(got) != "keep" {
			t.Errorf("%s: AppendCells = %q, %v", name, got, err)
		}
	}
}
