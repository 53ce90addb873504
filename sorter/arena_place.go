package sorter

import "encoding/binary"

// placeRun places records from the front of recs as placeLocked does (s.mu held), in one loop, while
// each needs nothing placeLocked's other steps do: the current slab has room for it, the index has
// room for its entry, its length (17 to 127 bytes) fits the one-byte uvarint in front of it, and no
// other sorter asks s to spill (pleaseSpill, checked before every record as AddRecords does). It
// returns how many it placed; the caller places the next one, if any, through placeLocked. The records
// are validated (a record's row starts at byte 1 and is shorter than the record).
func (s *Sorter) placeRun(recs []Record) int {
	if s.cur < 0 || s.noPlaceRun {
		return 0
	}
	slab, used, idx := s.a.slabs[s.cur], s.slabUsed, s.a.idx
	slabID := uint32(s.cur)
	k := 0
	for ; k < len(recs); k++ {
		rec := recs[k].Rec
		n := len(rec)
		if uint(n-17) >= 0x80-17 || n > len(slab)-used-1 || len(idx) == cap(idx) {
			break
		}
		if s.pleaseSpill.Load() {
			break
		}
		// The row's first 16 bytes, zero padded, from the two words at its start (a record of 17 bytes
		// or more holds them: its family, timestamp and cells follow the row), a shorter row's bytes
		// beyond it shifted out.
		_ = rec[16]
		k0, k1 := binary.BigEndian.Uint64(rec[1:9]), binary.BigEndian.Uint64(rec[9:17])
		if rl := int(rec[0]); rl < 16 {
			k0, k1 = padWords(k0, k1, rl)
		}
		// The entry's fields stored in place (append built the entry on the stack and copied it), before
		// the copy's call, which would make them spill around it.
		j := len(idx)
		idx = idx[:j+1]
		e := &idx[j]
		e.prefix, e.next, e.off, e.slab, e.seq = k0, k1, uint32(used), slabID, recs[k].Seq
		slab[used] = byte(n)
		copy(slab[used+1:], rec)
		used += 1 + n
	}
	if k > 0 {
		if len(s.a.idx) == 0 {
			s.empty.Store(false)
		}
		s.a.idx, s.slabUsed = idx, used
		s.records += int64(k)
	}
	return k
}

// padWords keeps the first rl (< 16) bytes of the 16 held in k0 and k1 (big-endian), zeroing the rest.
func padWords(k0, k1 uint64, rl int) (uint64, uint64) {
	s0, s1 := uint(8*max(8-rl, 0)), uint(8*min(16-rl, 8))
	return k0 >> s0 << s0, k1 >> s1 << s1
}
