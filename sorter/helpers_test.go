package sorter

import (
	"github.com/hfload/hfload/internal/cellrec"
	"github.com/hfload/hfload/internal/kv"
)

// testDict holds some of the qualifiers the tests use, so that records mix dictionary and literal
// qualifiers.
var testDict = cellrec.NewDict([][]byte{[]byte("q0"), []byte("q2"), []byte("a"), []byte("m")})

// rc turns one KeyValue cell into a one-cell record (dictionary qualifiers where testDict has them).
func rc(kvb []byte) []byte {
	key, value, _, err := kv.SplitKeyValue(kvb)
	if err != nil || !kv.Key(key).Valid() {
		// A malformed input stays malformed: tests of refusals pass garbage through.
		return append([]byte(nil), kvb...)
	}
	k := kv.Key(key)
	rec := cellrec.AppendHeader(nil, k.Row(), k.Family(), k.Timestamp(), k.Type())
	return testDict.AppendQualifierCell(rec, k.Qualifier(), value)
}

// collect drains an iterator into its cells as KeyValues with their seqs, and counts the views.
func collect(it *Iterator, d *cellrec.Dict) ([]rec, int) {
	var out []rec
	views := 0
	for it.Next() {
		views++
		h := it.Header()
		for cells := it.Cells(); len(cells) > 0; {
			var q, v []byte
			q, v, cells = d.Next(cells)
			out = append(out, rec{cellrec.AppendKeyValue(nil, h, q, v), it.Seq()})
		}
	}
	return out, views
}
