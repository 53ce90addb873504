package gen

import (
	"fmt"
	"io"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/decimal128"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet"
	"github.com/apache/arrow/go/v15/parquet/compress"
	"github.com/apache/arrow/go/v15/parquet/pqarrow"
)

// genArrowType maps a column kind to its Parquet/Arrow type.
func genArrowType(k genKind) arrow.DataType {
	switch k {
	case kindInt64:
		return arrow.PrimitiveTypes.Int64
	case kindInt32:
		return arrow.PrimitiveTypes.Int32
	case kindDecimal2:
		return &arrow.Decimal128Type{Precision: 12, Scale: 2}
	case kindDateTime:
		return arrow.FixedWidthTypes.Timestamp_ms
	case kindFloat64:
		return arrow.PrimitiveTypes.Float64
	default:
		return arrow.BinaryTypes.String
	}
}

func genWriteParquet(w io.Writer, t genTable, opts Options) (int64, error) {
	cols := t.columns()
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = arrow.Field{Name: c.name, Type: genArrowType(c.kind), Nullable: true}
	}
	schema := arrow.NewSchema(fields, nil)
	cw := &genCountingWriter{w: w}
	props := parquet.NewWriterProperties(
		parquet.WithMaxRowGroupLength(int64(opts.RowGroupRows)),
		parquet.WithCompression(compress.Codecs.Snappy),
		parquet.WithCreatedBy("hfload gen"),
	)
	fw, err := pqarrow.NewFileWriter(schema, cw, props, pqarrow.DefaultWriterProps())
	if err != nil {
		return 0, fmt.Errorf("gen: parquet writer: %w", err)
	}
	rb := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer rb.Release()
	vals := make([]genValue, len(cols))
	var n int64
	flush := func() error {
		rec := rb.NewRecord()
		defer rec.Release()
		if rec.NumRows() == 0 {
			return nil
		}
		if err := fw.Write(rec); err != nil {
			return fmt.Errorf("gen: parquet write: %w", err)
		}
		return nil
	}
	for ; opts.Rows == 0 || n < opts.Rows; n++ {
		if n%int64(opts.RowGroupRows) == 0 && n > 0 {
			if err := flush(); err != nil {
				return n, err
			}
			if opts.TargetBytes > 0 && cw.n >= opts.TargetBytes {
				break
			}
		}
		t.row(n, vals)
		for j, v := range vals {
			fb := rb.Field(j)
			if v.null {
				fb.AppendNull()
				continue
			}
			switch cols[j].kind {
			case kindInt64:
				fb.(*array.Int64Builder).Append(v.i)
			case kindInt32:
				fb.(*array.Int32Builder).Append(int32(v.i))
			case kindDecimal2:
				fb.(*array.Decimal128Builder).Append(decimal128.FromI64(v.i))
			case kindDateTime:
				fb.(*array.TimestampBuilder).Append(arrow.Timestamp(v.i * 1000))
			case kindFloat64:
				fb.(*array.Float64Builder).Append(v.f)
			case kindString:
				fb.(*array.StringBuilder).BinaryBuilder.Append(v.s)
			}
		}
	}
	if err := flush(); err != nil {
		return n, err
	}
	if err := fw.Close(); err != nil {
		return n, fmt.Errorf("gen: parquet close: %w", err)
	}
	return n, nil
}
