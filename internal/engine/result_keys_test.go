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
	} {
		var fr FileResult
		fr.setKeys(c.start, c.end, c.first, c.last)
		want := FileResult{
			RegionStart: kv.ToStringBinary(c.start),
			RegionEnd:   kv.ToStringBinary(c.end),
			FirstKey:    kv.Key(c.first).String(),
			LastKey:     kv.Key(c.last).String(),
			FirstRow:    kv.ToStringBinary(kv.Key(c.first).Row()),
			LastRow:     kv.ToStringBinary(kv.Key(c.last).Row()),
		}
		if fr != want {
			t.Errorf("setKeys gave %+v, want %+v", fr, want)
		}
	}
}
