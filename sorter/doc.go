// Package sorter orders HBase cells with an external merge sort under a hard memory budget. Its unit is
// a record (internal/cellrec): the cells one input row gives one family, with row, family, timestamp
// and type stored once and qualifiers usually as indexes into the pool's dictionary. The output is every
// cell in HBase order (kv.CompareKeys), ties broken by seq (input order); should a caller reuse
// a seq for equal keys, the values break the tie, so the output is still one deterministic order that
// does not depend on where runs were cut.
//
// A Pool owns the budget, a private temporary directory, the dictionary and a bound on concurrent
// spill/merge work; it hands out Sorters, one per output stream (region × family). Records added to a
// Sorter are copied once into an arena of slabs; the in-memory sort orders a compact 32-byte index
// entry per record {prefix, next, slab offset, slab id, seq} by the record's first cell, where prefix
// and next hold the first 16 bytes of the row (two big-endian words, zero padded) so that most
// comparisons never touch the record, even for keys whose first 8 bytes tie often. The index is sorted
// in place by an MSD radix sort on those 16 bytes: a pass orders one byte, or two when both differ only
// in their low halves (decimal digits; arena_digit.go), and a small bucket whose first differing byte
// is a digit gets one pass on its low half (arena_nibble.go); other small buckets a quicksort comparing
// the cached words (the records only on ties); rows that tie on 16 bytes are radix sorted on their next
// differing pair of words.
//
// # Records, overlaps and views
//
// The cells of a record ascend strictly, so a record sorts by its first cell, and records of different
// rows or families never interleave: for those (nearly every record of an export with a primary key)
// the sorter does one index entry, one comparison per heap step and one copy per record, not per cell.
// Records of one row and family may overlap (the same row twice in the input, or qualifiers built from
// data): after sorting, the resolver walks the records in first-cell order and merges overlapping ones
// cell by cell with a heap of 8-byte cursors (accounted with the index: entrySize is 40 bytes). What
// every stage hands on is a view: one or more consecutive cells of one record with its header and seq;
// the views of a stage never overlap (every cell of a view sorts before every cell of the next), so a
// run file, the merge of runs and the Iterator are streams of views. The merge hands on the whole rest
// of the top view when the runner-up is in another row or family, and cuts views only where views of
// one row and family interleave.
//
// The resolver reads a sorted arena's records in index order, which is random memory order: a cache
// miss a record. Every 8 records it asks for the records 16 to 23 ahead, three cache lines each, with
// PREFETCHT0 on amd64 (prefetch_amd64.s: hints that never fault and hold up nothing) and with plain
// one-byte loads elsewhere (prefetch_other.go), so that the misses overlap instead of stalling the read
// one at a time.
//
// # Memory accounting
//
// Every byte the package keeps for records or I/O is accounted against PoolOptions.Memory:
//
//   - Fixed I/O reserve, taken at NewPool: Parallelism spill slots, each a chunk buffer (ChunkSize), with
//     CompressRuns a compressed output buffer (s2.MaxEncodedLen(ChunkSize)), and two combine scratch
//     buffers. A spill or an intermediate merge pass holds one slot, which bounds concurrent spill/merge
//     work to Parallelism.
//   - Arena slabs, by capacity, at the moment a slab is allocated. Slab sizes are powers of two, doubling
//     from 4 KiB up to min(4 MiB, Memory/16, a fair share (Memory - reserve) / (4 × live sorters)); a
//     record larger than that gets a slab of its own size.
//   - The index, by capacity (40 bytes per entry: the entry and a resolver cursor), at the moment it
//     grows; the old and the new backing array are both accounted during the copy. From 16Ki entries on
//     (Linux) an index lives in a mapping of its own that reserves address space for the largest index
//     the budget allows, and grows in place by an eighth at a time, nothing copied (index_map.go); while
//     such mappings live, the Go runtime's memory limit, where one is set, is lowered by what they hold.
//   - Slabs given back by a spilled victim stay accounted in a free list of the pool (PooledBytes) and are
//     reused by the next sorter asking for that size; a reservation that needs the room drops them first.
//   - Merge read buffers: per run, its largest chunk as stored plus, when it has compressed chunks, its
//     largest raw chunk (both recorded when the run is written), reserved before a merge opens the run
//     and released when the run is done.
//   - Combine scratch of a final merge (two buffers of ChunkSize/4).
//
// ChunkSize is Memory / (256 × Parallelism), clamped to [4 KiB, 1 MiB], so that one merge of about 100
// runs fits a merge share without intermediate passes. Add rejects a record larger than
// MaxRecord = (Memory - I/O reserve) / 8 with an error that leaves the sorter usable.
//
// Spill policy: a sorter whose arena reaches half the arena memory (all of it with Parallelism 1) spills
// on its own. Spilling detaches the arena: the goroutine that needs room takes the full arena, lets go
// of the sorter's lock and sorts and writes it as a run, while other goroutines add to a fresh arena; the
// detached memory stays accounted until the run is written, and its index then becomes the sorter's
// spare for its next arena, if the sorter's lock is free at that moment; otherwise the index is released
// before the spill waits for the lock (a goroutine holding the lock may be waiting for that memory). When a reservation would exceed the budget, the pool first drops pooled
// slabs, then spills one sorter and tries again: sorters holding memory but no records first (no I/O),
// then the one holding the most accounted bytes. The sorter being added to is a candidate (unless it
// holds no records, when freeing its memory only to take it again would make no progress) and spills
// itself as above; another sorter is spilled only if its lock can be taken without waiting (it is
// idle), and gives all its memory back. If nothing
// can be spilled, the largest busy candidate is flagged to give all its memory back at its next Add, a
// waiting sorter without records gives back its own (empty) index and slabs, and the caller waits until memory is released (a spill, a merge pass or an Iterator.Close) or a 20 ms poll
// interval passes, then looks again.
// A request larger than the budget minus the I/O reserve is an error. The only accounting that may exceed
// the budget is combine scratch growing past its reserved size (for folded records larger than
// ChunkSize/4); it is charged without waiting and shows in PeakBytes.
//
// The accounting is logical: the Go heap additionally holds garbage not yet collected (mostly replaced
// index arrays) and the caller's own buffers. Setting a GOMEMLIMIT somewhat above Memory keeps the
// process close to it.
//
// # Runs
//
// A spill writes a run file: a sequence of chunks, each a 13-byte header (uint32 raw length, uint32 stored
// length, uint8 codec 0=raw/1=snappy block format, uint32 CRC-32C of the raw bytes) followed by the
// stored bytes. Raw chunk bytes are entries, one per view, each encoded against the previous entry of
// its chunk (the first against nothing, so that a chunk decodes on its own): the seq as a zigzag delta,
// the row as the length of the prefix it shares with the previous row plus the rest, the family,
// timestamp and type only when they differ from the previous entry's, then the cells as they are. Sorted
// rows share most of their bytes, seqs of nearly sorted input differ by little and an export's cells
// share one family, timestamp and type: a run of the 1 GB benchmark export takes 1.0 GiB where the
// records themselves would take 1.3.
// Chunks are stored raw by default (PoolOptions.CompressRuns compresses them with S2's snappy-compatible
// encoder, read back with s2.Decode, keeping a chunk raw when it does not shrink): on the machines we
// measured, compressing and decompressing these dense records cost more CPU than writing twice the
// bytes through the page cache. Every run keeps in memory where each chunk is and the row of its first
// record, so a chunk is read with one pread. Chunks hold about ChunkSize raw bytes; a record larger
// than that gets a raw chunk of its own. A chunk whose CRC does not match, or a record header that
// does not parse, is an error; the cells of records read back are not checked again (they were
// validated when added, and the CRC covers them). With SorterOptions.Combine, cells with equal keys are folded (values, by
// Combine) before a run is written and again while merging; a folded cell carries the seq of its first
// input (of its last with SorterOptions.FoldSeqLast), so partial groups from different runs merge in
// the order of their first (last) inputs.
//
// Before a spill the arena's index is scanned for ascending stretches (records often arrive nearly
// sorted: exports ordered by key, added batch by batch); when there are few, the run is written by
// merging them instead of sorting the index (arena.sort, segOrder). Failing that, it looks for
// interleaved ascending lanes (salted keys in id order: records grouped by the two row bytes after those
// all share, each group ascending by index position) and reads them lane by lane in key order without
// sorting (arena_lanes.go).
//
// # Merging
//
// Finish sorts the in-memory remainder and, when runs exist, merges them with a heap of views. The read buffers of
// one merge may use at most the sorter's merge share, (Memory - I/O reserve) / (2 × Parallelism); when the
// runs need more, intermediate passes merge the smallest runs first (at least two at a time, each pass
// holding a spill slot). The remainder stays in memory and joins the final merge when the final read
// buffers fit the share and can be reserved without waiting; otherwise it is written as one more run
// first. The final merge streams (it holds no slot): Iterator.Cells is valid until the next call of Next.
//
// FinishRanges instead writes the remainder as a run and returns a Ranges, whose Open merges any row
// range of the runs: each run records the offset and first row of every chunk, so a range starts reading
// each run at the chunk before its first row. Several ranges may be merged at once, each reserving its
// own read buffers; the runs are removed when the Ranges is closed.
//
// Iterators must be closed: they hold memory (the in-memory remainder and read buffers) and run files.
// A goroutine that waits in Add while it itself holds an open Iterator of the same pool can wait forever
// if that Iterator's memory is what the pool needs; finish sorters after adding to them.
package sorter
