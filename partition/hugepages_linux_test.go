//go:build linux

package partition

import (
	"fmt"
	"testing"
)

// A sampler of 65,536 keys makes its candidates, its row buffers, the sort's second buffer and indexes
// and its batches with huge pages asked for (fresh): a range each.
func TestSamplerHugePages(t *testing.T) {
	saved := hugeRanges.Count() // the package's other tests may have used up hugeRanges.Max
	hugeRanges.SetCount(0)
	defer hugeRanges.SetCount(saved)
	sm := NewSampler(1<<16, 1)
	var l OfferList
	for i := 0; i < 400000; i++ {
		l.Add([]byte(fmt.Sprintf("C%06d-%010d", (i*7919)%50000, i)), 60)
		if l.Len() == 4096 {
			sm.OfferAll(&l)
		}
	}
	sm.OfferAll(&l)
	if s := sm.Splits(10000); len(s) != 9999 {
		t.Fatalf("%d split points, want 9,999", len(s))
	}
	// entries, rows (grown once), spare, order, scratch, a batch's entries and rows.
	if got := hugeRanges.Count(); got < 7 {
		t.Fatalf("%d ranges advised, want at least 7", got)
	}
}
