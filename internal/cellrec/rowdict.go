package cellrec

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/hfload/hfload/internal/kv"
)

// RowDict turns the records of one row in several families into one row record, and back: a row
// record has an empty family, and each of its cells' qualifiers is the rank of the cell's family (one
// byte: the family's place among the families in byte order) followed by the cell's qualifier.
//
// A rank orders as its family does and has a fixed width, so two cells of one row compare as row
// records' cells exactly as their KeyValues do (family, then qualifier, then timestamp and type): the
// sorter orders, merges, folds and spills row records like any record, with one index entry, one
// header and one copy of the row for all of a row's families instead of one per family. A reader
// splits each cell back into its family and qualifier (Split).
//
// The row dictionary (Dict) holds rank+q for every rank and every qualifier q of the families'
// dictionary, in that order, so that qualifier i of family rank r is entry r·Len+i: a cell keeps its
// one-byte index code for dictionaries of up to 64 entries in all. It is safe for concurrent use.
type RowDict struct {
	d    *Dict    // the families' dictionary
	rd   *Dict    // the row records' dictionary
	fams [][]byte // family names by rank
}

// MaxRowFamilies is how many families a RowDict takes: a rank is one byte.
const MaxRowFamilies = 256

// NewRowDict returns the RowDict of the records of d (tagged or not, as row records then are) in the
// given families (distinct names, any order; at most MaxRowFamilies).
func NewRowDict(d *Dict, families [][]byte) (*RowDict, error) {
	if len(families) == 0 || len(families) > MaxRowFamilies {
		return nil, fmt.Errorf("row records take 1 to %d families, not %d", MaxRowFamilies, len(families))
	}
	fams := make([][]byte, len(families))
	for i, f := range families {
		if len(f) == 0 || len(f) > kv.MaxFamilyLength {
			return nil, fmt.Errorf("family %q: want 1 to %d bytes", kv.ToStringBinary(f), kv.MaxFamilyLength)
		}
		fams[i] = bytes.Clone(f)
	}
	slices.SortFunc(fams, bytes.Compare)
	for i := 1; i < len(fams); i++ {
		if bytes.Equal(fams[i-1], fams[i]) {
			return nil, fmt.Errorf("family %q given twice", kv.ToStringBinary(fams[i]))
		}
	}
	quals := make([][]byte, 0, len(fams)*d.Len())
	for r := range fams {
		for i := 0; i < d.Len(); i++ {
			quals = append(quals, append([]byte{byte(r)}, d.At(i)...))
		}
	}
	rd := NewDict(quals)
	rd.tags = d.Tagged()
	return &RowDict{d: d, rd: rd, fams: fams}, nil
}

// Dict returns the dictionary of row records.
func (r *RowDict) Dict() *Dict { return r.rd }

// Families returns the number of families.
func (r *RowDict) Families() int { return len(r.fams) }

// Family returns the name of the family of a rank (not to be modified).
func (r *RowDict) Family(rank int) []byte { return r.fams[rank] }

// Rank returns the rank of a family, if it is one of r's.
func (r *RowDict) Rank(family []byte) (int, bool) {
	return slices.BinarySearchFunc(r.fams, family, bytes.Compare)
}

// Split returns the family rank and the qualifier of a row record's cell, given its row qualifier
// (from Dict().Next or NextTags on a row record's cells; well-formed, so at least the rank byte).
func (r *RowDict) Split(q []byte) (rank int, qualifier []byte) {
	return int(q[0]), q[1:]
}

// AppendCells appends the cells of a cells region of a record of the families' dictionary, in the
// family of the given rank, to dst as cells of a row record: dictionary codes are shifted to the
// rank's entries and literal qualifiers get the rank byte in front; values and tags are copied. The
// caller appends them after a row record's header (AppendHeader with an empty family), in ascending
// (rank, qualifier) order. A region that is not well formed is an error and dst is returned as it was.
func (r *RowDict) AppendCells(dst []byte, rank int, cells []byte) ([]byte, error) {
	if rank < 0 || rank >= len(r.fams) {
		return dst, fmt.Errorf("family rank %d outside the %d families", rank, len(r.fams))
	}
	dst0 := len(dst)
	base := uint64(rank) * uint64(r.d.Len())
	for len(cells) > 0 {
		q, v, tags, rest, code, err := r.d.nextCode(cells)
		if err != nil {
			return dst[:dst0], err
		}
		if code&1 == 1 {
			dst = r.rd.AppendCellTags(dst, int(base+code>>1), v, tags)
		} else {
			dst = binary.AppendUvarint(dst, 2*uint64(len(q)+1))
			dst = append(dst, byte(rank))
			dst = append(dst, q...)
			dst = binary.AppendUvarint(dst, uint64(len(v)))
			dst = r.rd.appendTags(append(dst, v...), tags)
		}
		cells = rest
	}
	return dst, nil
}
