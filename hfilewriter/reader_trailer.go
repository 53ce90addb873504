package hfilewriter

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// Trailer is the fixed file trailer of an HFile (§9 of the format spec): where the load-on-open section
// and the file info live, index shape, counts, comparator and compression codec.
type Trailer struct {
	MajorVersion              int              `json:"majorVersion"`
	MinorVersion              int              `json:"minorVersion"`
	Size                      int              `json:"trailerSize"` // 212 (v2) or 4096 (v3)
	Protobuf                  bool             `json:"protobuf"`    // false: legacy Writable trailer (v2 minor < 2)
	FileInfoOffset            int64            `json:"fileInfoOffset"`
	LoadOnOpenOffset          int64            `json:"loadOnOpenDataOffset"`
	UncompressedDataIndexSize uint64           `json:"uncompressedDataIndexSize"`
	TotalUncompressedBytes    uint64           `json:"totalUncompressedBytes"`
	DataIndexCount            uint32           `json:"dataIndexCount"`
	MetaIndexCount            uint32           `json:"metaIndexCount"`
	EntryCount                uint64           `json:"entryCount"`
	NumDataIndexLevels        uint32           `json:"numDataIndexLevels"`
	FirstDataBlockOffset      int64            `json:"firstDataBlockOffset"`
	LastDataBlockOffset       int64            `json:"lastDataBlockOffset"`
	ComparatorClassName       string           `json:"comparatorClassName"`
	Compression               CompressionCodec `json:"compressionCodec"`
	CompressionName           string           `json:"compression"`
	Encrypted                 bool             `json:"encrypted"`
}

// ErrNotHFile: the file does not end in an HFile trailer (another kind of file, or one cut short).
var ErrNotHFile = errors.New("not an HFile (no trailer)")

// trailerMagicAt reports whether a v2 or v3 trailer magic sits where the trailer would start: a file
// with one but an unknown version is an HFile of another version, one without is no HFile at all.
func trailerMagicAt(r readAtFunc, size int64) bool {
	for _, n := range []int64{TrailerSizeV2, TrailerSizeV3} {
		var m [8]byte
		if size >= n && r(m[:], size-n) == nil && string(m[:]) == string(TrailerMagic) {
			return true
		}
	}
	return false
}

// readTrailerSizeFor returns the trailer size of a major version.
func readTrailerSizeFor(major int) (int, error) {
	switch major {
	case 2:
		return TrailerSizeV2, nil
	case 3:
		return TrailerSizeV3, nil
	}
	return 0, fmt.Errorf("unsupported HFile major version %d (want 2 or 3)", major)
}

// readTrailer parses the trailer at the end of a file of the given size.
func readTrailer(r readAtFunc, size int64) (*Trailer, error) { return readTrailerBuf(r, size, nil) }

// readTrailerBuf is readTrailer reading the trailer's bytes into buf's array when it is large enough
// (the stream verifier's block buffer; the Trailer keeps none of them).
func readTrailerBuf(r readAtFunc, size int64, buf []byte) (*Trailer, error) {
	t := new(Trailer)
	if err := readTrailerInto(t, r, size, buf, nil); err != nil {
		return nil, err
	}
	return t, nil
}

// readTrailerInto is readTrailerBuf parsing into *t (overwritten whole), for a caller that keeps one
// Trailer from file to file (the stream verifier): it allocates nothing for a v3 trailer this
// package's Writer wrote. tail, when not nil, is the file's last len(tail) bytes, in memory: a trailer
// within them is parsed there instead of read into buf.
func readTrailerInto(t *Trailer, r readAtFunc, size int64, buf, tail []byte) error {
	*t = Trailer{}
	if size < 4 {
		return fmt.Errorf("%w: %d bytes", ErrNotHFile, size)
	}
	vb := buf[:0] // the version's 4 bytes: in buf when it has room (r may keep its argument: no array on the stack)
	if cap(vb) < 4 {
		vb = make([]byte, 4)
	}
	vb = vb[:4]
	if err := r(vb, size-4); err != nil {
		return fmt.Errorf("reading trailer version: %w", err)
	}
	v := binary.BigEndian.Uint32(vb)
	major, minor := int(v&0x00FFFFFF), int(v>>24)
	tsize, err := readTrailerSizeFor(major)
	if err != nil {
		if !trailerMagicAt(r, size) {
			return ErrNotHFile
		}
		return fmt.Errorf("trailer version bytes %08x: %w", v, err)
	}
	if major == 2 && minor < 1 {
		return fmt.Errorf("HFile v2 minor version %d has no block checksums; only minor versions 1-3 are supported", minor)
	}
	if minor > 3 {
		return fmt.Errorf("unsupported HFile minor version %d for major %d (max 3)", minor, major)
	}
	if size < int64(tsize) {
		return fmt.Errorf("file of %d bytes is smaller than the v%d trailer (%d bytes)", size, major, tsize)
	}
	if tsize <= len(tail) {
		buf = tail[len(tail)-tsize:]
	} else {
		if cap(buf) < tsize {
			buf = make([]byte, tsize)
		}
		buf = buf[:tsize]
		if err := r(buf, size-int64(tsize)); err != nil {
			return fmt.Errorf("reading trailer: %w", err)
		}
	}
	if string(buf[:8]) != string(TrailerMagic) {
		return fmt.Errorf("%w: no trailer magic %q at offset %d, found %q (truncated?)", ErrNotHFile, TrailerMagic, size-int64(tsize), buf[:8])
	}
	t.MajorVersion, t.MinorVersion, t.Size = major, minor, tsize
	body := buf[8 : tsize-4]
	if major == 2 && minor < 2 {
		err = t.readWritable(body)
	} else {
		t.Protobuf = true
		err = t.readProto(body)
	}
	if err != nil {
		return fmt.Errorf("parsing v%d.%d trailer: %w", major, minor, err)
	}
	t.CompressionName = t.Compression.String()
	return nil
}

func (t *Trailer) readWritable(b []byte) error {
	if len(b) < 68+128 {
		return errors.New("legacy trailer too short")
	}
	be := binary.BigEndian
	t.FileInfoOffset = int64(be.Uint64(b[0:]))
	t.LoadOnOpenOffset = int64(be.Uint64(b[8:]))
	t.DataIndexCount = be.Uint32(b[16:])
	t.UncompressedDataIndexSize = be.Uint64(b[20:])
	t.MetaIndexCount = be.Uint32(b[28:])
	t.TotalUncompressedBytes = be.Uint64(b[32:])
	t.EntryCount = be.Uint64(b[40:])
	t.Compression = CompressionCodec(be.Uint32(b[48:]))
	t.NumDataIndexLevels = be.Uint32(b[52:])
	t.FirstDataBlockOffset = int64(be.Uint64(b[56:]))
	t.LastDataBlockOffset = int64(be.Uint64(b[64:]))
	name := b[72 : 72+128]
	if i := bytes.IndexByte(name, 0); i >= 0 {
		name = name[:i]
	}
	t.ComparatorClassName = string(name)
	return nil
}

// readProto parses a varint32-delimited FileTrailerProto. It walks the fields itself (a varint field
// with a one-byte tag in place, others with nextProtoField, as readProtoFields does) rather than
// through a callback: every file of a load has one.
func (t *Trailer) readProto(b []byte) error {
	l, n := binary.Uvarint(b)
	if n <= 0 || l > uint64(len(b)-n) {
		return errors.New("bad FileTrailerProto length prefix")
	}
	msg := b[n : n+int(l)]
	if len(msg) == 0 {
		return errors.New("empty FileTrailerProto")
	}
	if rest, ok := t.readProtoInOrder(msg); ok {
		msg = rest // fields 1 to 12 as Writer writes them: the walk below takes any that follow
	}
	var f protoField
	for len(msg) > 0 {
		if c := msg[0]; c < 0x80 && c&7 == 0 && c >= 8 {
			// A varint field with a one-byte tag (all but the comparator's): walked here, a value
			// of one or two bytes (a trailer's counts, sizes and offsets of small files) without
			// the general varint loop.
			var x uint64
			var n int
			switch {
			case len(msg) > 1 && msg[1] < 0x80:
				x, n = uint64(msg[1]), 1
			case len(msg) > 2 && msg[2] < 0x80:
				x, n = uint64(msg[1]&0x7f)|uint64(msg[2])<<7, 2
			default:
				if x, n = binary.Uvarint(msg[1:]); n <= 0 {
					return fmt.Errorf("bad varint in protobuf field %d", c>>3)
				}
			}
			f.num, f.wt, f.v, f.data, msg = int(c>>3), 0, x, nil, msg[1+n:]
		} else {
			var err error
			if msg, err = nextProtoField(msg, &f); err != nil {
				return err
			}
		}
		v := f.v
		switch f.num {
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
			if f.wt != 2 {
				return fmt.Errorf("comparator_class_name has wire type %d", f.wt)
			}
			if string(f.data) == ComparatorKV { // what Writer and HBase write: no copy
				t.ComparatorClassName = ComparatorKV
			} else {
				t.ComparatorClassName = string(f.data)
			}
		case 12:
			t.Compression = CompressionCodec(v)
		case 13:
			t.Encrypted = f.wt == 2
		}
	}
	return nil
}

// readProtoInOrder parses the start of a FileTrailerProto message when it is what Writer (and HBase)
// writes: fields 1 to 10 as varints, 11 as bytes and 12 as a varint, in that order, each with a
// one-byte tag and 11 with a one-byte length. It then sets those fields as readProto's walk of them
// would and returns the bytes after field 12; otherwise it sets nothing (false), and the walk parses
// the message from its start. Each field is taken at its expected place, without the walk's tests
// of its tag and its switch on the field number: every file of a load has one trailer.
func (t *Trailer) readProtoInOrder(msg []byte) ([]byte, bool) {
	var v [10]uint64
	for i := range v {
		if len(msg) < 2 || msg[0] != byte(i+1)<<3 {
			return nil, false
		}
		switch {
		case msg[1] < 0x80:
			v[i], msg = uint64(msg[1]), msg[2:]
		case len(msg) > 2 && msg[2] < 0x80:
			v[i], msg = uint64(msg[1]&0x7f)|uint64(msg[2])<<7, msg[3:]
		default:
			x, n := binary.Uvarint(msg[1:])
			if n <= 0 {
				return nil, false
			}
			v[i], msg = x, msg[1+n:]
		}
	}
	if len(msg) < 2 || msg[0] != 11<<3|2 || msg[1] >= 0x80 || int(msg[1]) > len(msg)-2 {
		return nil, false
	}
	cmp := msg[2 : 2+int(msg[1])]
	msg = msg[2+len(cmp):]
	if len(msg) < 2 || msg[0] != 12<<3 || msg[1] >= 0x80 {
		return nil, false
	}
	codec := msg[1]
	t.FileInfoOffset, t.LoadOnOpenOffset = int64(v[0]), int64(v[1])
	t.UncompressedDataIndexSize, t.TotalUncompressedBytes = v[2], v[3]
	t.DataIndexCount, t.MetaIndexCount = uint32(v[4]), uint32(v[5])
	t.EntryCount, t.NumDataIndexLevels = v[6], uint32(v[7])
	t.FirstDataBlockOffset, t.LastDataBlockOffset = int64(v[8]), int64(v[9])
	if string(cmp) == ComparatorKV { // what Writer and HBase write: no copy
		t.ComparatorClassName = ComparatorKV
	} else {
		t.ComparatorClassName = string(cmp)
	}
	t.Compression = CompressionCodec(codec)
	return msg[2:], true
}

// readProtoFields walks a protobuf message, calling fn for every field. Varint fields pass their value
// in v; length-delimited fields pass their bytes in data; fixed32/64 fields pass their value in v.
func readProtoFields(msg []byte, fn func(num, wt int, v uint64, data []byte) error) error {
	var f protoField
	for len(msg) > 0 {
		var err error
		if msg, err = nextProtoField(msg, &f); err != nil {
			return err
		}
		if err := fn(f.num, f.wt, f.v, f.data); err != nil {
			return err
		}
	}
	return nil
}

// protoField is one field of a protobuf message: its number and wire type, a varint's or fixed
// field's value (v) or a length-delimited field's bytes (data).
type protoField struct {
	num, wt int
	v       uint64
	data    []byte
}

// nextProtoField parses the field msg starts with into *f and returns the bytes after it. A one-byte
// tag or varint (most of a trailer's) is taken without the general varint loop.
func nextProtoField(msg []byte, f *protoField) ([]byte, error) {
	var tag uint64
	if c := msg[0]; c < 0x80 {
		tag, msg = uint64(c), msg[1:]
	} else {
		t, n := binary.Uvarint(msg)
		if n <= 0 {
			return nil, errors.New("bad protobuf field tag")
		}
		tag, msg = t, msg[n:]
	}
	num, wt := int(tag>>3), int(tag&7)
	if num <= 0 {
		return nil, fmt.Errorf("bad protobuf field number %d", num)
	}
	f.num, f.wt, f.v, f.data = num, wt, 0, nil
	switch wt {
	case 0:
		if len(msg) > 0 && msg[0] < 0x80 {
			f.v, msg = uint64(msg[0]), msg[1:]
			break
		}
		v, n := binary.Uvarint(msg)
		if n <= 0 {
			return nil, fmt.Errorf("bad varint in protobuf field %d", num)
		}
		f.v, msg = v, msg[n:]
	case 1:
		if len(msg) < 8 {
			return nil, fmt.Errorf("truncated fixed64 protobuf field %d", num)
		}
		f.v, msg = binary.LittleEndian.Uint64(msg), msg[8:]
	case 2:
		l, n := binary.Uvarint(msg)
		if n <= 0 || l > uint64(len(msg)-n) {
			return nil, fmt.Errorf("bad length of protobuf field %d", num)
		}
		f.data, msg = msg[n:n+int(l)], msg[n+int(l):]
	case 5:
		if len(msg) < 4 {
			return nil, fmt.Errorf("truncated fixed32 protobuf field %d", num)
		}
		f.v, msg = uint64(binary.LittleEndian.Uint32(msg)), msg[4:]
	default:
		return nil, fmt.Errorf("unsupported protobuf wire type %d (field %d)", wt, num)
	}
	return msg, nil
}
