//go:build linux

package pipeline

import "testing"

// TestHugePagesAdvises: hugePages advises memory from hugeMin bytes on (one range each), not smaller,
// and no more than maxHugeRanges ranges.
func TestHugePagesAdvises(t *testing.T) {
	// The package's other tests (sources and batches by the hundred) may have used up maxHugeRanges.
	saved := hugeRanges.Load()
	hugeRanges.Store(0)
	defer hugeRanges.Store(saved)
	before := hugeRanges.Load()
	hugePages(make([]byte, hugeMin-1))
	if hugeRanges.Load() != before {
		t.Fatalf("advised %d bytes, below hugeMin", hugeMin-1)
	}
	b := hugeMake[byte](hugeMin)
	if hugeRanges.Load() != before+1 || cap(b) != hugeMin {
		t.Fatalf("hugeMake(%d): %d ranges advised, want 1 (cap %d)", hugeMin, hugeRanges.Load()-before, cap(b))
	}
	hugeRanges.Store(maxHugeRanges)
	hugeMake[byte](hugeMin)
	if hugeRanges.Load() != maxHugeRanges {
		t.Fatalf("advised a range beyond maxHugeRanges (%d)", maxHugeRanges)
	}
}
