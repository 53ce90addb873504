package pipeline

// csvGuessRecords is how many records guessFields looks at.
const csvGuessRecords = 1000

// guessFields sets the expected field count of a file without a column spec or header: the most
// common count among its first records (up to csvGuessRecords, within the first buffer of input), the
// earliest seen on a tie. Blank lines and broken records do not vote. The records are parsed again
// by Next; nothing is consumed. The buffer is filled to its size (or EOF) first, so the result does
// not depend on how the reader delivers the bytes.
func (s *CSVSource) guessFields() error {
	if s.pos > 0 {
		n := copy(s.buf, s.buf[s.pos:s.end])
		s.base += int64(s.pos)
		s.pos, s.end = 0, n
	}
	for !s.eof && s.end < len(s.buf) {
		if err := s.fill(); err != nil {
			return err
		}
	}
	type vote struct{ fields, n int }
	var votes []vote
	var b Batch
	data := s.buf[s.pos:s.end]
	for seen := 0; seen < csvGuessRecords && len(data) > 0; {
		view := data[:min(len(data), s.opts.MaxRecordBytes+1)]
		rec := s.parseRecord(&b, view, s.eof && len(view) == len(data))
		b.Data, b.Ends, b.Nulls = b.Data[:0], b.Ends[:0], b.Nulls[:0]
		if rec.status == csvRecMore || rec.status == csvRecUnterminated {
			break
		}
		data = data[rec.n:]
		if rec.status != csvRecGood || rec.fields == 1 && rec.contentEnd == 0 {
			continue
		}
		seen++
		k := 0
		for k < len(votes) && votes[k].fields != rec.fields {
			k++
		}
		if k == len(votes) {
			votes = append(votes, vote{fields: rec.fields})
		}
		votes[k].n++
	}
	best := vote{}
	for _, v := range votes {
		if v.n > best.n {
			best = v
		}
	}
	s.expected = best.fields
	return nil
}

// padNulls appends NULL fields to the row just parsed (fields of them in b) up to the expected count
// and returns that count (SourceOptions.PadShort).
func (s *CSVSource) padNulls(b *Batch, fields int) int {
	end := int32(len(b.Data))
	for ; fields < s.expected; fields++ {
		b.Ends = append(b.Ends, end)
		b.Nulls = append(b.Nulls, true)
	}
	return fields
}
