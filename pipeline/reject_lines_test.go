package pipeline

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// TestRejectLimitErrorFromLines: the error built from the reject record that crosses the limit is the
// one the RejectSink itself returns, for CSV and Parquet rejects and for both limit messages.
func TestRejectLimitErrorFromLines(t *testing.T) {
	csv := &Batch{Source: `dir/a "b".csv`, Bad: []BadRow{
		{Line: 3, Reason: "ragged row: 2 fields, want 3", Raw: []byte("x,y")},
		{Line: 9, Reason: "text after closing quote", Raw: []byte("\xff")},
	}}
	pq := &Batch{Source: "p.parquet"}
	for _, max := range []int64{0, 1} {
		for _, b := range []*Batch{csv, pq} {
			var all bytes.Buffer
			free := NewRejectSink(&all, -1)
			limited := NewRejectSink(&bytes.Buffer{}, max)
			var rb rejectBuf
			if b == pq {
				rb.addRow(&Batch{Source: b.Source, RowGroup: 2, FirstRow: 70, Record: parquetTestRecord(0, 2)}, 0, "bad value", nil)
				rb.addRow(&Batch{Source: b.Source, RowGroup: 2, FirstRow: 70, Record: parquetTestRecord(0, 2)}, 1, "bad value", nil)
			} else {
				for i := range b.Bad {
					rb.addBad(b, &b.Bad[i])
				}
			}
			if err := free.add(&rb); err != nil {
				t.Fatal(err)
			}
			want := limited.add(&rb)
			if !errors.Is(want, ErrRejectLimit) {
				t.Fatalf("max %d: the sink returned %v", max, want)
			}
			lines := strings.SplitAfter(all.String(), "\n")
			got := RejectLimitError([]byte(lines[max]), max)
			if !errors.Is(got, ErrRejectLimit) || got.Error() != want.Error() {
				t.Fatalf("max %d:\n got %v\nwant %v", max, got, want)
			}
		}
	}
}

func TestShiftRejectLine(t *testing.T) {
	var buf bytes.Buffer
	rb := rejectBuf{}
	b := &Batch{Source: `x,"line":7.csv`, Bad: []BadRow{{Line: 12, Reason: "r", Raw: []byte(`"line":5`)}}}
	rb.addBad(b, &b.Bad[0])
	if err := NewRejectSink(&buf, -1).add(&rb); err != nil {
		t.Fatal(err)
	}
	got, err := ShiftRejectLine(nil, buf.Bytes(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(buf.String(), `"line":12`, `"line":1012`, 1)
	if string(got) != want || !strings.Contains(want, `"line":1012`) {
		t.Fatalf("got %s want %s", got, want)
	}
	if got, _ := ShiftRejectLine(nil, []byte(`{"source":"p.parquet","row_group":1,"row":5,"reason":"r"}`+"\n"), 9); !bytes.Contains(got, []byte(`"row":5,`)) {
		t.Fatalf("a Parquet reject changed: %s", got)
	}
}
