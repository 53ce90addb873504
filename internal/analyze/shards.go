package analyze

import (
	"math"
	"slices"
	"sync"
)

// dupShards is the number of independently locked duplicate trackers per kind: keys are spread over
// them by the top bits of their hash so that concurrent Adds do not serialize on one Bloom filter.
const dupShards = 16

// shardedDups splits a duplicate tracker (dupTracker) into dupShards shards, each with 1/dupShards of
// the expected count, exact-sample capacity and one lock. Estimates and examples are combined.
type shardedDups struct {
	shards [dupShards]struct {
		mu sync.Mutex
		t  *dupTracker
	}
}

func newShardedDups(expected int64, rate float64, exactCap, maxCands int, sameSeqIsDup bool) *shardedDups {
	s := &shardedDups{}
	per := (expected + dupShards - 1) / dupShards
	perExact := 0
	if exactCap > 0 {
		perExact = max(1, (exactCap+dupShards-1)/dupShards)
	}
	for i := range s.shards {
		s.shards[i].t = newDupTracker(per, rate, perExact, maxCands, sameSeqIsDup)
	}
	return s
}

// shardOf picks a shard from the top bits of a key hash (the exact sample uses the low bits).
func shardOf(h uint64) int { return int(h >> 60) }

// estimate combines the shards: duplicates add up, and so do the expected false-positive counts whose
// square root gives the error bound.
func (s *shardedDups) estimate() (dups, errBound int64) {
	var est, fp float64
	var tests int64
	for i := range s.shards {
		t := s.shards[i].t
		tests += t.tests
		est += float64(t.positives) - t.fpSum // not clamped per shard: that would bias the sum upwards
		fp += t.fpSum
	}
	if tests == 0 {
		return 0, 0
	}
	return int64(math.Round(max(0, est))), int64(math.Ceil(2*math.Sqrt(fp))) + 1
}

// finalFP is the mean of the shards' false-positive rates after their last insert.
func (s *shardedDups) finalFP() float64 {
	var sum float64
	for i := range s.shards {
		sum += s.shards[i].t.finalFP()
	}
	return sum / dupShards
}

func (s *shardedDups) sampledEstimate() int64 {
	var n int64
	for i := range s.shards {
		n += s.shards[i].t.sampledEstimate()
	}
	return n
}

func (s *shardedDups) positives() int64 {
	var n int64
	for i := range s.shards {
		n += s.shards[i].t.positives
	}
	return n
}

// examples merges the shards' examples in the same order as dupTracker.examples: exact-sample
// confirmations first, then confirmed candidates, then suspected ones, each by first position.
func (s *shardedDups) examples(n int) []example {
	var all []example
	for i := range s.shards {
		all = append(all, s.shards[i].t.examples(math.MaxInt)...)
	}
	rank := func(e example) int {
		switch {
		case e.fromExact:
			return 0
		case e.confirmed:
			return 1
		}
		return 2
	}
	slices.SortFunc(all, func(a, b example) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		return compareExamples(a, b)
	})
	if len(all) > n {
		all = all[:n]
	}
	return all
}
