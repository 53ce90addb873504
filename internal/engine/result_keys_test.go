package engine

import (
	"bytes"
	"testing"

	"github.com/hfload/hfload/internal/kv"
)

// FileResult.setKeys formats the region bounds, keys and rows as ToStringBinary and Key.String do,
// each on its own, whatever the bytes (printable, backslash, binary) and lengths (past the stack
// buffer's 512 bytes).
func TestFileResultSetKeys(t *testing.T) {
	long := bytes.Repeat([]byte("r\\\x00\xff"), 200)
	var ts tsText
	for _, c := range []struct {
		start, end  []byte
		first, last []byte
	}{
		{nil, nil, kv.AppendKey(nil, []byte("C000001-01"), []byte("d"), []byte("a"), 1700000000000, kv.TypePut),
			kv.AppendKey(nil, []byte("C000002-07"), []byte("d"), []byte("f"), 1700000000000, kv.TypePut)},
		{[]byte("C000001"), []byte("C\x00\x01\\x"), kv.AppendKey(nil, []byte("\x00row\\"), []byte("f"), nil, kv.LatestTimestamp, kv.TypeDeleteFamily),
			kv.AppendKey(nil, []byte("row\xfe"), []byte("f"), []byte("q\x7f"), -1, kv.TypeDeleteColumn)},
		{long, long[:100], kv.AppendKey(nil, long, []byte("fam"), long, 5, kv.TypePut),
			kv.AppendKey(nil, long[1:], []byte("fam"), nil, 6, kv.TypeDelete)},
		// No keys (a file without cells), and keys that are not valid (their rows formatted on their own).
		{[]byte("a"), []byte("b"), nil, nil},
		{nil, []byte("b"), []byte{0, 2, 'r', '\\', 0}, kv.AppendKey(nil, []byte("row"), []byte("f"), nil, 1, kv.TypePut)},
		{nil, nil, kv.AppendKey(nil, []byte("r\xff"), []byte("f"), nil, 1, kv.TypePut), []byte{0, 1, 'z'}},
	} {
		var fr, again, rows FileResult
		fr.setKeys(c.start, c.end, c.first, c.last, nil, false)
		again.setKeys(c.start, c.end, c.first, c.last, &ts, false) // the timestamp text of the case before kept
		rows.setKeys(c.start, c.end, c.first, c.last, &ts, true)
		want := FileResult{
			RegionStart: kv.ToStringBinary(c.start),
			RegionEnd:   kv.ToStringBinary(c.end),
			FirstKey:    kv.Key(c.first).String(),
			LastKey:     kv.Key(c.last).String(),
		}
		if c.first != nil {
			want.FirstRow = kv.ToStringBinary(kv.Key(c.first).Row())
		}
		if c.last != nil {
			want.LastRow = kv.ToStringBinary(kv.Key(c.last).Row())
		}
		if fr != want {
			t.Errorf("setKeys gave %+v, want %+v", fr, want)
		}
		if again != want {
			t.Errorf("setKeys after other keys gave %+v, want %+v", again, want)
		}
		want.FirstKey, want.LastKey = "", "" // the rows only (Spec.RowBoundsOnly)
		if rows != want {
			t.Errorf("setKeys of the rows only gave %+v, want %+v", rows, want)
		}
	}
}
