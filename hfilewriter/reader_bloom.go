package hfilewriter

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/hfload/hfload/internal/kv"
)

// readBloom is a compound bloom filter's metadata (§10.5).
type readBloom struct {
	BlockType     BlockType
	Offset        int64
	Version       int32
	TotalByteSize int64
	HashCount     int
	HashType      HashType
	TotalKeyCount int64
	TotalMaxKeys  int64
	Comparator    string
	Chunks        []readIndexEntry
}

func readBloomMeta(b *readBlock) (*readBloom, error) {
	m := new(readBloom)
	if err := readBloomMetaInto(m, b); err != nil {
		return nil, err
	}
	return m, nil
}

// readBloomMetaInto is readBloomMeta parsing into *m (overwritten whole, its chunk array reused).
func readBloomMetaInto(m *readBloom, b *readBlock) error {
	p := b.Payload
	fail := func(format string, a ...any) error {
		return fmt.Errorf("%s: %s", b.describe(), fmt.Sprintf(format, a...))
	}
	if len(p) < 40 {
		return fail("bloom metadata of %d bytes too short", len(p))
	}
	be := binary.BigEndian
	*m = readBloom{BlockType: b.Header.Type, Offset: b.Offset, Chunks: m.Chunks[:0]}
	m.Version = int32(be.Uint32(p))
	if m.Version != 3 {
		return fail("bloom filter version %d, only 3 (compound) is supported", m.Version)
	}
	m.TotalByteSize = int64(be.Uint64(p[4:]))
	m.HashCount = int(int32(be.Uint32(p[12:])))
	m.HashType = HashType(int32(be.Uint32(p[16:])))
	m.TotalKeyCount = int64(be.Uint64(p[20:]))
	m.TotalMaxKeys = int64(be.Uint64(p[28:]))
	n := int(int32(be.Uint32(p[36:])))
	if m.HashCount <= 0 || m.HashCount > 1000 {
		return fail("bloom hash count %d", m.HashCount)
	}
	if m.HashType < HashJenkins || m.HashType > HashMurmur3 {
		return fail("unknown bloom hash type %d", m.HashType)
	}
	cmp, k, err := ReadByteArray(p[40:])
	if err != nil {
		return fail("bloom comparator name: %v", err)
	}
	m.Comparator = readBloomComparator(cmp)
	chunks, _, err := readRootIndexInto(m.Chunks, p[40+k:], n)
	if err != nil {
		return fail("bloom chunk index: %v", err)
	}
	m.Chunks = chunks
	return nil
}

// readBloomComparator returns the bloom metadata's comparator name as a string: the names Writer
// writes (none for ROW, HBase 2.x's for ROWCOL) and HBase 1.x's without a copy.
func readBloomComparator(b []byte) string {
	switch string(b) {
	case "":
		return ""
	case bloomComparatorRowCol:
		return bloomComparatorRowCol
	case ComparatorKV:
		return ComparatorKV
	}
	return string(b)
}

// bloomKeyFor builds the bytes HBase hashes for a lookup: the row (ROW, delete-family) or, for ROWCOL,
// the flat key (row, empty family, qualifier, LATEST_TIMESTAMP, Maximum).
func readBloomHashKey(typ BloomType, row, qualifier []byte) []byte {
	if typ == BloomRowCol {
		return kv.AppendKey(nil, row, nil, qualifier, kv.LatestTimestamp, kv.TypeMaximum)
	}
	return row
}

// chunkFor returns the index of the chunk whose first key is the last one <= the lookup, or -1.
// For ROWCOL the search key is a flat key with the family when the chunk keys have one (HBase 2.x)
// and without (HBase 1.x).
func (m *readBloom) chunkFor(typ BloomType, row, family, qualifier []byte) (int, []byte, error) {
	if len(m.Chunks) == 0 {
		return -1, nil, nil
	}
	if typ != BloomRowCol {
		i := sort.Search(len(m.Chunks), func(i int) bool { return bytes.Compare(m.Chunks[i].Key, row) > 0 })
		return i - 1, row, nil
	}
	for _, c := range m.Chunks {
		if !Key(c.Key).Valid() {
			return -1, nil, fmt.Errorf("ROWCOL bloom chunk key %s is not a flat key", kv.ToStringBinary(c.Key))
		}
	}
	fam := family
	if len(Key(m.Chunks[0].Key).Family()) == 0 {
		fam = nil
	}
	search := kv.AppendKey(nil, row, fam, qualifier, kv.LatestTimestamp, kv.TypeMaximum)
	i := sort.Search(len(m.Chunks), func(i int) bool { return kv.CompareKeys(m.Chunks[i].Key, search) > 0 })
	return i - 1, search, nil
}

// readBloomTest checks the hashCount bits of key in one chunk's bit array.
func readBloomTest(m *readBloom, bits []byte, key []byte) bool {
	if len(bits) == 0 {
		return false
	}
	return BloomContains(bits, m.HashType, key, m.HashCount)
}

// bloomChunk loads (and caches) a chunk's bit array.
func (r *Reader) bloomChunk(m *readBloom, i int, cache map[int64][]byte) ([]byte, error) {
	c := m.Chunks[i]
	if bits, ok := cache[c.Offset]; ok {
		return bits, nil
	}
	b, err := r.readBlockOfType(c.Offset, r.blockLimit(), c.Size, BlockBloomChunk)
	if err != nil {
		return nil, fmt.Errorf("bloom chunk %d: %w", i, err)
	}
	cache[c.Offset] = b.Payload
	return b.Payload, nil
}

// fileFamily is the column family of the file's cells (from the first key), used for ROWCOL lookups.
func (r *Reader) fileFamily() []byte {
	if r.firstKey != nil {
		return Key(r.firstKey).Family()
	}
	if r.lastKey != nil {
		return Key(r.lastKey).Family()
	}
	return nil
}

// bloomLookup answers a lookup in m (general or delete-family) with the given chunk cache.
func (r *Reader) bloomLookup(m *readBloom, typ BloomType, row, qualifier []byte, cache map[int64][]byte) (bool, error) {
	i, search, err := m.chunkFor(typ, row, r.fileFamily(), qualifier)
	if err != nil {
		return false, err
	}
	if i < 0 {
		return false, nil
	}
	if m == r.generalBloom {
		if last, ok := r.fileInfoAt(slotLastBloomKey); ok {
			if typ == BloomRowCol {
				if Key(last).Valid() {
					s := search
					if (len(Key(last).Family()) == 0) != (len(Key(search).Family()) == 0) {
						fam := Key(last).Family()
						s = kv.AppendKey(nil, row, fam, qualifier, kv.LatestTimestamp, kv.TypeMaximum)
					}
					if kv.CompareKeys(s, last) > 0 {
						return false, nil
					}
				}
			} else if bytes.Compare(row, last) > 0 {
				return false, nil
			}
		}
	}
	bits, err := r.bloomChunk(m, i, cache)
	if err != nil {
		return false, err
	}
	return readBloomTest(m, bits, readBloomHashKey(typ, row, qualifier)), nil
}

// MayContain consults the general bloom filter: false means no cell with this row (ROW) or this
// row and qualifier (ROWCOL) is in the file; true means it may be. Without a general bloom, or with
// one of a type other than ROW and ROWCOL (e.g. ROWPREFIX_FIXED_LENGTH), it returns true. The
// qualifier is ignored for ROW blooms.
func (r *Reader) MayContain(row, qualifier []byte) (bool, error) {
	if r.generalBloom == nil {
		return true, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	ok, err := r.bloomLookup(r.generalBloom, r.bloomType, row, qualifier, r.bloomCache)
	if err != nil {
		return false, fmt.Errorf("hfile: bloom lookup: %w", err)
	}
	return ok, nil
}

// MayContainDeleteFamily consults the delete-family bloom filter (keyed by row). Without one it
// returns true when the file info's DELETE_FAMILY_COUNT is absent or non-zero, false when it is 0.
func (r *Reader) MayContainDeleteFamily(row []byte) (bool, error) {
	if r.deleteBloom == nil {
		n, ok, _ := r.fileInfoLongAt(slotDeleteFamilyCnt)
		return !ok || n != 0, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	ok, err := r.bloomLookup(r.deleteBloom, BloomRow, row, nil, r.bloomCache)
	if err != nil {
		return false, fmt.Errorf("hfile: delete-family bloom lookup: %w", err)
	}
	return ok, nil
}
