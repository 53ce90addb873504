package pipeline

import (
	"context"
	"fmt"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// WithConstantColumn returns inputs whose sources have one more column, named name, holding value in
// every row (never NULL). It is how a summary table counts rows: the jobs layer adds the column `_one`
// with value "1", and a count cell takes its value (the long 1) from it. A mapping column finds it by
// name, so a CSV input needs a header (Parquet inputs always have one); a headerless CSV input fails
// when opened. Rows the source rejects before mapping (Batch.Bad) are passed through unchanged.
func WithConstantColumn(inputs []Input, name, value string) []Input {
	out := make([]Input, len(inputs))
	for i, in := range inputs {
		open := in.Open
		in.Open = func() (Source, error) {
			if open == nil {
				return nil, fmt.Errorf("input %s: no opener", in.Path)
			}
			src, err := open()
			if err != nil {
				return nil, err
			}
			cs := &constSource{Source: src, name: name, value: []byte(value)}
			if hs, ok := src.(HeaderSource); ok {
				cs.header = hs.Header()
			}
			if _, parquet := src.(*ParquetSource); !parquet && cs.header == nil {
				src.Close()
				return nil, fmt.Errorf("input %s: column %q (for count aggregates) is found by name: the CSV input needs a header (header: true)", in.Path, name)
			}
			for _, h := range cs.header {
				if h == name {
					src.Close()
					return nil, fmt.Errorf("input %s: column %q (for count aggregates) is already a column of the input", in.Path, name)
				}
			}
			if cs.header != nil {
				cs.header = append(append(make([]string, 0, len(cs.header)+1), cs.header...), name)
			}
			return cs, nil
		}
		out[i] = in
	}
	return out
}

// constSource appends the constant column to every batch of its Source.
type constSource struct {
	Source
	name   string
	value  []byte
	header []string
}

// Header returns the inner source's column names followed by the constant column's.
func (s *constSource) Header() []string { return s.header }

// Next returns the inner source's next batch with the constant column appended.
func (s *constSource) Next(ctx context.Context) (*Batch, error) {
	b, err := s.Source.Next(ctx)
	if b == nil {
		return b, err
	}
	if b.Record != nil {
		rec, rerr := s.appendRecord(b.Record)
		if rerr != nil {
			b.Release()
			return nil, rerr
		}
		b.Record.Release()
		b.Record = rec
		b.NumCols = int(rec.NumCols())
		return b, err
	}
	if b.NumRows > 0 {
		s.appendText(b)
	}
	return b, err
}

// appendText rewrites the row-major text fields of b with the constant after each row's last field.
func (s *constSource) appendText(b *Batch) {
	nc := b.NumCols
	data := make([]byte, 0, len(b.Data)+len(s.value)*b.NumRows)
	ends := make([]int32, 0, b.NumRows*(nc+1))
	nulls := make([]bool, 0, b.NumRows*(nc+1))
	prev := int32(0)
	for i := 0; i < b.NumRows; i++ {
		for j := 0; j < nc; j++ {
			k := i*nc + j
			data = append(data, b.Data[prev:b.Ends[k]]...)
			prev = b.Ends[k]
			ends = append(ends, int32(len(data)))
			nulls = append(nulls, b.Nulls[k])
		}
		data = append(data, s.value...)
		ends = append(ends, int32(len(data)))
		nulls = append(nulls, false)
	}
	b.Data, b.Ends, b.Nulls, b.NumCols = data, ends, nulls, nc+1
}

// appendRecord returns a new record: rec's columns and a string column of the constant.
func (s *constSource) appendRecord(rec arrow.Record) (arrow.Record, error) {
	sc := rec.Schema()
	if len(sc.FieldIndices(s.name)) > 0 {
		return nil, fmt.Errorf("column %q (for count aggregates) is already a column of the input", s.name)
	}
	fields := append(append(make([]arrow.Field, 0, sc.NumFields()+1), sc.Fields()...),
		arrow.Field{Name: s.name, Type: arrow.BinaryTypes.String})
	bld := array.NewStringBuilder(memory.DefaultAllocator)
	defer bld.Release()
	n := int(rec.NumRows())
	bld.Reserve(n)
	bld.ReserveData(n * len(s.value))
	v := string(s.value)
	for i := 0; i < n; i++ {
		bld.Append(v)
	}
	arr := bld.NewArray()
	defer arr.Release()
	cols := append(append(make([]arrow.Array, 0, len(fields)), rec.Columns()...), arr)
	md := sc.Metadata()
	return array.NewRecord(arrow.NewSchema(fields, &md), cols, rec.NumRows()), nil
}
