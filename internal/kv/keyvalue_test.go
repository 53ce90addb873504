package kv

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/rand"
	"sort"
	"testing"
)

func TestAppendKeyValueSpecExample(t *testing.T) {
	// §2.3: row r1, family cf, qualifier q, ts 1, Put, value v (without tags/mvcc suffix).
	got := AppendKeyValue(nil, []byte("r1"), []byte("cf"), []byte("q"), 1, TypePut, []byte("v"))
	want, _ := hex.DecodeString("00000011" + "00000001" + "0002723102636671" + "0000000000000001" + "04" + "76")
	if !bytes.Equal(got, want) {
		t.Fatalf("got %x\nwant %x", got, want)
	}
	key, val, n, err := SplitKeyValue(got)
	if err != nil || n != len(got) || string(val) != "v" {
		t.Fatalf("split: %v %d %q", err, n, val)
	}
	k := Key(key)
	if string(k.Row()) != "r1" || string(k.Family()) != "cf" || string(k.Qualifier()) != "q" || k.Timestamp() != 1 || k.Type() != TypePut {
		t.Fatalf("accessors: %s", k)
	}
}

func TestCompareKeysOrder(t *testing.T) {
	mk := func(row, fam, qual string, ts int64, typ Type) []byte {
		return AppendKey(nil, []byte(row), []byte(fam), []byte(qual), ts, typ)
	}
	// Listed in HBase order.
	ordered := [][]byte{
		mk("", "", "", 5, TypePut),
		mk("a", "cf", "", 9, TypePut),
		mk("a", "cf", "q", 9, TypeDeleteFamily),
		mk("a", "cf", "q", 9, TypeDeleteColumn),
		mk("a", "cf", "q", 9, TypeDelete),
		mk("a", "cf", "q", 9, TypePut),
		mk("a", "cf", "q", 1, TypePut),
		mk("a", "cf", "q", -1, TypePut),
		mk("a", "cf", "q\x00", 1, TypePut),
		mk("a", "cf", "q\xff", 1, TypePut),
		mk("a", "cg", "", 1, TypePut),
		mk("a", "", "", 0, TypeMinimum), // last-on-row sentinel
		mk("a\x00", "cf", "q", 1, TypePut),
		mk("a\x80", "cf", "q", 1, TypePut),
		mk("b", "cf", "q", 1, TypePut),
	}
	for i := range ordered {
		for j := range ordered {
			got := CompareKeys(ordered[i], ordered[j])
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if sign(got) != want {
				t.Errorf("compare(%s, %s) = %d, want %d", Key(ordered[i]), Key(ordered[j]), got, want)
			}
		}
	}
	shuffled := append([][]byte(nil), ordered...)
	rand.New(rand.NewSource(1)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	sort.Slice(shuffled, func(i, j int) bool { return CompareKeys(shuffled[i], shuffled[j]) < 0 })
	for i := range ordered {
		if !bytes.Equal(shuffled[i], ordered[i]) {
			t.Fatalf("sorted position %d: %s, want %s", i, Key(shuffled[i]), Key(ordered[i]))
		}
	}
}

func sign(x int) int {
	if x < 0 {
		return -1
	}
	if x > 0 {
		return 1
	}
	return 0
}

func TestStringBinaryRoundTrip(t *testing.T) {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	s := ToStringBinary(all)
	if want := `\x00\x01`; s[:8] != want {
		t.Fatalf("prefix %q", s[:8])
	}
	if bytes.Contains([]byte(s), []byte{'\\', '\\'}) || !bytes.Contains([]byte(s), []byte(`\x5C`)) {
		t.Fatalf("backslash not escaped: %q", s)
	}
	back, err := FromStringBinary(s)
	if err != nil || !bytes.Equal(back, all) {
		t.Fatalf("round trip: %v", err)
	}
	if ToStringBinary([]byte("row-00 ~")) != "row-00 ~" {
		t.Fatal("printable ASCII must stay as is")
	}
	for _, bad := range []string{`\x`, `\x4`, `\xZZ`} {
		if _, err := FromStringBinary(bad); err == nil {
			t.Errorf("FromStringBinary(%q) accepted", bad)
		}
	}
}

func TestCellLineRoundTrip(t *testing.T) {
	c := Cell{Row: []byte("r\x00\\1"), Family: []byte("cf"), Qualifier: []byte("a:b\t"), Timestamp: -5,
		Type: TypeDeleteFamilyVersion, Value: []byte{0xff, 'x'}}
	line := FormatCellLine(&c)
	if line != `r\x00\x5C1`+"\t"+`cf:a:b\x09`+"\t-5\tDeleteFamilyVersion\t"+`\xFFx` {
		t.Fatalf("line %q", line)
	}
	back, err := ParseCellLine(line)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back.Key(), c.Key()) || !bytes.Equal(back.Value, c.Value) {
		t.Fatalf("round trip: %s", back.String())
	}
	for _, bad := range []string{"r\tcf:q\t1\tPut", "r\tcfq\t1\tPut\tv", "r\tcf:q\tx\tPut\tv", "r\tcf:q\t1\tMaximum\tv", "\tcf:q\t1\tPut\tv"} {
		if _, err := ParseCellLine(bad); err == nil {
			t.Errorf("ParseCellLine(%q) accepted", bad)
		}
	}
}

// TestCompareKeysMatchesComponents checks CompareKeys (which compares family and qualifier in one
// step when the family lengths are equal) against a component-by-component reference on random keys
// built from a small alphabet, so that prefixes and equal parts are common.
func TestCompareKeysMatchesComponents(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	part := func(max int) []byte {
		b := make([]byte, rng.Intn(max+1))
		for i := range b {
			b[i] = "ab\x00\xff"[rng.Intn(4)]
		}
		return b
	}
	ref := func(a, b []byte) int {
		ka, kb := Key(a), Key(b)
		if c := bytes.Compare(ka.Row(), kb.Row()); c != 0 {
			return c
		}
		if c := bytes.Compare(ka.Family(), kb.Family()); c != 0 {
			return c
		}
		if c := bytes.Compare(ka.Qualifier(), kb.Qualifier()); c != 0 {
			return c
		}
		if ka.Timestamp() != kb.Timestamp() {
			if ka.Timestamp() > kb.Timestamp() {
				return -1
			}
			return 1
		}
		return -sign(int(ka.Type()) - int(kb.Type()))
	}
	types := []Type{TypePut, TypeDelete, TypeDeleteColumn}
	for i := 0; i < 200000; i++ {
		a := AppendKey(nil, part(2), part(2), part(3), int64(rng.Intn(2)), types[rng.Intn(3)])
		b := AppendKey(nil, part(2), part(2), part(3), int64(rng.Intn(2)), types[rng.Intn(3)])
		if got, want := sign(CompareKeys(a, b)), sign(ref(a, b)); got != want {
			t.Fatalf("CompareKeys(%s, %s) = %d, want %d", Key(a), Key(b), got, want)
		}
	}
}

// TestFormatKey checks FormatKey against HBase's KeyValue.toString layout
// (row/family:qualifier/timestamp/type, Bytes.toStringBinary for the byte parts), spelled out with fmt.
func TestFormatKey(t *testing.T) {
	cases := []struct {
		row, fam, q []byte
		ts          int64
		typ         Type
	}{
		{[]byte("row-1"), []byte("d"), []byte("a"), 1700000000000, TypePut},
		{[]byte{0, 0xff, '\\', 'x'}, []byte("f"), nil, LatestTimestamp, TypeDeleteColumn},
		{nil, nil, nil, -5, TypeDeleteFamily},
		{[]byte("r"), []byte("f"), []byte("q\x7f"), 0, Type(99)},
	}
	for _, c := range cases {
		tss := fmt.Sprint(c.ts)
		if c.ts == LatestTimestamp {
			tss = "LATEST_TIMESTAMP"
		}
		want := fmt.Sprintf("%s/%s:%s/%s/%s", ToStringBinary(c.row), ToStringBinary(c.fam), ToStringBinary(c.q), tss, c.typ)
		if got := FormatKey(c.row, c.fam, c.q, c.ts, c.typ); got != want {
			t.Errorf("FormatKey = %q, want %q", got, want)
		}
		if got := Key(AppendKey(nil, c.row, c.fam, c.q, c.ts, c.typ)).String(); got != want {
			t.Errorf("Key.String = %q, want %q", got, want)
		}
	}
}

// AppendStringBinary appends what ToStringBinary returns: every byte value at every position of
// printable runs of several lengths, after a prefix.
func TestAppendStringBinaryIsToStringBinary(t *testing.T) {
	for n := 0; n <= 20; n++ {
		base := bytes.Repeat([]byte("k"), n)
		cases := [][]byte{base}
		for pos := 0; pos < n; pos++ {
			for c := 0; c < 256; c++ {
				b := bytes.Clone(base)
				b[pos] = byte(c)
				cases = append(cases, b)
			}
		}
		for _, b := range cases {
			if got, want := string(AppendStringBinary([]byte("pre"), b)), "pre"+ToStringBinary(b); got != want {
				t.Fatalf("AppendStringBinary(%q) = %q, want %q", b, got, want)
			}
		}
	}
}

// FromStringBinary of a text without a backslash is its bytes, whatever they are; with one, \xNN
// escapes are decoded as before.
func TestFromStringBinaryPlain(t *testing.T) {
	var all []byte
	for c := 0; c < 256; c++ {
		if c != '\\' {
			all = append(all, byte(c))
		}
	}
	for _, s := range []string{"", "row-1", "C000001-0000000001", string(all), "x\x00y\xff"} {
		got, err := FromStringBinary(s)
		if err != nil || string(got) != s || got == nil {
			t.Fatalf("FromStringBinary(%q) = %q, %v", s, got, err)
		}
	}
	if got, err := FromStringBinary(`a\x41\x7fb`); err != nil || string(got) != "aA\x7fb" {
		t.Fatalf("escaped: %q, %v", got, err)
	}
}

// plainWord says yes exactly when each of the word's eight bytes is one ToStringBinary keeps as
// itself: random words of the bytes at the edges of the printable range and around the backslash,
// where a borrow or carry between bytes could hide one.
func TestPlainWordIsPerByte(t *testing.T) {
	edges := []byte{0x00, 0x01, 0x1f, ' ', '!', '[', '\\', ']', '}', '~', 0x7f, 0x80, 0x81, 0xdc, 0xfe, 0xff}
	rng := rand.New(rand.NewSource(7))
	var w [8]byte
	for i := 0; i < 200000; i++ {
		want := true
		for j := range w {
			w[j] = edges[rng.Intn(len(edges))]
			if rng.Intn(3) == 0 {
				w[j] = 'k'
			}
			want = want && w[j] >= ' ' && w[j] <= '~' && w[j] != '\\'
		}
		if got := plainWord(binary.LittleEndian.Uint64(w[:])); got != want {
			t.Fatalf("plainWord(%q) = %v, want %v", w[:], got, want)
		}
	}
}
