package partition

import (
	"fmt"
	"math/rand"
	"slices"
	"sync"
	"testing"
)

// priorities gives every row the priority priority gives it, whatever the lengths of the four rows
// hashed together (equal, one shorter, empty) and however many rows there are (tails of 1-3 rows).
func TestPrioritiesAsPriority(t *testing.T) {
	rng := rand.New(rand.NewSource(8))
	sm := NewSampler(1, 5)
	for round := 0; round < 300; round++ {
		rows := make([][]byte, rng.Intn(40))
		same := 1 + rng.Intn(40)
		for i := range rows {
			n := same
			if round%3 != 0 {
				n = rng.Intn(41)
			}
			rows[i] = make([]byte, n)
			for k := range rows[i] {
				rows[i][k] = byte(rng.Intn(256))
			}
		}
		offers := make([]listedOffer, len(rows))
		for i, r := range rows {
			offers[i] = listedOffer{row: r, bytes: 1}
		}
		prio := make([]uint64, len(rows))
		sm.priorities(offers, prio)
		for i, r := range rows {
			if want := sm.priority(r); prio[i] != want {
				t.Fatalf("round %d: row %d of %d (%d bytes): priority %x, want %x", round, i, len(rows), len(r), prio[i], want)
			}
		}
	}
}

// OfferAll from several goroutines keeps the sample Offer keeps, with the same bytes: lists of any
// length (empty, shorter than a batch, several batches), keys offered once, again in one list and again
// in later lists, and capacities from 1 to more than the keys. Each list is empty after it.
func TestOfferAllAsOffer(t *testing.T) {
	rng := rand.New(rand.NewSource(6))
	for _, c := range []struct{ capacity, keys int }{{1, 20000}, {7, 20000}, {64, 20000}, {1000, 20000}, {50000, 20000},
		{1, 300}, {7, 300}, {64, 300}} { // few keys: the kept ones, the worst of them too, offered again and again
		capacity := c.capacity
		type offer struct {
			row   string
			bytes int64
		}
		var lists [][]offer
		for range 40 {
			l := make([]offer, rng.Intn(3000))
			for i := range l {
				k := rng.Intn(c.keys)
				if i > 0 && rng.Intn(4) == 0 {
					k %= 1 + i // some keys again in one list
				}
				l[i] = offer{fmt.Sprintf("k%0*d", 1+k%12, k), int64(1 + rng.Intn(100))}
			}
			lists = append(lists, l)
		}
		want := NewSampler(capacity, 3)
		for _, l := range lists {
			for _, o := range l {
				want.Offer([]byte(o.row), o.bytes)
			}
		}
		got := NewSampler(capacity, 3)
		var wg sync.WaitGroup
		next := make(chan []offer, len(lists))
		for _, l := range lists {
			next <- l
		}
		close(next)
		for range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var ol OfferList
				for l := range next {
					rows := make([][]byte, len(l)) // the caller's rows, changed after OfferAll
					for i, o := range l {
						rows[i] = []byte(o.row)
						ol.Add(rows[i], o.bytes)
					}
					got.OfferAll(&ol)
					for _, r := range rows {
						clear(r)
					}
					if ol.Len() != 0 || slices.ContainsFunc(ol.offers[:cap(ol.offers)], func(o listedOffer) bool { return o.row != nil }) {
						t.Errorf("capacity %d: list of %d offers not emptied", capacity, ol.Len())
					}
				}
			}()
		}
		wg.Wait()
		ws, gs := want.Sample(), got.Sample()
		if len(ws) != len(gs) {
			t.Fatalf("capacity %d: %d keys, want %d", capacity, len(gs), len(ws))
		}
		for i := range ws {
			if string(ws[i].Row) != string(gs[i].Row) || ws[i].Bytes != gs[i].Bytes {
				t.Fatalf("capacity %d: key %d is %q with %d bytes, want %q with %d", capacity, i, gs[i].Row, gs[i].Bytes, ws[i].Row, ws[i].Bytes)
			}
		}
		if want.Stats().Complete != got.Stats().Complete {
			t.Fatalf("capacity %d: complete %v, want %v", capacity, got.Stats().Complete, want.Stats().Complete)
		}
	}
}
