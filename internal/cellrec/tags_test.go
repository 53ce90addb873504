package cellrec

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hfload/hfload/internal/kv"
)

// TestTaggedRoundTrip: under a tagged dictionary each cell carries its own tags (empty ones too), Next
// skips them, NextTags returns them, and the KeyValues a record stands for are HBase's KeyValues with
// tags (int16 tagsLen | tags after the value), which FromKeyValues turns back into the same record.
func TestTaggedRoundTrip(t *testing.T) {
	d := NewTaggedDict([][]byte{[]byte("a"), []byte("zz")})
	if !d.Tagged() || NewDict(nil).Tagged() || (*Dict)(nil).Tagged() {
		t.Fatal("Tagged")
	}
	ttl := kv.TTLTag(1000)
	long := bytes.Repeat(kv.TTLTag(7), 30) // 330 bytes: past validShort's one-byte lengths
	h := Header{Row: []byte("r"), Family: []byte("f"), TS: 4, Type: kv.TypePut}
	rec := AppendHeader(nil, h.Row, h.Family, h.TS, h.Type)
	rec = d.AppendCellTags(rec, 0, []byte("va"), ttl)
	rec = d.AppendLiteralCellTags(rec, []byte("m"), []byte("vm"), nil)
	rec = d.AppendQualifierCellTags(rec, []byte("y"), []byte("vy"), long)
	rec = d.AppendQualifierCell(rec, []byte("zz"), []byte("vz")) // no tags: an empty tags field
	if n, err := d.Validate(rec); err != nil || n != 4 {
		t.Fatalf("Validate = %d, %v", n, err)
	}
	want := []struct {
		q, v string
		tags []byte
	}{{"a", "va", ttl}, {"m", "vm", nil}, {"y", "vy", long}, {"zz", "vz", nil}}
	_, cells, _ := ParseHeader(rec)
	if d.Cells(cells) != 4 {
		t.Fatalf("Cells = %d", d.Cells(cells))
	}
	if q, off := d.Last(cells); string(q) != "zz" || off >= len(cells) {
		t.Fatalf("Last = %q at %d", q, off)
	}
	var kvs [][]byte
	rest := cells
	for i, w := range want {
		q, v, r := d.Next(rest)
		q2, v2, tags, r2 := d.NextTags(rest)
		if string(q) != w.q || string(v) != w.v || !bytes.Equal(q, q2) || !bytes.Equal(v, v2) || len(r) != len(r2) ||
			!bytes.Equal(tags, w.tags) {
			t.Fatalf("cell %d: Next %q=%q, NextTags %q=%q tags %x; want %q=%q tags %x", i, q, v, q2, v2, tags, w.q, w.v, w.tags)
		}
		kvs = append(kvs, kv.AppendKeyValueTags(nil, h.Row, h.Family, q, h.TS, h.Type, v, tags))
		rest = r
	}
	expanded := d.AppendKeyValues(nil, rec)
	if !bytes.Equal(expanded, bytes.Join(kvs, nil)) {
		t.Fatalf("AppendKeyValues = %x", expanded)
	}
	size := 0
	for _, w := range want {
		size += d.KeyValueSize(&h, len(w.q), len(w.v), len(w.tags))
	}
	if size != len(expanded) {
		t.Fatalf("KeyValueSize sums to %d, the KeyValues have %d bytes", size, len(expanded))
	}
	if got, n, err := d.AppendKeyValuesChecked(nil, rec); err != nil || n != 4 || !bytes.Equal(got, expanded) {
		t.Fatalf("AppendKeyValuesChecked = %d, %v", n, err)
	}
	var back [][]byte
	if err := d.FromKeyValues(kvs, func(r []byte, _ int) error { back = append(back, bytes.Clone(r)); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(back) != 1 || !bytes.Equal(back[0], rec) {
		t.Fatalf("FromKeyValues gave %d records, want the record back", len(back))
	}
}

// TestTaggedValidateRefuses: malformed tag lists and cut tags fields are refused by both of Validate's
// paths, with the same answer as AppendKeyValuesChecked; a record without tags fields is not a tagged
// dictionary's record.
func TestTaggedValidateRefuses(t *testing.T) {
	d := NewTaggedDict([][]byte{[]byte("a")})
	head := AppendHeader(nil, []byte("r"), []byte("f"), 1, kv.TypePut)
	for _, tc := range []struct {
		name string
		rec  []byte
		want string
	}{
		{"stray tag bytes", d.AppendCellTags(bytes.Clone(head), 0, []byte("v"), []byte{0, 1}), "malformed tags"},
		{"tag overrun", d.AppendCellTags(bytes.Clone(head), 0, []byte("v"), []byte{0, 9, 8, 1}), "malformed tags"},
		{"long malformed tags", d.AppendCellTags(bytes.Clone(head), 0, []byte("v"), append(bytes.Repeat(kv.TTLTag(1), 20), 0)), "malformed tags"},
		{"no tags field", NewDict([][]byte{[]byte("a")}).AppendCell(bytes.Clone(head), 0, []byte("v")), "truncated"},
		{"cut tags", d.AppendCellTags(bytes.Clone(head), 0, []byte("v"), kv.TTLTag(5))[:len(head)+3+5], "truncated"},
	} {
		_, err := d.Validate(tc.rec)
		_, _, cerr := d.AppendKeyValuesChecked(nil, tc.rec)
		if err == nil || !strings.Contains(err.Error(), tc.want) || cerr == nil || cerr.Error() != err.Error() {
			t.Errorf("%s: Validate: %v; AppendKeyValuesChecked: %v; want %q", tc.name, err, cerr, tc.want)
		}
	}
}

// FuzzTaggedValidate: under a tagged dictionary, AppendKeyValuesChecked accepts exactly what Validate
// accepts (its one-byte fast path included) and then expands as AppendKeyValues does.
func FuzzTaggedValidate(f *testing.F) {
	d := NewTaggedDict([][]byte{[]byte("a"), []byte("bb")})
	f.Add(d.AppendCellTags(AppendHeader(nil, []byte("r"), []byte("f"), 1, kv.TypePut), 1, []byte("v"), kv.TTLTag(3)))
	f.Add(d.AppendLiteralCellTags(AppendHeader(nil, []byte("r"), []byte("f"), 1, kv.TypePut), []byte("c"), nil, nil))
	f.Fuzz(func(t *testing.T, rec []byte) {
		vn, verr := d.Validate(rec)
		_, _, lerr := d.check(nil, rec, false) // the long path alone
		got, n, err := d.AppendKeyValuesChecked([]byte{7}, rec)
		if (err == nil) != (verr == nil) || (lerr == nil) != (verr == nil) || n != vn {
			t.Fatalf("AppendKeyValuesChecked: %d, %v; Validate: %d, %v; long path: %v", n, err, vn, verr, lerr)
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
