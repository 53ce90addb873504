//go:build linux

package pipeline

import (
	"testing"

	"github.com/hfload/hfload/internal/hugepage"
)

// TestHugeMakeAdvises: hugeMake advises memory from hugepage.Min bytes on (one range each of
// hugeRanges), not smaller, and no more than hugeRanges.Max ranges.
func TestHugeMakeAdvises(t *testing.T) {
	// The package's other tests (sources and batches by the hundred) may have used up hugeRanges.Max.
	saved := hugeRanges.Count()
	hugeRanges.SetCount(0)
	defer hugeRanges.SetCount(saved)
	hugeMake[byte](hugepage.Min - 1)
	if hugeRanges.Count() != 0 {
		t.Fatalf("advised %d bytes, below hugepage.Min", hugepage.Min-1)
	}
	b := hugeMake[byte](hugepage.Min)
	if hugeRanges.Count() != 1 || cap(b) != hugepage.Min {
		t.Fatalf("hugeMake(%d): %d ranges advised, want 1 (cap %d)", hugepage.Min, hugeRanges.Count(), cap(b))
	}
	hugeRanges.SetCount(hugeRanges.Max)
	hugeMake[byte](hugepage.Min)
	if hugeRanges.Count() != hugeRanges.Max {
		t.Fatalf("advised a range beyond hugeRanges.Max (%d)", hugeRanges.Max)
	}
}
