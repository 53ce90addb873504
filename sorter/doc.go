// Package sorter orders HBase KeyValue records (int32 keyLen | int32 valueLen | key | value, as produced
// by hfilewriter.AppendKeyValue) with an external merge sort under a hard memory budget.
//
// A Pool owns the budget, a private temporary directory and a bound on concurrent spill/merge work; it
// hands out Sorters, one per output stream (region × family). Records added to a Sorter are copied once
// into an arena of slabs; the in-memory sort orders a compact 24-byte index entry per record
// {prefix, slab offset, slab id, seq} where prefix holds the first 8 bytes of the row (big-endian, zero
// padded) so that most comparisons never touch the record. Ties on the prefix are resolved by
// hfilewriter.CompareKeys, ties on the full key by seq (input order). Output order is therefore
// (CompareKeys, seq) and does not depend on where runs were cut.
//
// # Memory accounting
//
// Every byte the package keeps for records or I/O is accounted against PoolOptions.Memory:
//
//   - Fixed I/O reserve, taken at NewPool: Parallelism spill slots, each a raw chunk buffer (ChunkSize), a
//     snappy output buffer (snappy.MaxEncodedLen(ChunkSize)) and two combine scratch buffers. A spill or an
//     intermediate merge pass holds one slot, which bounds concurrent spill/merge work to Parallelism.
//   - Arena slabs, by capacity, at the moment a slab is allocated (slabs grow from 4 KiB to 4 MiB by doubling, capped
//     at Memory/16; a record larger than a slab gets a slab of its own size).
//   - The index, by capacity (24 bytes per entry), at the moment it grows; the old and the new backing
//     array are both accounted during the copy.
//   - Merge read buffers: per run, its largest raw chunk plus its largest compressed chunk (both recorded
//     when the run is written), reserved before a merge opens the run and released when the run is done.
//   - Combine scratch of a final merge (two buffers).
//
// When a reservation would exceed the budget the pool spills the sorter holding the most in-memory
// bytes (the sorter being added to is a candidate; others are spilled only when their lock can be taken
// without waiting, i.e. when they are idle). If nothing can be spilled the caller waits until memory is
// released (a spill, a merge pass or an Iterator.Close). A single request larger than the whole budget
// is an error. The only accounting that may exceed the budget is combine scratch growing past its
// reserved size for records larger than the reserved scratch (ChunkSize/4); it is charged without
// waiting and shows in PeakBytes.
//
// # Runs
//
// A spill writes a run file: a sequence of chunks, each a 13-byte header (uint32 raw length, uint32 stored
// length, uint8 codec 0=raw/1=snappy block, uint32 CRC-32C of the raw bytes) followed by the stored bytes.
// Raw chunk bytes are entries uvarint(seq) | KeyValue record. Chunks hold about ChunkSize raw bytes; a
// record larger than that gets a raw chunk of its own. With SorterOptions.Combine, adjacent records with
// equal keys are folded before they are written and again while merging; a folded record carries the
// seq of its first input.
//
// # Merging
//
// Finish sorts the in-memory remainder and, when runs exist, merges them with a heap. The read buffers of
// one merge may use at most the sorter's merge share, (Memory - I/O reserve) / (2 × Parallelism); when the
// runs need more, intermediate passes merge the smallest runs first (at least two at a time). The final
// merge streams: Iterator.KV is valid until the next call of Next.
//
// Iterators must be closed: they hold memory (the in-memory remainder and read buffers) and run files.
// A goroutine that waits in Add while it itself holds an open Iterator of the same pool can wait forever
// if that Iterator's memory is what the pool needs; finish sorters after adding to them.
package sorter
