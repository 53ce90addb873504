package engine

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/hfload/hfload/pipeline"
)

// readProgress returns the reporter of phase 1: rows and input bytes read so far, as Progress events.
func readProgress(spec *Spec) func(rows, bytes int64) {
	var rowsRead, bytesRead atomic.Int64
	var totalInput int64
	for _, in := range spec.Inputs {
		if in.Size > 0 {
			totalInput += in.Size
		}
	}
	return func(rows, bytes int64) {
		spec.Progress(Progress{Phase: "read", BytesDone: bytesRead.Add(bytes), BytesTotal: totalInput,
			RowsRead: rowsRead.Add(rows)})
	}
}

// progressInputs wraps each input's source to report rows and bytes as batches are read.
func progressInputs(ins []pipeline.Input, report func(rows, bytes int64)) []pipeline.Input {
	out := make([]pipeline.Input, len(ins))
	for i, in := range ins {
		in := in
		open := in.Open
		in.Open = func() (pipeline.Source, error) {
			src, err := open()
			if err != nil {
				return nil, err
			}
			return &progressSource{Source: src, size: in.Size, report: report}, nil
		}
		out[i] = in
	}
	return out
}

type progressSource struct {
	pipeline.Source
	size     int64
	reported int64
	rows     int64
	report   func(rows, bytes int64)
	mu       sync.Mutex
}

// Header passes the inner source's column names through (pipeline.HeaderSource), so that mappings that
// name their columns keep working when progress is reported.
func (p *progressSource) Header() []string {
	if hs, ok := p.Source.(pipeline.HeaderSource); ok {
		return hs.Header()
	}
	return nil
}

func (p *progressSource) Next(ctx context.Context) (*pipeline.Batch, error) {
	b, err := p.Source.Next(ctx)
	if b != nil {
		rows := int64(b.NumRows + len(b.Bad))
		var bytes int64
		if len(b.RawEnds) > 0 {
			bytes = int64(b.RawEnds[len(b.RawEnds)-1]) + int64(b.NumRows) // raw text plus line ends
		}
		if p.size > 0 && p.reported+bytes > p.size {
			bytes = max(0, p.size-p.reported)
		}
		p.reported += bytes
		p.report(rows, bytes)
	}
	if err != nil && p.size > p.reported {
		p.report(0, p.size-p.reported) // end of file (or failure): account the rest
		p.reported = p.size
	}
	return b, err
}
