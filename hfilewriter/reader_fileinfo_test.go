package hfilewriter

import (
	"bytes"
	"encoding/binary"
	"math/rand"
	"reflect"
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
