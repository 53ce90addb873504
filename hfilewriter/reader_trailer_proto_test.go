package hfilewriter

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand"
	"testing"
)

// readProto (fields walked by nextProtoField, one-byte tags and varints without the varint loop)
// parses what the callback walk it replaced parsed, to the same Trailer or the same error: random
// trailers with every field, multi-byte varints, unknown fields of each wire type, a repeated or
// missing field, bad wire types, field number 0, and truncated or damaged copies; half of them start
// as Writer writes a trailer (fields 1 to 12 in order: readProtoInOrder), with more fields after now
// and then.
func TestTrailerReadProtoMatchesCallbackWalk(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	varint := func(b []byte) []byte {
		switch rng.Intn(4) {
		case 0:
			return binary.AppendUvarint(b, uint64(rng.Intn(128)))
		case 1:
			return binary.AppendUvarint(b, uint64(rng.Intn(1<<14)))
		case 2:
			return binary.AppendUvarint(b, rng.Uint64())
		}
		return binary.AppendUvarint(b, uint64(rng.Int63n(1<<40)))
	}
	field := func(b []byte, num, wt int) []byte {
		b = binary.AppendUvarint(b, uint64(num)<<3|uint64(wt))
		switch wt {
		case 0:
			return varint(b)
		case 1:
			return binary.LittleEndian.AppendUint64(b, rng.Uint64())
		case 2:
			s := ComparatorKV
			if rng.Intn(3) == 0 {
				s = fmt.Sprint("cmp", rng.Intn(1000))
			}
			return append(binary.AppendUvarint(b, uint64(len(s))), s...)
		case 5:
			return binary.LittleEndian.AppendUint32(b, rng.Uint32())
		}
		return b
	}
	inOrder := 0
	for i := 0; i < 20000; i++ {
		var msg []byte
		if rng.Intn(2) == 0 {
			// What Writer writes (readProtoInOrder's case), now and then with a longer comparator or
			// codec value, followed by more fields; damaged below like the others.
			for num := 1; num <= 10; num++ {
				msg = field(msg, num, 0)
			}
			s := ComparatorKV
			if rng.Intn(10) == 0 {
				// Long enough for a two-byte length; field 12's tag and a value byte, at random,
				// where a one-byte length would end.
				c := make([]byte, 128+rng.Intn(32))
				for j := range c {
					c[j] = "`\x05"[rng.Intn(2)]
				}
				s = string(c)
			}
			msg = append(binary.AppendUvarint(append(msg, 11<<3|2), uint64(len(s))), s...)
			if rng.Intn(4) == 0 {
				msg = field(msg, 12, 0)
			} else {
				msg = append(msg, 12<<3, byte(rng.Intn(128)))
			}
			if rng.Intn(4) == 0 {
				msg = field(msg, 13, []int{0, 2}[rng.Intn(2)])
			}
			if rng.Intn(10) == 0 {
				msg = field(msg, 1+rng.Intn(20), []int{0, 1, 2, 5}[rng.Intn(4)])
			}
			if _, ok := new(Trailer).readProtoInOrder(msg); ok {
				inOrder++
			}
		}
		for num := 1; num <= 13 && len(msg) == 0; num++ {
			if rng.Intn(20) == 0 {
				continue // missing
			}
			wt := 0
			if num == 11 {
				wt = 2
			}
			if rng.Intn(30) == 0 {
				wt = []int{0, 1, 2, 3, 5, 6}[rng.Intn(6)]
			}
			msg = field(msg, num, wt)
			if rng.Intn(10) == 0 {
				msg = field(msg, 14+rng.Intn(2000), []int{0, 1, 2, 5}[rng.Intn(4)]) // unknown
			}
			if rng.Intn(40) == 0 {
				msg = field(msg, num, wt) // repeated
			}
		}
		if rng.Intn(50) == 0 {
			msg = append(msg, 0x00) // field number 0
		}
		switch rng.Intn(6) {
		case 0:
			msg = msg[:rng.Intn(len(msg)+1)]
		case 1:
			if len(msg) > 0 {
				msg[rng.Intn(len(msg))] = byte(rng.Intn(256))
			}
		}
		b := append(binary.AppendUvarint(nil, uint64(len(msg))), msg...)
		if rng.Intn(40) == 0 {
			b = b[:rng.Intn(len(b)+1)] // the length prefix says more than there is
		}
		var got, want Trailer
		gerr, werr := got.readProto(b), refReadProto(&want, b)
		if fmt.Sprint(gerr) != fmt.Sprint(werr) || got != want {
			t.Fatalf("message %d %x: readProto %+v, %v; callback walk %+v, %v", i, b, got, gerr, want, werr)
		}
	}
	if inOrder < 3000 {
		t.Fatalf("only %d messages were parsed in order (readProtoInOrder)", inOrder)
	}
}

// refReadProto is readProto as it was before nextProtoField: it parses a varint32-delimited FileTrailerProto.
func refReadProto(t *Trailer, b []byte) error {
	l, n := binary.Uvarint(b)
	if n <= 0 || l > uint64(len(b)-n) {
		return errors.New("bad FileTrailerProto length prefix")
	}
	msg := b[n : n+int(l)]
	seen := false
	err := refReadProtoFields(msg, func(num int, wt int, v uint64, data []byte) error {
		seen = true
		switch num {
		case 1:
			t.FileInfoOffset = int64(v)
		case 2:
			t.LoadOnOpenOffset = int64(v)
		case 3:
			t.UncompressedDataIndexSize = v
		case 4:
			t.TotalUncompressedBytes = v
		case 5:
			t.DataIndexCount = uint32(v)
		case 6:
			t.MetaIndexCount = uint32(v)
		case 7:
			t.EntryCount = v
		case 8:
			t.NumDataIndexLevels = uint32(v)
		case 9:
			t.FirstDataBlockOffset = int64(v)
		case 10:
			t.LastDataBlockOffset = int64(v)
		case 11:
			if wt != 2 {
				return fmt.Errorf("comparator_class_name has wire type %d", wt)
			}
			if string(data) == ComparatorKV { // what Writer and HBase write: no copy
				t.ComparatorClassName = ComparatorKV
			} else {
				t.ComparatorClassName = string(data)
			}
		case 12:
			t.Compression = CompressionCodec(v)
		case 13:
			t.Encrypted = wt == 2
		}
		return nil
	})
	if err != nil {
		return err
	}
	if !seen {
		return errors.New("empty FileTrailerProto")
	}
	return nil
}

// refReadProtoFields is readProtoFields as it was: it walks a protobuf message, calling fn for every field. Varint fields pass their value
// in v; length-delimited fields pass their bytes in data; fixed32/64 fields pass their value in v.
func refReadProtoFields(msg []byte, fn func(num, wt int, v uint64, data []byte) error) error {
	for len(msg) > 0 {
		tag, n := binary.Uvarint(msg)
		if n <= 0 {
			return errors.New("bad protobuf field tag")
		}
		msg = msg[n:]
		num, wt := int(tag>>3), int(tag&7)
		if num <= 0 {
			return fmt.Errorf("bad protobuf field number %d", num)
		}
		var v uint64
		var data []byte
		switch wt {
		case 0:
			v, n = binary.Uvarint(msg)
			if n <= 0 {
				return fmt.Errorf("bad varint in protobuf field %d", num)
			}
			msg = msg[n:]
		case 1:
			if len(msg) < 8 {
				return fmt.Errorf("truncated fixed64 protobuf field %d", num)
			}
			v = binary.LittleEndian.Uint64(msg)
			msg = msg[8:]
		case 2:
			l, n := binary.Uvarint(msg)
			if n <= 0 || l > uint64(len(msg)-n) {
				return fmt.Errorf("bad length of protobuf field %d", num)
			}
			data = msg[n : n+int(l)]
			msg = msg[n+int(l):]
		case 5:
			if len(msg) < 4 {
				return fmt.Errorf("truncated fixed32 protobuf field %d", num)
			}
			v = uint64(binary.LittleEndian.Uint32(msg))
			msg = msg[4:]
		default:
			return fmt.Errorf("unsupported protobuf wire type %d (field %d)", wt, num)
		}
		if err := fn(num, wt, v, data); err != nil {
			return err
		}
	}
	return nil
}
