package hfilewriter

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// pbPair is a FileInfoProto map_entry with the given fields (already encoded) inside.
func pbPair(fields ...[]byte) []byte {
	body := bytes.Join(fields, nil)
	return append(binary.AppendUvarint([]byte{0x0A}, uint64(len(body))), body...)
}

func pbBytes(tag byte, b []byte) []byte {
	return append(binary.AppendUvarint([]byte{tag}, uint64(len(b))), b...)
}

// The fast parse of the usual form (readFileInfoPairs) agrees with the field-by-field parse on every
// message it accepts, and leaves every other form to it.
func TestReadFileInfoPairsAgreesWithFields(t *testing.T) {
	var m writeFileInfoMap
	m.putInt32(FileInfoAvgKeyLen, 31)
	m.putInt64(FileInfoCreateTime, 1700000000000)
	m.put(FileInfoLastKey, bytes.Repeat([]byte{0xFF, 'k'}, 100))
	m.put("user.key", []byte{})
	m.putBool(FileInfoHistorical, false)
	written := m.appendProto(nil)
	msg := written[len("PBUF"):]
	l, n := binary.Uvarint(msg)
	msg = msg[n : n+int(l)]

	k, v := pbBytes(0x0A, []byte("K")), pbBytes(0x12, []byte("V"))
	cases := map[string]struct {
		msg  []byte
		fast bool // readFileInfoPairs takes it
	}{
		"written":       {msg, true},
		"empty":         {nil, true},
		"value first":   {pbPair(v, k), false},
		"extra field":   {pbPair(k, v, pbBytes(0x1A, []byte("x"))), false},
		"varint field":  {pbPair(k, []byte{0x18, 0x05}, v), false},
		"no value":      {pbPair(k), false},
		"other entry":   {append(append([]byte(nil), msg...), 0x10, 0x01), false},
		"truncated":     {msg[:len(msg)-3], false},
		"bad length":    {[]byte{0x0A, 0xFF}, false},
		"long tag":      {append([]byte{0x8A, 0x00}, pbPair(k, v)[1:]...), false},
		"two same keys": {append(pbPair(k, v), pbPair(k, pbBytes(0x12, nil))...), true},
	}
	rng := rand.New(rand.NewSource(7))
	for i := 0; i < 200; i++ {
		b := append([]byte(nil), msg...)
		b[rng.Intn(len(b))] ^= byte(1 + rng.Intn(255))
		cases["random damage "+string(rune('a'+i%26))+string(rune('a'+i/26))] = struct {
			msg  []byte
			fast bool
		}{b, false}
	}
	for name, c := range cases {
		got, ok := readFileInfoPairs(nil, c.msg)
		want, err := readFileInfoFields(c.msg)
		if !ok {
			if c.fast {
				t.Errorf("%s: the fast parse refused the usual form", name)
			}
			continue
		}
		if !c.fast && !strings.HasPrefix(name, "random") {
			t.Errorf("%s: the fast parse took an unusual form", name)
		}
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: fast parse %q, field-by-field %q (%v)", name, got, want, err)
		}
	}
	all, err := readFileInfo(written)
	var keys []string
	for _, e := range all {
		keys = append(keys, e.Key)
	}
	if want := []string{FileInfoHistorical, FileInfoAvgKeyLen, FileInfoCreateTime, FileInfoLastKey, "user.key"}; err != nil || !reflect.DeepEqual(keys, want) {
		t.Fatalf("readFileInfo: %v, keys %q, want %q", err, keys, want)
	}
	if !bytes.Equal(all[1].Value, []byte{0, 0, 0, 31}) || len(all[3].Value) != 200 || all[4].Value == nil {
		t.Fatalf("readFileInfo values: %q", all)
	}
}

// A file info parsed with the last one's layout (the stream verifier's) gives what a whole parse
// gives, entries and error, whatever changes from one payload to the next: values of the same length
// (the layout is taken), of another length, damaged structure, another key, the legacy form.
func TestFileInfoLayoutAgreesWithParse(t *testing.T) {
	payload := func(avgKey int32, lastKey []byte, user string) []byte {
		var m writeFileInfoMap
		m.putInt32(FileInfoAvgKeyLen, avgKey)
		m.putInt64(FileInfoCreateTime, 1700000000000+int64(avgKey))
		m.put(FileInfoLastKey, lastKey)
		m.put(user, []byte("v"))
		m.putBool(FileInfoHistorical, avgKey%2 == 0)
		return m.appendProtoOrder(nil, nil)
	}
	base := payload(31, []byte("row-000001"), "user.key")
	damagedBits := func(i int, x byte) []byte {
		b := append([]byte(nil), base...)
		b[i] ^= x
		return b
	}
	damaged := func(i int) []byte { return damagedBits(i, 0x01) }
	legacy := []byte{0, 0, 0, 1, 1, 'k', 1, 1, 'v'}
	// A message with a field after the entries (the general parse skips a varint, refuses an empty entry).
	trailing := func(f ...byte) []byte {
		msg := base[len(pbMagic):]
		l, n := binary.Uvarint(msg)
		msg = append(append([]byte(nil), msg[n:n+int(l)]...), f...)
		return append(binary.AppendUvarint(append([]byte(nil), pbMagic...), uint64(len(msg))), msg...)
	}
	rng := rand.New(rand.NewSource(3))
	seq := [][]byte{
		base, payload(32, []byte("row-000002"), "user.key"), payload(33, []byte("row-000003"), "user.key"),
		payload(34, []byte("row-0000004"), "user.key"), payload(35, []byte("row-0000005"), "user.key"),
		payload(36, []byte("row-0000006"), "user.kez"), damaged(4), base, damaged(6), base, damaged(len(base) - 12),
		legacy, base, base[:len(base)-1], base, trailing(0x10, 0x01), trailing(0x10, 0x02), trailing(0x0A, 0x00), base,
	}
	for i := 0; i < 200; i++ {
		seq = append(seq, damaged(rng.Intn(len(base))), base)
	}
	for i := range base { // every byte, each bit (the layout compares eight bytes at a time)
		seq = append(seq, damagedBits(i, 1<<(i%8)), damagedBits(i, byte(1+rng.Intn(255))), base)
	}
	var layout fileInfoLayout
	var dst []FileInfoEntry
	for i, b := range seq {
		arena := append([]byte(nil), b...) // the verifier's kept copy: capacity = length
		want, werr := readFileInfo(arena)
		got, gerr := readFileInfoInto(dst, arena, &layout)
		if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
			t.Fatalf("payload %d: error %v, whole parse %v", i, gerr, werr)
		}
		if werr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("payload %d: entries %q, whole parse %q", i, got, want)
		}
		if gerr == nil {
			dst = got
			// What Reader.setupLoadOnOpen indexes the entries with.
			idx := indexFileInfo(got)
			if layout.payload != nil {
				idx = layout.index
			}
			checkFileInfoIndex(t, fmt.Sprintf("payload %d", i), &Reader{fileInfo: got, fileInfoIdx: idx}, want)
		}
	}
	if layout.payload == nil {
		t.Fatal("no layout kept")
	}
	// The stream verifier's way: each payload copied to the same place of one arena, the last entries
	// passed back as dst; now and then the payload elsewhere, or another dst.
	layout, dst = fileInfoLayout{}, nil
	arena := make([]byte, 0, 4096)
	var reused int
	for i, b := range seq {
		at := arena[:len(b):len(b)]
		if i%7 == 3 {
			at = make([]byte, len(b)) // elsewhere
		}
		copy(at, b)
		in := dst
		if i%11 == 5 {
			in = make([]FileInfoEntry, 0, len(dst))
		}
		before := layout.last
		want, werr := readFileInfo(append([]byte(nil), b...))
		got, gerr := readFileInfoInto(in, at, &layout)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("arena payload %d: error %v, whole parse %v", i, gerr, werr)
		}
		if gerr != nil {
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("arena payload %d: entries %q, whole parse %q", i, got, want)
		}
		for j, e := range got {
			in := len(e.Value) == 0
			for k := range at {
				in = in || &at[k] == &e.Value[0]
			}
			if !in {
				t.Fatalf("arena payload %d: entry %d does not point into the payload", i, j)
			}
		}
		if len(before) > 0 && len(got) > 0 && &got[0] == &before[0] {
			reused++
		}
		dst = got
	}
	if reused < 100 {
		t.Fatalf("the last entries were returned again %d times of %d", reused, len(seq))
	}
}

// appendProtoOrder with a cache writes what appendProto writes without one, whether it takes the last
// message's bytes (same keys, values of the same lengths) or not (other lengths, other keys, other
// order), after a prefix in dst (the block header room).
func TestFileInfoProtoCacheSameBytes(t *testing.T) {
	var cache fileInfoOrder
	var m writeFileInfoMap
	rng := rand.New(rand.NewSource(5))
	keys := []string{FileInfoLastKey, FileInfoAvgKeyLen, "user.a", FileInfoCreateTime, FileInfoTimeRange, "user.z"}
	for i := 0; i < 300; i++ {
		m.reset()
		n := len(keys)
		if i%50 == 49 {
			n-- // a key fewer now and then
		}
		for _, k := range keys[:n] {
			l := 8
			if rng.Intn(4) == 0 {
				l = rng.Intn(200) // another length: two-byte varints too
			}
			v := make([]byte, l)
			rng.Read(v)
			m.putCopy(k, v)
		}
		if i%70 == 69 {
			keys[2], keys[5] = keys[5], keys[2] // another put order
		}
		want := m.appendProto(nil)
		got := m.appendProtoOrder([]byte("header"), &cache)
		if string(got[:6]) != "header" || !bytes.Equal(got[6:], want) {
			t.Fatalf("file %d: the cached message differs from the one written whole", i)
		}
	}
}

// checkFileInfoIndex checks that r's lookups by slot, and FileInfoValue of every key, give what a
// search of entries for the key's first entry gives.
func checkFileInfoIndex(t *testing.T, what string, r *Reader, entries []FileInfoEntry) {
	t.Helper()
	first := func(key string) ([]byte, bool) {
		for _, e := range entries {
			if e.Key == key {
				return e.Value, true
			}
		}
		return nil, false
	}
	for s := fileInfoSlot(0); s < fileInfoSlots; s++ {
		key := fileInfoSlotKey(s)
		if back, ok := fileInfoSlotOf(key); !ok || back != s {
			t.Fatalf("slot %d's key %q maps back to slot %d, %v", s, key, back, ok)
		}
		want, wok := first(key)
		got, ok := r.fileInfoAt(s)
		if ok != wok || !bytes.Equal(got, want) || (ok && len(want) > 0 && &got[0] != &want[0]) {
			t.Fatalf("%s: slot %s: %q, %v; the first entry with the key: %q, %v", what, key, got, ok, want, wok)
		}
	}
	for _, e := range append(entries, FileInfoEntry{Key: "no.such.key"}) {
		want, wok := first(e.Key)
		if got, ok := r.FileInfoValue(e.Key); ok != wok || !bytes.Equal(got, want) {
			t.Fatalf("%s: FileInfoValue(%q) = %q, %v; want %q, %v", what, e.Key, got, ok, want, wok)
		}
	}
}

// The slot index of a file info finds each key's first entry, in any order, with keys repeated, absent
// or unknown.
func TestFileInfoIndex(t *testing.T) {
	var keys []string
	for s := fileInfoSlot(0); s < fileInfoSlots; s++ {
		keys = append(keys, fileInfoSlotKey(s))
	}
	keys = append(keys, FileInfoCreateTime, FileInfoHistorical, "user.key", "hfile.LASTKEY ", "")
	rng := rand.New(rand.NewSource(11))
	for i := 0; i < 500; i++ {
		var entries []FileInfoEntry
		for j, n := 0, rng.Intn(30); j < n; j++ {
			k := keys[rng.Intn(len(keys))]
			entries = append(entries, FileInfoEntry{Key: k, Value: []byte(fmt.Sprintf("%s=%d", k, j))})
		}
		checkFileInfoIndex(t, fmt.Sprintf("case %d", i), &Reader{fileInfo: entries, fileInfoIdx: indexFileInfo(entries)}, entries)
	}
}

// writeFileInfoMap.put keeps one entry per key, the first put's position and the last put's value,
// whether it takes a key as the one the last reset's keys had at its position (the files of a load) or
// searches: random sequences of puts and resets, mostly repeating the last sequence, against a plain
// ordered map.
func TestWriteFileInfoMapPut(t *testing.T) {
	keys := []string{FileInfoAvgKeyLen, FileInfoLastKey, FileInfoHistorical, "user.a", "user.b", "user.c", ""}
	rng := rand.New(rand.NewSource(9))
	var m writeFileInfoMap
	var last []string // the keys of the last sequence
	fast := 0
	for round := 0; round < 3000; round++ {
		m.reset()
		var seq []string
		switch rng.Intn(4) {
		case 0, 1: // the last sequence again
			seq = append(seq, last...)
		case 2: // the last one changed at a random place
			seq = append(seq, last...)
			if len(seq) > 0 {
				seq[rng.Intn(len(seq))] = keys[rng.Intn(len(keys))]
			}
			if rng.Intn(2) == 0 {
				seq = append(seq, keys[rng.Intn(len(keys))])
			}
		default:
			for n := rng.Intn(10); n > 0; n-- {
				seq = append(seq, keys[rng.Intn(len(keys))])
			}
		}
		var wantK []string
		var wantV [][]byte
		for i, k := range seq {
			v := []byte(fmt.Sprintf("%d.%d", round, i))
			if j := slices.Index(wantK, k); j >= 0 {
				wantV[j] = v
			} else {
				wantK, wantV = append(wantK, k), append(wantV, v)
			}
			if m.inOrder && len(m.keys) < m.last && m.keys[:m.last][len(m.keys)] == k {
				fast++
			}
			m.put(k, v)
		}
		if !slices.Equal(m.keys, wantK) || !reflect.DeepEqual(m.values, wantV) && len(wantV) > 0 {
			t.Fatalf("round %d, puts %q: keys %q values %q, want %q %q", round, seq, m.keys, m.values, wantK, wantV)
		}
		last = seq
	}
	if fast < 1000 {
		t.Fatalf("only %d puts took the key in order", fast)
	}
}
