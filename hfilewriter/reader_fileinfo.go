package hfilewriter

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/hfload/hfload/internal/kv"
)

// FileInfoEntry is one file-info key/value pair, in file order.
type FileInfoEntry struct {
	Key   string
	Value []byte
}

var pbMagic = []byte("PBUF")

// readFileInfo parses a FILEINF2 payload: "PBUF" + delimited FileInfoProto, or the legacy Writable map.
func readFileInfo(b []byte) ([]FileInfoEntry, error) { return readFileInfoInto(nil, b, nil) }

// readFileInfoInto is readFileInfo appending the entries to dst[:0] (its array reused) when they have
// the form Writer and HBase write. With a layout (the stream verifier's Reader, which parses the file
// info of every file of a load), a payload that has the last one's layout takes its entries from it
// (fileInfoLayout.match); otherwise the payload is parsed and, in the usual form, its layout kept.
// With a layout the caller does not change the entries returned: passed back as dst with a payload
// in the same bytes, they may be returned again as they are.
func readFileInfoInto(dst []FileInfoEntry, b []byte, layout *fileInfoLayout) ([]FileInfoEntry, error) {
	if layout != nil {
		if out, ok := layout.match(dst, b); ok {
			return out, nil
		}
		out, err := readFileInfoInto(dst, b, nil)
		layout.remember(b, out, err == nil && bytes.HasPrefix(b, pbMagic))
		return out, err
	}
	if bytes.HasPrefix(b, pbMagic) {
		b = b[len(pbMagic):]
		l, n := binary.Uvarint(b)
		if n <= 0 || l > uint64(len(b)-n) {
			return nil, errors.New("bad FileInfoProto length prefix")
		}
		msg := b[n : n+int(l)]
		if out, ok := readFileInfoPairs(dst, msg); ok {
			return out, nil
		}
		return readFileInfoFields(msg)
	}
	// Legacy Writable form: int32 count, then (byteArray key, int8 type, byteArray value)*.
	if len(b) < 4 {
		return nil, errors.New("file info too short")
	}
	n := int(int32(binary.BigEndian.Uint32(b)))
	b = b[4:]
	if n < 0 || n > len(b)/3 {
		return nil, fmt.Errorf("legacy file info claims %d entries in %d bytes", n, len(b))
	}
	out := make([]FileInfoEntry, 0, n)
	for i := 0; i < n; i++ {
		k, m, err := ReadByteArray(b)
		if err != nil {
			return nil, fmt.Errorf("legacy file info entry %d key: %w", i, err)
		}
		b = b[m:]
		if len(b) < 1 {
			return nil, fmt.Errorf("legacy file info entry %d truncated", i)
		}
		b = b[1:]
		v, m, err := ReadByteArray(b)
		if err != nil {
			return nil, fmt.Errorf("legacy file info entry %d value: %w", i, err)
		}
		b = b[m:]
		out = append(out, FileInfoEntry{Key: string(k), Value: v})
	}
	return out, nil
}

// readFileInfoFields parses a FileInfoProto field by field: any field order, unknown fields skipped, a
// precise error for a malformed one.
func readFileInfoFields(msg []byte) ([]FileInfoEntry, error) {
	out := make([]FileInfoEntry, 0, fileInfoEntries)
	err := readProtoFields(msg, func(num, wt int, _ uint64, data []byte) error {
		if num != 1 || wt != 2 {
			return nil
		}
		var e FileInfoEntry
		var haveK, haveV bool
		err := readProtoFields(data, func(num, wt int, _ uint64, d []byte) error {
			if wt != 2 {
				return nil
			}
			switch num {
			case 1:
				e.Key, haveK = fileInfoKey(d), true
			case 2:
				e.Value, haveV = d, true
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("file info entry %d: %w", len(out), err)
		}
		if !haveK || !haveV {
			return fmt.Errorf("file info entry %d lacks its key or value", len(out))
		}
		out = append(out, e)
		return nil
	})
	return out, err
}

// readFileInfoPairs parses a FileInfoProto in the form HBase and Writer write it: only map_entry
// fields (1, length-delimited), each exactly {first = 1, second = 2} in that order, with one-byte
// tags and varint lengths. It reports false for anything else (other fields, another order, a
// malformed or truncated message), which readFileInfo's general parse then handles or reports.
//
// The entries go to dst[:0]. When dst's array holds the previous file's entries (the stream verifier
// parses every file's info into one array), the key at each position is first compared with the one
// the previous file had there: the files of a load have the same keys in the same order, so most keys
// are taken without searching fileInfoKey's list.
func readFileInfoPairs(dst []FileInfoEntry, msg []byte) ([]FileInfoEntry, bool) {
	out := dst[:0]
	if out == nil {
		out = make([]FileInfoEntry, 0, fileInfoEntries)
	}
	prev := out[:cap(out)]
	for len(msg) > 0 {
		if msg[0] != 0x0A {
			return nil, false
		}
		l, n := readProtoLen(msg[1:])
		if n <= 0 || l > uint64(len(msg)-1-n) {
			return nil, false
		}
		pair := msg[1+n : 1+n+int(l)]
		msg = msg[1+n+int(l):]
		key, pair, ok := readBytesField(pair, 0x0A)
		if !ok {
			return nil, false
		}
		value, pair, ok := readBytesField(pair, 0x12)
		if !ok || len(pair) != 0 {
			return nil, false
		}
		var k string
		if i := len(out); i < len(prev) && string(key) == prev[i].Key {
			k = prev[i].Key
		} else {
			k = fileInfoKey(key)
		}
		out = append(out, FileInfoEntry{Key: k, Value: value})
	}
	return out, true
}

// readBytesField reads a length-delimited field with the one-byte tag from the start of b.
func readBytesField(b []byte, tag byte) (field, rest []byte, ok bool) {
	if len(b) == 0 || b[0] != tag {
		return nil, nil, false
	}
	l, n := readProtoLen(b[1:])
	if n <= 0 || l > uint64(len(b)-1-n) {
		return nil, nil, false
	}
	return b[1+n : 1+n+int(l)], b[1+n+int(l):], true
}

// readProtoLen is binary.Uvarint with the one-byte case (every file info key and most values) inline.
func readProtoLen(b []byte) (uint64, int) {
	if len(b) > 0 && b[0] < 0x80 {
		return uint64(b[0]), 1
	}
	return binary.Uvarint(b)
}

// FileInfo returns the file-info entries in file order.
func (r *Reader) FileInfo() []FileInfoEntry { return r.fileInfo }

// FileInfoValue returns the raw value of a file-info key (the first entry with it).
func (r *Reader) FileInfoValue(key string) ([]byte, bool) {
	if s, ok := fileInfoSlotOf(key); ok {
		return r.fileInfoAt(s)
	}
	for _, e := range r.fileInfo {
		if e.Key == key {
			return e.Value, true
		}
	}
	return nil, false
}

// FileInfoInt returns a file-info value stored as a big-endian int32.
func (r *Reader) FileInfoInt(key string) (int32, bool, error) {
	v, ok := r.FileInfoValue(key)
	return fileInfoInt(key, v, ok)
}

// FileInfoLong returns a file-info value stored as a big-endian int64.
func (r *Reader) FileInfoLong(key string) (int64, bool, error) {
	v, ok := r.FileInfoValue(key)
	return fileInfoLong(key, v, ok)
}

// fileInfoIntAt is FileInfoInt for the key of slot s.
func (r *Reader) fileInfoIntAt(s fileInfoSlot) (int32, bool, error) {
	v, ok := r.fileInfoAt(s)
	return fileInfoInt(fileInfoSlotKey(s), v, ok)
}

// fileInfoLongAt is FileInfoLong for the key of slot s.
func (r *Reader) fileInfoLongAt(s fileInfoSlot) (int64, bool, error) {
	v, ok := r.fileInfoAt(s)
	return fileInfoLong(fileInfoSlotKey(s), v, ok)
}

func fileInfoInt(key string, v []byte, ok bool) (int32, bool, error) {
	if !ok {
		return 0, false, nil
	}
	if len(v) != 4 {
		return 0, true, fmt.Errorf("file info %s is %d bytes, want a 4-byte int", key, len(v))
	}
	return int32(binary.BigEndian.Uint32(v)), true, nil
}

func fileInfoLong(key string, v []byte, ok bool) (int64, bool, error) {
	if !ok {
		return 0, false, nil
	}
	if len(v) != 8 {
		return 0, true, fmt.Errorf("file info %s is %d bytes, want an 8-byte long", key, len(v))
	}
	return int64(binary.BigEndian.Uint64(v)), true, nil
}

// FileInfoBool returns a file-info value stored as a Java boolean (1 byte, non-zero = true).
func (r *Reader) FileInfoBool(key string) (bool, bool, error) {
	v, ok := r.FileInfoValue(key)
	if !ok {
		return false, false, nil
	}
	if len(v) != 1 {
		return false, true, fmt.Errorf("file info %s is %d bytes, want a 1-byte boolean", key, len(v))
	}
	return v[0] != 0, true, nil
}

// fileInfoSlot numbers the file info keys the Reader and the verifier look up themselves: every file
// a load writes is read back with about a dozen lookups, which went through the ~20 entries one by
// one. Reader.fileInfoIdx holds where each of these keys is in Reader.fileInfo.
type fileInfoSlot uint8

const (
	slotMaxTagsLen fileInfoSlot = iota
	slotTagsCompressed
	slotKeyValueVersion
	slotMaxMemstoreTS
	slotDataBlockEnc
	slotBloomType
	slotLastKey
	slotLastBloomKey
	slotDeleteFamilyCnt
	slotAvgKeyLen
	slotAvgValueLen
	fileInfoSlots // how many
)

// fileInfoSlotOf returns the slot of key, if it has one.
func fileInfoSlotOf(key string) (fileInfoSlot, bool) {
	switch key {
	case FileInfoMaxTagsLen:
		return slotMaxTagsLen, true
	case FileInfoTagsCompressed:
		return slotTagsCompressed, true
	case FileInfoKeyValueVersion:
		return slotKeyValueVersion, true
	case FileInfoMaxMemstoreTS:
		return slotMaxMemstoreTS, true
	case FileInfoDataBlockEnc:
		return slotDataBlockEnc, true
	case FileInfoBloomType:
		return slotBloomType, true
	case FileInfoLastKey:
		return slotLastKey, true
	case FileInfoLastBloomKey:
		return slotLastBloomKey, true
	case FileInfoDeleteFamilyCnt:
		return slotDeleteFamilyCnt, true
	case FileInfoAvgKeyLen:
		return slotAvgKeyLen, true
	case FileInfoAvgValueLen:
		return slotAvgValueLen, true
	}
	return 0, false
}

// fileInfoSlotKey is the key of slot s (fileInfoSlotOf's inverse).
func fileInfoSlotKey(s fileInfoSlot) string {
	switch s {
	case slotMaxTagsLen:
		return FileInfoMaxTagsLen
	case slotTagsCompressed:
		return FileInfoTagsCompressed
	case slotKeyValueVersion:
		return FileInfoKeyValueVersion
	case slotMaxMemstoreTS:
		return FileInfoMaxMemstoreTS
	case slotDataBlockEnc:
		return FileInfoDataBlockEnc
	case slotBloomType:
		return FileInfoBloomType
	case slotLastKey:
		return FileInfoLastKey
	case slotLastBloomKey:
		return FileInfoLastBloomKey
	case slotDeleteFamilyCnt:
		return FileInfoDeleteFamilyCnt
	case slotAvgKeyLen:
		return FileInfoAvgKeyLen
	case slotAvgValueLen:
		return FileInfoAvgValueLen
	}
	return ""
}

// fileInfoIndex is where each slot's key first appears in a file info's entries: its index plus
// one, 0 where the key is absent.
type fileInfoIndex [fileInfoSlots]int32

// indexFileInfo returns the index of entries.
func indexFileInfo(entries []FileInfoEntry) fileInfoIndex {
	var idx fileInfoIndex
	for i, e := range entries {
		if s, ok := fileInfoSlotOf(e.Key); ok && idx[s] == 0 {
			idx[s] = int32(i + 1)
		}
	}
	return idx
}

// fileInfoAt returns the value of slot s's key (the first entry with it).
func (r *Reader) fileInfoAt(s fileInfoSlot) ([]byte, bool) {
	if i := r.fileInfoIdx[s]; i > 0 {
		return r.fileInfo[i-1].Value, true
	}
	return nil, false
}

// readTimeRange decodes a TIMERANGE value: two int64s (HBase 1.x pads to 32 bytes) or "PBUF" +
// TimeRangeTracker{from=1, to=2} (HBase 2.0.0-2.0.1).
func readTimeRange(v []byte) (minTS, maxTS int64, err error) {
	if bytes.HasPrefix(v, pbMagic) {
		minTS, maxTS = 0, kv.LatestTimestamp
		err = readProtoFields(v[len(pbMagic):], func(num, wt int, x uint64, _ []byte) error {
			switch num {
			case 1:
				minTS = int64(x)
			case 2:
				maxTS = int64(x)
			}
			return nil
		})
		return minTS, maxTS, err
	}
	if len(v) < 16 {
		return 0, 0, fmt.Errorf("TIMERANGE is %d bytes, want at least 16", len(v))
	}
	return int64(binary.BigEndian.Uint64(v)), int64(binary.BigEndian.Uint64(v[8:])), nil
}

// fileInfoKey returns d as a string: the constant for the keys HBase's writers set (no allocation for
// each of the ~20 entries of every file the stream verifier reads back), a copy for any other key.
func fileInfoKey(d []byte) string {
	switch string(d) {
	case FileInfoLastKey:
		return FileInfoLastKey
	case FileInfoAvgKeyLen:
		return FileInfoAvgKeyLen
	case FileInfoAvgValueLen:
		return FileInfoAvgValueLen
	case FileInfoCreateTime:
		return FileInfoCreateTime
	case FileInfoMaxTagsLen:
		return FileInfoMaxTagsLen
	case FileInfoTagsCompressed:
		return FileInfoTagsCompressed
	case FileInfoLenOfBiggestCell:
		return FileInfoLenOfBiggestCell
	case FileInfoKeyOfBiggestCell:
		return FileInfoKeyOfBiggestCell
	case FileInfoKeyValueVersion:
		return FileInfoKeyValueVersion
	case FileInfoMaxMemstoreTS:
		return FileInfoMaxMemstoreTS
	case FileInfoDataBlockEnc:
		return FileInfoDataBlockEnc
	case FileInfoBloomType:
		return FileInfoBloomType
	case FileInfoBloomParam:
		return FileInfoBloomParam
	case FileInfoLastBloomKey:
		return FileInfoLastBloomKey
	case FileInfoDeleteFamilyCnt:
		return FileInfoDeleteFamilyCnt
	case FileInfoTimeRange:
		return FileInfoTimeRange
	case FileInfoEarliestPutTS:
		return FileInfoEarliestPutTS
	case FileInfoMaxSeqID:
		return FileInfoMaxSeqID
	case FileInfoMajorCompaction:
		return FileInfoMajorCompaction
	case FileInfoExcludeMinor:
		return FileInfoExcludeMinor
	case FileInfoBulkloadTime:
		return FileInfoBulkloadTime
	case FileInfoBulkloadTask:
		return FileInfoBulkloadTask
	case FileInfoHistorical:
		return FileInfoHistorical
	}
	return string(d)
}

// fileInfoLayout is the layout of the last file info payload a stream verifier's Reader parsed: its
// bytes, and each entry's key and where its value lies. The files of a load have the same keys in the
// same order and mostly values of the same lengths: a payload whose bytes outside the values are the
// last one's parses into the same entries with values at the same offsets, which match takes without
// parsing the entries again. match puts each payload's values into payload: outside the values it
// stays the bytes of the payload remembered.
type fileInfoLayout struct {
	payload []byte        // a copy of the last payload parsed in the usual form (nil: none), values of later matches in
	keys    []string      // its entries' keys
	values  [][2]int32    // its entries' values: offset and length in payload, in payload order
	index   fileInfoIndex // indexFileInfo of its entries

	// last and base: the entries match or readFileInfoInto last returned, and the address of the
	// payload they point into. The stream verifier reads each file's info into the same place of its
	// arena and hands the last entries back as dst: entries of a payload there with the layout's
	// bytes outside the values are those, as they are.
	last []FileInfoEntry
	base *byte
}

// match returns the entries of payload b in dst[:0] if b has the layout's bytes outside the values.
func (l *fileInfoLayout) match(dst []FileInfoEntry, b []byte) ([]FileInfoEntry, bool) {
	if l.payload == nil || len(b) != len(l.payload) {
		return nil, false
	}
	// b's values into the layout's payload, then one compare of the whole: equal when b's bytes
	// outside the values are the layout's. (Either way the payload is the layout's bytes with some
	// values replaced: outside the values, unchanged.)
	p := l.payload
	for _, v := range l.values {
		off, n := int(v[0]), int(v[1])
		switch n {
		case 8:
			binary.LittleEndian.PutUint64(p[off:off+8], binary.LittleEndian.Uint64(b[off:off+8]))
		case 4:
			binary.LittleEndian.PutUint32(p[off:off+4], binary.LittleEndian.Uint32(b[off:off+4]))
		case 1:
			p[off] = b[off]
		default:
			copy(p[off:off+n], b[off:off+n])
		}
	}
	if string(b) != string(p) {
		return nil, false
	}
	n := len(l.values)
	if n > 0 && len(l.last) == n && cap(dst) >= n && &dst[:n][0] == &l.last[0] && l.base == &b[0] {
		return dst[:n], true // the entries returned last, into the same bytes
	}
	out := dst[:0]
	for i, v := range l.values {
		off, end := int(v[0]), int(v[0])+int(v[1])
		out = append(out, FileInfoEntry{Key: l.keys[i], Value: b[off:end:end]})
	}
	l.last, l.base = out, &b[0]
	return out, true
}

// remember keeps the layout of payload b, parsed into entries (ok: in the usual form, without error);
// otherwise it forgets the last one.
func (l *fileInfoLayout) remember(b []byte, entries []FileInfoEntry, ok bool) {
	l.payload, l.keys, l.values = l.payload[:0], l.keys[:0], l.values[:0]
	l.last, l.base = nil, nil // dst's entries are b's now, or nothing kept
	pos := 0
	for _, e := range entries {
		// A value is a slice of b, in order, ending within it: its offset is how much shorter its
		// capacity is than b's.
		off := cap(b) - cap(e.Value)
		if !ok || off < pos || off+len(e.Value) > len(b) || len(b) > math.MaxInt32 {
			ok = false
			break
		}
		l.keys = append(l.keys, e.Key)
		l.values = append(l.values, [2]int32{int32(off), int32(len(e.Value))})
		pos = off + len(e.Value)
	}
	if !ok {
		l.payload, l.keys, l.values = nil, l.keys[:0], l.values[:0]
		return
	}
	l.payload = append(l.payload, b...)
	l.index = indexFileInfo(entries)
}
