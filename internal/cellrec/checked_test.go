package cellrec

import (
	"bytes"
	"testing"

	"github.com/hfload/hfload/internal/kv"
)

// TestAppendKeyValuesChecked: valid records expand as AppendKeyValues does; invalid ones leave dst as it
// was, with Validate's error.
func TestAppendKeyValuesChecked(t *testing.T) {
	d := NewDict([][]byte{[]byte("a"), []byte("c")})
	good := AppendLiteralCell(d.AppendCell(AppendHeader(nil, []byte("r"), []byte("f"), 3, kv.TypePut), 0, []byte("1")), []byte("b"), []byte("2"))
	good = d.AppendCell(good, 1, []byte("3"))
	prefix := []byte("prefix")
	got, n, err := d.AppendKeyValuesChecked(bytes.Clone(prefix), good)
	if want := d.AppendKeyValues(bytes.Clone(prefix), good); err != nil || n != 3 || !bytes.Equal(got, want) {
		t.Fatalf("AppendKeyValuesChecked = %q, %d, %v; want %q, 3", got, n, err, want)
	}
	unordered := d.AppendCell(AppendLiteralCell(AppendHeader(nil, []byte("r"), []byte("f"), 3, kv.TypePut), []byte("b"), nil), 0, nil)
	for _, bad := range [][]byte{good[:len(good)-1], unordered, AppendHeader(nil, []byte("r"), []byte("f"), 3, kv.TypePut),
		AppendLiteralCell(AppendHeader(nil, nil, []byte("f"), 3, kv.TypePut), []byte("q"), nil)} {
		_, verr := d.Validate(bad)
		got, n, err := d.AppendKeyValuesChecked(bytes.Clone(prefix), bad)
		if err == nil || verr == nil || err.Error() != verr.Error() || n != 0 || !bytes.Equal(got, prefix) {
			t.Errorf("record %x: %q, %d, %v (Validate: %v)", bad, got, n, err, verr)
		}
	}
}

// FuzzAppendKeyValuesChecked: it accepts exactly what Validate accepts and then expands as
// AppendKeyValues does.
func FuzzAppendKeyValuesChecked(f *testing.F) {
	d := NewDict([][]byte{[]byte("a"), []byte("bb")})
	f.Add(d.AppendCell(AppendHeader(nil, []byte("r"), []byte("f"), 1, kv.TypePut), 1, []byte("v")))
	f.Add([]byte{1, 'r', 0, 0, 0, 0, 0, 0, 0, 0, 1, 4, 2, 'x', 0})
	f.Fuzz(func(t *testing.T, rec []byte) {
		vn, verr := d.Validate(rec)
		got, n, err := d.AppendKeyValuesChecked([]byte{7}, rec)
		if (err == nil) != (verr == nil) || n != vn {
			t.Fatalf("AppendKeyValuesChecked: %d, %v; Validate: %d, %v", n, err, vn, verr)
		}
		want := []byte{7}
		if err == nil {
			want = d.AppendKeyValues(want, rec)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("expanded %x, want %x", got, want)
		}
	})
}
