package hfilewriter

// RowHash is a row key's ROW bloom hash: HBase's MurmurHash of the row bytes with seed 0 (h1, the high
// 32 bits) and then with seed h1 (h2, the low 32 bits), as BloomFilterChunk.add computes them for a
// RowBloomHashKey. Only the row is hashed, not the family: a row's hash is the same in the ROW bloom of
// every family's file, so a caller writing one row into several families' files (one per family, as
// HBase requires) can hash it once.
type RowHash uint64

// HashRow returns row's RowHash.
func HashRow(row []byte) RowHash { return RowHash(bloomHashes(row)) }

// AppendPartsRowHash is AppendParts for a cell whose row's hash the caller has computed: rh must be
// HashRow(row). The writer adds rh to a ROW bloom when the cell starts a row instead of hashing the row
// again; with a ROWCOL bloom or none, rh is not used. The bytes written are AppendParts' (a wrong rh
// makes a bloom that denies rows the file holds).
func (w *Writer) AppendPartsRowHash(row, family, qualifier []byte, ts int64, typ Type, value, tags []byte, rh RowHash) error {
	w.rowHash, w.hasRowHash = rh, true
	var err error
	if w.newRowFastOK(row, family, qualifier, typ, value, tags) {
		err = w.appendNewRowFast(row, family, qualifier, ts, value)
	} else {
		err = w.appendCell(row, family, qualifier, ts, typ, value, tags, 0)
	}
	w.hasRowHash = false
	return err
}
