package hfilewriter

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/hfload/hfload/internal/kv"
)

// readIndexEntry is one block index entry: the block's offset, its on-disk size with header, and its key
// (a flat key for the data index, a name for the meta index, a bloom key for bloom chunk indexes).
type readIndexEntry struct {
	Offset int64
	Size   int
	Key    []byte
}

// readMidKeyInfo is the mid-key metadata appended to a multi-level data root index (§7.2).
type readMidKeyInfo struct {
	LeafOffset int64
	LeafSize   int
	EntryIndex int
}

// readRootIndex parses n root-format entries (§7.1) and returns them and the unread rest of b.
func readRootIndex(b []byte, n int) ([]readIndexEntry, []byte, error) {
	return readRootIndexInto(nil, b, n)
}

// readRootIndexInto is readRootIndex appending the entries to dst[:0] (its array reused when large
// enough).
func readRootIndexInto(dst []readIndexEntry, b []byte, n int) ([]readIndexEntry, []byte, error) {
	if n < 0 || n > len(b)/13+1 {
		return nil, nil, fmt.Errorf("root index claims %d entries in %d bytes", n, len(b))
	}
	entries := dst[:0]
	if cap(entries) < n {
		entries = make([]readIndexEntry, 0, n)
	}
	for i := 0; i < n; i++ {
		if len(b) < 12 {
			return nil, nil, fmt.Errorf("root index entry %d of %d truncated", i, n)
		}
		e := readIndexEntry{Offset: int64(binary.BigEndian.Uint64(b)), Size: int(int32(binary.BigEndian.Uint32(b[8:])))}
		key, m, err := ReadByteArray(b[12:])
		if err != nil {
			return nil, nil, fmt.Errorf("root index entry %d of %d: key: %w", i, n, err)
		}
		e.Key = key
		if err := readCheckIndexEntry(e); err != nil {
			return nil, nil, fmt.Errorf("root index entry %d of %d: %w", i, n, err)
		}
		entries = append(entries, e)
		b = b[12+m:]
	}
	return entries, b, nil
}

func readCheckIndexEntry(e readIndexEntry) error {
	if e.Offset < 0 {
		return fmt.Errorf("negative block offset %d", e.Offset)
	}
	if e.Size < BlockHeaderSize {
		return fmt.Errorf("block size %d smaller than a block header", e.Size)
	}
	return nil
}

// readNonRootIndex parses a leaf or intermediate index block payload (§7.3).
func readNonRootIndex(b []byte) ([]readIndexEntry, error) { return readNonRootIndexInto(nil, b) }

// readNonRootIndexInto is readNonRootIndex appending the entries to dst[:0] (its array reused when
// large enough).
func readNonRootIndexInto(dst []readIndexEntry, b []byte) ([]readIndexEntry, error) {
	if len(b) < 4 {
		return nil, errors.New("non-root index block too short for its entry count")
	}
	n := int(int32(binary.BigEndian.Uint32(b)))
	if n < 0 || n > (len(b)-8)/16 {
		return nil, fmt.Errorf("non-root index claims %d entries in %d bytes", n, len(b))
	}
	entriesStart := 4 * (n + 2)
	if entriesStart > len(b) {
		return nil, fmt.Errorf("non-root index secondary index of %d entries truncated", n)
	}
	area := b[entriesStart:]
	sec := func(i int) int { return int(int32(binary.BigEndian.Uint32(b[4+4*i:]))) }
	if sec(0) != 0 {
		return nil, fmt.Errorf("non-root index secondary index starts at %d, want 0", sec(0))
	}
	if sec(n) != len(area) {
		return nil, fmt.Errorf("non-root index entries area is %d bytes, secondary index says %d", len(area), sec(n))
	}
	entries := dst[:0]
	if cap(entries) < n {
		entries = make([]readIndexEntry, 0, n)
	}
	for i := 0; i < n; i++ {
		s, e := sec(i), sec(i+1)
		if s < 0 || e < s+12 || e > len(area) {
			return nil, fmt.Errorf("non-root index entry %d has bad bounds [%d, %d)", i, s, e)
		}
		ent := readIndexEntry{
			Offset: int64(binary.BigEndian.Uint64(area[s:])),
			Size:   int(int32(binary.BigEndian.Uint32(area[s+8:]))),
			Key:    area[s+12 : e],
		}
		if err := readCheckIndexEntry(ent); err != nil {
			return nil, fmt.Errorf("non-root index entry %d: %w", i, err)
		}
		entries = append(entries, ent)
	}
	return entries, nil
}

// readIndexWalk holds what walking the data index found.
type readIndexWalk struct {
	DataBlocks         []readIndexEntry // leaf-level entries, in order
	LeafBlocks         []readIndexEntry
	IntermediateBlocks []readIndexEntry
	visited            map[int64]bool     // index blocks already read (each must be referenced once)
	children           [][]readIndexEntry // by depth: the entries of the index block being walked there
}

// reset empties w for another walk, keeping its storage.
func (w *readIndexWalk) reset() {
	clear(w.visited)
	w.DataBlocks, w.LeafBlocks, w.IntermediateBlocks = w.DataBlocks[:0], w.LeafBlocks[:0], w.IntermediateBlocks[:0]
}

// walkDataIndex descends the multi-level data index from the root to the leaf level. With check set it
// also verifies that each child block's first key is >= the key that points to it. A Reader with a
// walk of its own (the stream verifier's, used by one goroutine) reuses it; any other Reader, safe for
// concurrent use, makes a new one each time.
func (r *Reader) walkDataIndex() (*readIndexWalk, error) {
	w := r.walk
	if w == nil {
		w = &readIndexWalk{visited: map[int64]bool{}}
	} else {
		w.reset()
	}
	levels := int(r.trailer.NumDataIndexLevels)
	if levels < 1 {
		if len(r.rootIndex) == 0 {
			return w, nil
		}
		return nil, fmt.Errorf("trailer says %d data index levels but the root index has %d entries", levels, len(r.rootIndex))
	}
	if levels > 16 {
		return nil, fmt.Errorf("trailer says %d data index levels (max 16)", levels)
	}
	if err := r.walkIndexLevel(w, r.rootIndex, 1, levels); err != nil {
		return nil, err
	}
	return w, nil
}

func (r *Reader) walkIndexLevel(w *readIndexWalk, entries []readIndexEntry, depth, levels int) error {
	if depth == levels {
		w.DataBlocks = append(w.DataBlocks, entries...)
		// Every data block takes at least a header's worth of file.
		if int64(len(w.DataBlocks)) > r.size/BlockHeaderSize {
			return fmt.Errorf("data index lists more blocks (%d) than the file can hold", len(w.DataBlocks))
		}
		return nil
	}
	want, kind := BlockIntermediateIndex, "intermediate"
	if depth == levels-1 {
		want, kind = BlockLeafIndex, "leaf"
	}
	for i, e := range entries {
		if w.visited[e.Offset] {
			return fmt.Errorf("data index level %d entry %d points again at the index block at offset %d", depth, i, e.Offset)
		}
		w.visited[e.Offset] = true
		b, err := r.readBlockOfType(e.Offset, r.loadOnOpenEnd(), e.Size, want)
		if err != nil {
			return fmt.Errorf("data index level %d entry %d (key %s): %w", depth, i, Key(e.Key).String(), err)
		}
		for len(w.children) <= depth {
			w.children = append(w.children, nil)
		}
		children, err := readNonRootIndexInto(w.children[depth], b.Payload)
		w.children[depth] = children[:0]
		if err != nil {
			return fmt.Errorf("%s index block at offset %d: %w", kind, e.Offset, err)
		}
		if len(children) == 0 {
			return fmt.Errorf("%s index block at offset %d has no entries", kind, e.Offset)
		}
		if Key(e.Key).Valid() && Key(children[0].Key).Valid() && kv.CompareKeys(children[0].Key, e.Key) < 0 {
			return fmt.Errorf("%s index block at offset %d: first key %s is below its parent's key %s",
				kind, e.Offset, Key(children[0].Key), Key(e.Key))
		}
		if depth == levels-1 {
			w.LeafBlocks = append(w.LeafBlocks, e)
		} else {
			w.IntermediateBlocks = append(w.IntermediateBlocks, e)
		}
		if err := r.walkIndexLevel(w, children, depth+1, levels); err != nil {
			return err
		}
	}
	return nil
}
