package engine

import "github.com/hfload/hfload/hfilewriter"

// rowBloomShare returns the shared ROW bloom of a row-record region's family files, nil when fewer
// than two of them have a ROW bloom with the same parameters.
//
// Each family's file holds its own ROW bloom, whose key is the row: when every row has a cell in every
// family (the common case), the families' blooms are the same bits, set once per family. With the
// share the stream sets them once (stream.shareRow) and each family's first file copies each chunk's
// bits while its rows are the stream's (hfilewriter.RowBloomShare); a family that misses a row, or a
// file that rolls, sets its own bits from there, to the same bytes. The share keeps a chunk's hashes and
// bits (about 1 MiB with HBase's defaults) until every family's writer has passed it: a few chunks
// per region being written, within memoryReserve.
func rowBloomShare(fws []*fileWriter) *hfilewriter.RowBloomShare {
	opts := make([]hfilewriter.WriterOptions, len(fws))
	var share *hfilewriter.RowBloomShare
	for rank, fw := range fws {
		opts[rank] = fw.writerOptions()
		if share == nil && opts[rank].Bloom == hfilewriter.BloomRow {
			share, _ = hfilewriter.NewRowBloomShare(opts[rank], len(fws)) // nil: options refused (the writer reports it)
		}
	}
	if share == nil {
		return nil
	}
	n := 0
	for rank := range fws {
		if share.Accepts(opts[rank]) {
			n++
		} else {
			share.Drop(rank)
		}
	}
	if n < 2 {
		return nil
	}
	for rank, fw := range fws {
		fw.share, fw.shareID = share, rank
	}
	return share
}
