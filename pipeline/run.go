package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/hfload/hfload/internal/cellrec"
)

// RunOptions configures Run.
type RunOptions struct {
	// Workers is the number of mapping goroutines; 0 = GOMAXPROCS.
	Workers int
	// MaxRejects: 0 = fail on the first bad row (the default of a careful migration), N = fail when more
	// than N rows are rejected, -1 = unlimited.
	MaxRejects int64
	// Rejects receives the rejected rows as JSON Lines (see RejectSink); nil = count only.
	Rejects io.Writer
	// Timestamp is the job's start time in epoch milliseconds, the cell timestamp of mappings without a
	// timestamp column or value. It must be set (> 0) for such mappings, so that output is reproducible.
	Timestamp int64
	// Rejected, when set, follows the number of rows rejected so far (for progress displays).
	Rejected *atomic.Int64
	// Rows, when set, makes the records one per input row for all of the mapping's families: records of
	// the row dictionary Rows (made from the mapping's Dict and Families), whose RecordRef.Family is the
	// family of the record's first cell and KVBytes covers all its cells. A row whose cells' (family,
	// qualifier) do not ascend in mapping order gives more than one. Nil: one record per (row, family).
	Rows *cellrec.RowDict
}

// Counts are the totals of a run. They reconcile: RowsRead = RowsKeyed + RowsRejected.
type Counts struct {
	RowsRead     int64 // data rows read (good and bad; headers excluded)
	RowsKeyed    int64 // rows that got a row key and whose cells were emitted
	RowsRejected int64 // rows sent to the reject sink (by the source or the mapping)
	CellsEmitted int64 // cells handed to the sink (in records; each stands for one KeyValue)
	NullsSkipped int64 // NULL (on_null: skip) or empty (skip_empty) values that produced no cell
	BytesRead    int64 // input bytes on disk of the inputs read to the end (Input.Size; stdin: not counted)
}

// Add adds o to c.
func (c *Counts) Add(o Counts) {
	c.RowsRead += o.RowsRead
	c.RowsKeyed += o.RowsKeyed
	c.RowsRejected += o.RowsRejected
	c.CellsEmitted += o.CellsEmitted
	c.NullsSkipped += o.NullsSkipped
	c.BytesRead += o.BytesRead
}

// runJob is one batch on its way to a worker.
type runJob struct {
	b      *Batch
	header []string
	order  uint64
}

// Run reads inputs in order, maps their batches on opts.Workers goroutines and hands each batch's records
// to sink (called concurrently, with a CellBatch owned by the calling worker and reused after the call;
// batches without records are not handed over). Bad rows go to opts.Rejects; the first error (source,
// sink, reject limit, ctx) stops everything and is returned with the counts so far. Cell order in the
// output is made deterministic by RecordRef.Seq, and rejects are written in input order.
func Run(ctx context.Context, inputs []Input, m *Mapping, opts RunOptions, sink Sink) (Counts, error) {
	var total Counts
	if m == nil || sink == nil {
		return total, errors.New("pipeline run: nil mapping or sink")
	}
	if m.NeedsJobTimestamp() && opts.Timestamp <= 0 {
		return total, errors.New("pipeline run: the mapping takes cell timestamps from the job, but RunOptions.Timestamp is not set")
	}
	var rows *rowPlan
	if opts.Rows != nil {
		var err error
		if rows, err = m.newRowPlan(opts.Rows); err != nil {
			return total, fmt.Errorf("pipeline run: %w", err)
		}
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	fail := func(err error) { cancel(err) }

	rej := NewRejectSink(opts.Rejects, opts.MaxRejects)
	// Four batches a worker: while a worker spills an arena or waits for a sorter's lock, the reader
	// keeps reading and the other workers keep busy (docs/design.md).
	jobs := make(chan runJob, 4*workers)
	var mu sync.Mutex
	var wg sync.WaitGroup

	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mp := m.NewMapper()
			mp.JobTimestamp = opts.Timestamp
			mp.rows = rows
			var cb CellBatch
			defer func() {
				mu.Lock()
				total.Add(mp.counts)
				mu.Unlock()
			}()
			for j := range jobs {
				if ctx.Err() != nil {
					j.b.Release()
					continue
				}
				cb.Reset()
				cb.reserve(j.b)
				err := mp.mapBatch(j.b, j.header, &cb)
				if err == nil {
					err = rej.commit(j.order, &mp.rejects)
					if opts.Rejected != nil {
						opts.Rejected.Store(rej.Count())
					}
				}
				if err == nil && len(cb.Records) > 0 {
					if err = sink(&cb); err != nil {
						err = fmt.Errorf("%s: sink: %w", j.b.Source, err)
					}
				}
				j.b.Release()
				if err != nil {
					fail(err)
				}
			}
		}()
	}

	var bytesRead int64
	readErr := runRead(ctx, inputs, jobs, &bytesRead)
	close(jobs)
	wg.Wait()
	total.BytesRead = bytesRead
	if readErr != nil && !errors.Is(readErr, context.Canceled) {
		fail(readErr)
	}
	if err := context.Cause(ctx); err != nil {
		return total, err
	}
	return total, nil
}

// runRead feeds the batches of all inputs, in order, to jobs.
func runRead(ctx context.Context, inputs []Input, jobs chan<- runJob, bytesRead *int64) error {
	var order uint64
	for _, in := range inputs {
		if in.Open == nil {
			return fmt.Errorf("input %s: no opener", in.Path)
		}
		src, err := in.Open()
		if err != nil {
			if ce := (*CorruptInputError)(nil); errors.As(err, &ce) {
				return ce // names the input itself
			}
			return fmt.Errorf("open %s: %w", in.Path, err)
		}
		var header []string
		if hs, ok := src.(HeaderSource); ok {
			header = hs.Header()
		}
		for {
			b, err := src.Next(ctx)
			if err == io.EOF {
				break
			}
			if err != nil {
				src.Close()
				if ctx.Err() != nil {
					return context.Cause(ctx)
				}
				if ce := (*CorruptInputError)(nil); errors.As(err, &ce) {
					return ce
				}
				return fmt.Errorf("read %s: %w", in.Path, err)
			}
			select {
			case jobs <- runJob{b: b, header: header, order: order}:
				order++
			case <-ctx.Done():
				b.Release()
				src.Close()
				return context.Cause(ctx)
			}
		}
		if err := src.Close(); err != nil {
			return fmt.Errorf("close %s: %w", in.Path, err)
		}
		if in.Size > 0 {
			*bytesRead += in.Size
		}
	}
	return nil
}
