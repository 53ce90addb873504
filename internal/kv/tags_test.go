package kv

import (
	"bytes"
	"encoding/hex"
	"math/rand/v2"
	"strings"
	"testing"
)

func tagsTestHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestTTLTagBytes: ImportTsv's TTL tag is new ArrayBackedTag(TTL_TAG_TYPE=8, Bytes.toBytes(long)).
// 86400000 = 0x05265C00, so: length 00 09 (type + 8 bytes), type 08, then the big-endian long.
func TestTTLTagBytes(t *testing.T) {
	want := tagsTestHex(t, "0009 08 0000000005265C00")
	if got := TTLTag(86400000); !bytes.Equal(got, want) {
		t.Fatalf("TTLTag = %x, want %x", got, want)
	}
	got, err := ParseTags("ttl=86400000", nil)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("ParseTags = %x, %v", got, err)
	}
}

// TestVisibilityTagBytes works the tags out by hand from VisibilityUtils.createVisibilityExpTags:
// first the serialization-format tag 00 02 04 01, then per OR-clause a type-2 tag whose value is the
// clause's ordinals sorted ascending as varint32 (NOT = negative ordinal: -1 = ff ff ff ff 0f).
func TestVisibilityTagBytes(t *testing.T) {
	labels := map[string]int{"secret": 1, "topsecret": 2, "c": 3, "d": 4, "se,cret": 5, "big": 300}
	const fmtTag = "0002 04 01"
	for _, tc := range []struct{ expr, want string }{
		{"secret", fmtTag + "0002 02 01"},
		{"secret|topsecret", fmtTag + "0002 02 01" + "0002 02 02"},
		{"topsecret&secret", fmtTag + "0003 02 0102"}, // one clause, ordinals sorted
		// (a|b)&c -> (a&c)|(b&c) (ExpressionExpander.mergeChildNodes)
		{"(secret|topsecret)&c", fmtTag + "0003 02 0103" + "0003 02 0203"},
		// a|(b&c) stays as is: clause [1], clause [2,3]
		{"secret | (topsecret & c)", fmtTag + "0002 02 01" + "0003 02 0203"},
		// (a|b)&(c|d) -> (a&c)|(a&d)|(b&c)|(b&d)
		{"(secret|topsecret)&(c|d)", fmtTag + "0003 02 0103" + "0003 02 0104" + "0003 02 0203" + "0003 02 0204"},
		// a|(b|c): the single node is appended after the merged clause's children: b, c, a
		{"secret|(topsecret|c)", fmtTag + "0002 02 02" + "0002 02 03" + "0002 02 01"},
		// !a&b: one clause [-1, 2]
		{"!secret&topsecret", fmtTag + "0007 02 ffffffff0f 02"},
		// !(a|b) -> !a & !b: one clause [-2, -1]
		{"!(secret|topsecret)", fmtTag + "000b 02 feffffff0f ffffffff0f"},
		// ordinal 300 = varint ac 02; quoted label with a comma
		{`big|"se,cret"`, fmtTag + "0003 02 ac02" + "0002 02 05"},
	} {
		got, err := VisibilityTags(tc.expr, labels)
		if err != nil {
			t.Errorf("%q: %v", tc.expr, err)
			continue
		}
		if want := tagsTestHex(t, tc.want); !bytes.Equal(got, want) {
			t.Errorf("%q: got %x, want %x", tc.expr, got, want)
		}
	}
	huge := "(secret|topsecret)"
	for i := 0; i < 16; i++ {
		huge += "&(c|d)"
	}
	if _, err := VisibilityTags(huge, labels); err == nil || !strings.Contains(err.Error(), "too complex") {
		t.Errorf("2^17-clause expression: %v", err)
	}
	for _, bad := range []string{"", "secret&", "secret topsecret", "(secret", "secret)", "secret&&c", "unknown", "se$cret", `"open`, "!", "!&secret", "secret|!", "(!)", "secret&!(c|d)"} {
		if got, err := VisibilityTags(bad, labels); err == nil {
			t.Errorf("%q accepted: %x", bad, got)
		}
	}
}

// TestParseFormatTags: ParseTags keeps item order (ImportTsv: visibility tags, then TTL), FormatTags
// prints what ParseTags reads back to the same bytes.
func TestParseFormatTags(t *testing.T) {
	labels := map[string]int{"secret": 1, "topsecret": 2, "a,b": 3}
	got, err := ParseTags(`visibility=secret|"a,b", ttl=5`, labels)
	if err != nil {
		t.Fatal(err)
	}
	want := tagsTestHex(t, "0002 04 01"+"0002 02 01"+"0002 02 03"+"0009 08 0000000000000005")
	if !bytes.Equal(got, want) {
		t.Fatalf("got %x, want %x", got, want)
	}
	text := FormatTags(got)
	if text != "visfmt=1,vis=1,vis=3,ttl=5" {
		t.Fatalf("FormatTags = %q", text)
	}
	back, err := ParseTags(text, nil)
	if err != nil || !bytes.Equal(back, got) {
		t.Fatalf("ParseTags(FormatTags) = %x, %v", back, err)
	}
	raw := tagsTestHex(t, "0003 c8 abcd"+"0007 02 ffffffff0f 02"+"0001 07")
	if text := FormatTags(raw); text != "tag200=0xabcd,vis=!1&2,tag7=0x" {
		t.Fatalf("FormatTags = %q", text)
	} else if back, err := ParseTags(text, nil); err != nil || !bytes.Equal(back, raw) {
		t.Fatalf("round trip %x, %v", back, err)
	}
	for _, bad := range []string{"ttl", "ttl=x", "color=red", "visibility=secret", "tag300=0x00", "tag1=zz", "vis=0"} {
		if _, err := ParseTags(bad, nil); err == nil {
			t.Errorf("ParseTags(%q) accepted", bad)
		}
	}
	if list, err := SplitTags(want); err != nil || len(list) != 4 || list[3].Type != TagTypeTTL {
		t.Fatalf("SplitTags: %v %v", list, err)
	}
	if _, err := SplitTags([]byte{0, 5, 8}); err == nil {
		t.Fatal("SplitTags accepted a truncated tag")
	}
}

func TestReadVisibilityLabels(t *testing.T) {
	m, err := ReadVisibilityLabels(strings.NewReader("# hbase:labels\nsecret=1\n\n topsecret = 2\n"))
	if err != nil || len(m) != 2 || m["secret"] != 1 || m["topsecret"] != 2 {
		t.Fatalf("%v %v", m, err)
	}
	for _, bad := range []string{"secret", "secret=0", "secret=x", "a=1\na=2"} {
		if _, err := ReadVisibilityLabels(strings.NewReader(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestCellLineTags: the optional sixth column of the cell text format.
func TestCellLineTags(t *testing.T) {
	labels := map[string]int{"secret": 1}
	c, err := ParseCellLineLabels("r\tf:q\t1\tPut\tv\tvisibility=secret,ttl=1000", labels)
	if err != nil {
		t.Fatal(err)
	}
	want := append(tagsTestHex(t, "0002 04 01 0002 02 01"), TTLTag(1000)...)
	if !bytes.Equal(c.Tags, want) {
		t.Fatalf("tags %x, want %x", c.Tags, want)
	}
	if line := FormatCellLine(&c); line != "r\tf:q\t1\tPut\tv\tvisfmt=1,vis=1,ttl=1000" {
		t.Fatalf("FormatCellLine = %q", line)
	}
	if c, err := ParseCellLine("r\tf:q\t1\tPut\tv\t"); err != nil || c.Tags != nil {
		t.Fatalf("empty tags column: %x %v", c.Tags, err)
	}
	if _, err := ParseCellLine("r\tf:q\t1\tPut\tv\tvisibility=secret"); err == nil {
		t.Fatal("visibility without labels accepted")
	}
}

// FuzzParseTags: no input panics, and whatever ParseTags accepts, FormatTags prints in a form that
// parses back to the same bytes.
func FuzzParseTags(f *testing.F) {
	for _, s := range []string{"ttl=5", "visibility=a|b", "visibility=(a|b)&!(c&d)", `visibility="x,y"&a`, "vis=1&!2,visfmt=1", "tag9=0x00ff", "visibility=!(!a)", "visibility=((a))|b&c"} {
		f.Add(s)
	}
	labels := map[string]int{"a": 1, "b": 2, "c": 3, "d": 4, "x,y": 5}
	f.Fuzz(func(t *testing.T, s string) {
		tags, err := ParseTags(s, labels)
		if err != nil {
			return
		}
		if err := CheckTags(tags); err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		back, err := ParseTags(FormatTags(tags), nil)
		if err != nil || !bytes.Equal(back, tags) {
			t.Fatalf("%q: FormatTags %q does not round trip: %x vs %x (%v)", s, FormatTags(tags), back, tags, err)
		}
	})
}

// TestFormatTagsLabels: with the label map, visibility tags print as an expression over label names
// that ParseTags turns back into the same bytes, for random expressions of labels that need quoting
// or not.
func TestFormatTagsLabels(t *testing.T) {
	labels := map[string]int{"secret": 1, "top.secret": 2, "a b": 3, `q"uo\te`: 4, "x,y": 5, "big": 300}
	names := []string{"secret", "top.secret", `"a b"`, `"q\"uo\\te"`, `"x,y"`, "big"}
	tags, err := ParseTags(`visibility=(secret|"a b")&!big,ttl=7`, labels)
	if err != nil {
		t.Fatal(err)
	}
	if got := FormatTagsLabels(tags, labels); got != `visibility=(!big&secret)|(!big&"a b"),ttl=7` {
		t.Fatalf("FormatTagsLabels = %q", got)
	}
	if got := FormatTagsLabels(tags, map[string]int{"secret": 1}); got != "visfmt=1,vis=!300&1,vis=!300&3,ttl=7" {
		t.Fatalf("with an incomplete label map: %q", got)
	}
	rng := rand.New(rand.NewPCG(8, 9))
	var gen func(depth int) string
	gen = func(depth int) string {
		if depth == 0 || rng.IntN(3) == 0 {
			s := names[rng.IntN(len(names))]
			if rng.IntN(4) == 0 {
				s = "!" + s
			}
			return s
		}
		op := "&"
		if rng.IntN(2) == 0 {
			op = "|"
		}
		return "(" + gen(depth-1) + op + gen(depth-1) + ")"
	}
	checked := 0
	for i := 0; i < 2000; i++ {
		expr := gen(3)
		tags, err := VisibilityTags(expr, labels)
		if err != nil {
			continue // e.g. a NOT over a sub-expression inside an AND, which HBase cannot store either
		}
		text := FormatTagsLabels(tags, labels)
		back, err := ParseTags(text, labels)
		if err != nil || !bytes.Equal(back, tags) {
			t.Fatalf("%s -> %s -> %x, want %x (%v)", expr, text, back, tags, err)
		}
		checked++
	}
	if checked < 1000 {
		t.Fatalf("only %d of 2000 random expressions were storable", checked)
	}
}
