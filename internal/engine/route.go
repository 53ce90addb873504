package engine

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hfload/hfload/internal/cellrec"
	"github.com/hfload/hfload/partition"
	"github.com/hfload/hfload/pipeline"
	"github.com/hfload/hfload/sorter"
)

// router takes the mapped batches of phase 1 (its add is the pipeline's sink) and hands every record
// to the sorter of its (region, family): with split points known up front, one sorter per region and
// family; with computed splits (SplitSample), one per family, and the rows are sampled for the splits.
type router struct {
	sorters     []*sorter.Sorter // region*nf + family
	regions     int
	nf          int                // sorters per region: the families, or 1 with row records
	rows        *rowRecords        // the pipeline emits row records of all families (rowrecords.go), or nil
	route       *partition.Router  // split points known up front (regions > 1)
	sampler     *partition.Sampler // SplitSample > 0
	familyBytes []atomic.Int64     // KeyValue bytes routed per family (of its first cell, for row records)
	scratch     sync.Pool          // *sinkScratch, reused across batches
	noSingle    bool               // tests: one sorter's records also go through the per-sorter lists
}

// newRouter makes the sorters of phase 1: one per region and family, or with rows, one per region
// for row records of all families.
func newRouter(spec *Spec, pool *sorter.Pool, families []string, rows *rowRecords) *router {
	rt := &router{regions: 1, nf: len(families), familyBytes: make([]atomic.Int64, len(families)), rows: rows}
	// From rangedSplits given split points on (and with computed ones), each family has one sorter
	// whatever the splits, cut into regions after the sort (writeRanges): a sorter per region would spill
	// tiny runs and cost every record a routing step.
	if spec.SplitSample <= 0 && len(spec.Splits) > 0 && len(spec.Splits) < rangedSplits {
		rt.regions = len(spec.Splits) + 1
		rt.route = partition.NewRouter(spec.Splits)
	}
	sopts := sorter.SorterOptions{Combine: spec.Combine, CombineErr: spec.CombineErr, FoldSeqLast: spec.FoldSeqLast}
	names := families
	if rows != nil {
		rt.nf, names = 1, []string{strings.Join(families, ",")}
		sopts.Combine = rows.combine(spec.Combine)
	}
	rt.sorters = make([]*sorter.Sorter, rt.regions*rt.nf)
	for r := 0; r < rt.regions; r++ {
		for f, fam := range names {
			rt.sorters[r*rt.nf+f] = pool.NewSorter(fmt.Sprintf("region %d family %s", r, fam), sopts)
		}
	}
	// Computed splits come from a deterministic bottom-k sample of the rows with their bytes (the same
	// sample whatever order batches arrive in), fed once per run of cells of one row.
	if spec.SplitSample > 0 {
		rt.sampler = partition.NewSampler(SplitSampleKeys, SplitSampleSeed)
	}
	return rt
}

func (rt *router) close() {
	for _, s := range rt.sorters {
		s.Close()
	}
}

// totalBytes is the KeyValue bytes of every record routed.
func (rt *router) totalBytes() int64 {
	var total int64
	for i := range rt.familyBytes {
		total += rt.familyBytes[i].Load()
	}
	return total
}

// add groups a batch's records by sorter (a list per sorter, in batch order) and adds each group under
// one lock acquisition. Scratch slices are reused across batches through a sync.Pool.
func (rt *router) add(cb *pipeline.CellBatch) error {
	sorters, regions, nf, route := rt.sorters, rt.regions, rt.nf, rt.route
	sc, _ := rt.scratch.Get().(*sinkScratch)
	if sc == nil {
		sc = &sinkScratch{}
	}
	defer rt.scratch.Put(sc)
	refs := cb.Records
	famBytes := resized(sc.famBytes, len(rt.familyBytes))
	if rt.sampler != nil {
		rt.offerRows(cb, &sc.offers)
	}
	if len(sorters) == 1 && !rt.noSingle {
		// One sorter (one family or row records, one region: the ranged runs' usual case): the records
		// go to it in batch order, without a routing step per record.
		err := sorters[0].AddRecords(singleRecords(sc, cb, famBytes))
		clear(sc.recs[:len(refs)]) // drop references to the batch buffer
		if err != nil {
			return err
		}
		for f, n := range famBytes {
			rt.familyBytes[f].Add(n)
		}
		sc.famBytes = famBytes
		return nil
	}
	// Each record goes to its sorter's list (its region's, and its family's unless the records are row
	// records) in batch order, in one pass over the references; the record's row is read in place.
	buf := cb.Buf
	if len(sc.per) < len(sorters) {
		sc.per = make([][]sorter.Record, len(sorters))
	}
	per := sc.per[:len(sorters)]
	rows := rt.rows != nil
	for i := range refs {
		r := &refs[i]
		famBytes[r.Family] += int64(r.KVBytes)
		rec := buf[r.Off : r.Off+r.Len : r.Off+r.Len]
		t := 0
		if !rows {
			t = int(r.Family)
		}
		if regions > 1 {
			var row []byte
			if rec[0] < 0x80 { // recordRow, inline (records are never empty)
				end := 1 + int(rec[0])
				row = rec[1:end:end]
			} else {
				row = cellrec.Row(rec)
			}
			t += route.Region(row) * nf
		}
		per[t] = append(per[t], sorter.Record{Rec: rec, Seq: r.Seq})
	}
	var err error
	for t, recs := range per {
		if len(recs) > 0 && err == nil {
			err = sorters[t].AddRecords(recs)
		}
		clear(recs) // drop references to the batch buffer
		per[t] = recs[:0]
	}
	if err != nil {
		return err
	}
	for f, n := range famBytes {
		rt.familyBytes[f].Add(n)
	}
	sc.famBytes = famBytes
	return nil
}

// offerRows feeds the sampler once per run of records of one row, with the bytes of the KeyValues
// they stand for: the runs are listed in offers (rows in place in the batch) and offered at once
// (Sampler.OfferAll: one lock acquisition a batch, priorities hashed four rows at a time). The batch's
// slices are read once, and rows of neighbouring records are compared by their last bytes first: they
// differ mostly there (distinct keys in input order), which skips most calls to bytes.Equal's loop.
func (rt *router) offerRows(cb *pipeline.CellBatch, offers *partition.OfferList) {
	recs, buf, sm := cb.Records, cb.Buf, rt.sampler
	if len(recs) == 0 {
		return
	}
	r := &recs[0]
	last := recordRow(buf[r.Off : r.Off+r.Len : r.Off+r.Len])
	lastBytes := int64(r.KVBytes)
	rows, total := int64(1), lastBytes
	for i := 1; i < len(recs); i++ {
		r := &recs[i]
		rec := buf[r.Off : r.Off+r.Len : r.Off+r.Len]
		var row []byte
		if len(rec) > 0 && rec[0] < 0x80 { // recordRow, inline
			end := 1 + int(rec[0])
			row = rec[1:end:end]
		} else {
			row = cellrec.Row(rec)
		}
		kv := int64(r.KVBytes)
		total += kv
		if len(row) == len(last) && (len(row) == 0 || row[len(row)-1] == last[len(row)-1]) && bytes.Equal(row, last) {
			lastBytes += kv
			continue
		}
		offers.Add(last, lastBytes)
		last, lastBytes = row, kv
		rows++
	}
	offers.Add(last, lastBytes)
	sm.OfferAll(offers)
	sm.Count(rows, total)
}

// recordRow is cellrec.Row with the usual record's one-byte row length read in place: cellrec.Row's
// varint decoding is a call, and offerRows' loop (which repeats this inline) kept its values on the
// stack around it.
func recordRow(rec []byte) []byte {
	if len(rec) > 0 && rec[0] < 0x80 {
		end := 1 + int(rec[0])
		return rec[1:end:end]
	}
	return cellrec.Row(rec)
}

// singleRecords returns cb's records in batch order as sorter records, in sc's reused slice, and adds
// their KeyValue bytes to famBytes by family: add's records when every one goes to the one sorter.
func singleRecords(sc *sinkScratch, cb *pipeline.CellBatch, famBytes []int64) []sorter.Record {
	refs := cb.Records
	if cap(sc.recs) < len(refs) {
		sc.recs = make([]sorter.Record, len(refs))
	}
	recs := sc.recs[:len(refs)]
	buf := cb.Buf
	for i := range recs {
		r := &refs[i]
		recs[i] = sorter.Record{Rec: buf[r.Off : r.Off+r.Len : r.Off+r.Len], Seq: r.Seq}
		famBytes[r.Family] += int64(r.KVBytes)
	}
	return recs
}

// sinkScratch holds the per-batch grouping buffers of router.add.
type sinkScratch struct {
	recs     []sorter.Record   // the one sorter's records (singleRecords)
	per      [][]sorter.Record // each sorter's records
	famBytes []int64
	offers   partition.OfferList // the sampler's offers of a batch (offerRows)
}

// resized returns s with length n, all zero, reusing its array when it is large enough.
func resized[T int | int64](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	s = s[:n]
	clear(s)
	return s
}
