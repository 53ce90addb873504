package partition

// OfferList collects a goroutine's offers for OfferAll: the rows are referenced, not copied, until
// OfferAll hands them to the sampler. Its buffers are reused from one OfferAll to the next; the zero
// value is an empty list. It is not safe for concurrent use.
type OfferList struct {
	offers []listedOffer
	prio   []uint64
	acc    []uint32 // the accepted offers' indexes
}

// listedOffer is an offer in an OfferList.
type listedOffer struct {
	row   []byte
	bytes int64
}

// Add appends an offer of row with bytes (see Sampler.Offer). row must stay unchanged until OfferAll.
func (l *OfferList) Add(row []byte, bytes int64) {
	l.offers = append(l.offers, listedOffer{row, bytes})
}

// Len is the number of offers added since the last OfferAll.
func (l *OfferList) Len() int { return len(l.offers) }

// OfferAll offers every row of l as Offer does, and empties l. The rows' priorities are hashed four at
// a time (FNV-1a is a chain of dependent multiplications per row; four chains keep the multiplier
// busy), the threshold is read once, and the accepted offers are copied into the pending batch under
// one lock acquisition instead of one per row. The sample is the same as with Offer: only offers above
// the threshold are dropped, and a key above it can never be kept.
func (sm *Sampler) OfferAll(l *OfferList) {
	offers := l.offers
	if len(offers) == 0 {
		return
	}
	if cap(l.prio) < len(offers) {
		l.prio = make([]uint64, len(offers), cap(offers))
	}
	prio := l.prio[:len(offers)]
	sm.priorities(offers, prio)
	acc := l.acc[:0]
	t := sm.threshold.Load()
	for i, p := range prio {
		if p <= t {
			acc = append(acc, uint32(i))
		}
	}
	if len(acc) > 0 {
		sm.offerAccepted(offers, prio, acc)
	}
	clear(offers) // drop the references to the caller's rows
	l.offers = offers[:0]
	l.acc = acc[:0]
}

// offerAccepted appends the accepted offers (offers[i] for i in acc, their priorities in prio) to the
// pending batch under one lock acquisition, and merges and selects each batch they fill, as Offer does.
// The rows go straight from the caller's memory into the batch: copied into a list of their own first
// (and that list into the batch), they took two copies each and the list's memory (170 KB a list of
// 4,096 offers, fresh memory with GOGC off).
func (sm *Sampler) offerAccepted(offers []listedOffer, prio []uint64, acc []uint32) {
	sm.mu.Lock()
	b := sm.pending
	for _, i := range acc {
		if b == nil {
			b = sm.newBatchLocked()
			sm.pending = b
		}
		o := &offers[i]
		b.entries = append(b.entries, sampleEntry{prio: prio[i], bytes: o.bytes, pos: entryPos(len(b.rows), len(o.row))})
		if len(b.rows)+len(o.row) > cap(b.rows) {
			b.rows = grownRows(b.rows, len(o.row), len(b.entries), sm.batch)
		}
		b.rows = append(b.rows, o.row...)
		if len(b.entries) < sm.batch {
			continue
		}
		sm.pending = nil
		sm.mu.Unlock()
		sm.mergeFull(b)
		sm.mu.Lock()
		b = sm.pending // another goroutine's, or nil
	}
	sm.mu.Unlock()
}

// priorities sets prio[i] to the priority of offers[i].row, four rows at a time: the FNV-1a steps of four
// rows interleaved over the length they all have, then each row's own tail.
func (sm *Sampler) priorities(offers []listedOffer, prio []uint64) {
	prio = prio[:len(offers)]
	i := 0
	for ; i+4 <= len(offers); i += 4 {
		o4 := offers[i : i+4 : i+4]
		a, b, c, d := o4[0].row, o4[1].row, o4[2].row, o4[3].row
		n := min(len(a), len(b), len(c), len(d))
		ha, hb, hc, hd := fnv4(a[:n], b[:n], c[:n], d[:n])
		// Rows of one length (the usual case) have no tails.
		if len(a) > n {
			ha = fnvFrom(ha, a[n:])
		}
		if len(b) > n {
			hb = fnvFrom(hb, b[n:])
		}
		if len(c) > n {
			hc = fnvFrom(hc, c[n:])
		}
		if len(d) > n {
			hd = fnvFrom(hd, d[n:])
		}
		p := prio[i : i+4 : i+4]
		p[0], p[1], p[2], p[3] = sm.finish(ha), sm.finish(hb), sm.finish(hc), sm.finish(hd)
	}
	for ; i < len(offers); i++ {
		prio[i] = sm.priority(offers[i].row)
	}
}

// fnv4 is FNV-1a 64 of four rows of one length, their steps interleaved: a leaf, so that the four
// hashes stay in registers (in priorities' loop two of them went through the stack every byte).
func fnv4(a, b, c, d []byte) (ha, hb, hc, hd uint64) {
	const prime = fnvPrime
	ha, hb, hc, hd = fnvOffset, fnvOffset, fnvOffset, fnvOffset
	b, c, d = b[:len(a)], c[:len(a)], d[:len(a)]
	for k := 0; k < len(a)-1; k += 2 { // two bytes a step: one loop test for eight multiplications
		ha = (ha ^ uint64(a[k])) * prime
		hb = (hb ^ uint64(b[k])) * prime
		hc = (hc ^ uint64(c[k])) * prime
		hd = (hd ^ uint64(d[k])) * prime
		ha = (ha ^ uint64(a[k+1])) * prime
		hb = (hb ^ uint64(b[k+1])) * prime
		hc = (hc ^ uint64(c[k+1])) * prime
		hd = (hd ^ uint64(d[k+1])) * prime
	}
	if len(a)%2 == 1 { // an odd length: its last byte
		k := len(a) - 1
		ha = (ha ^ uint64(a[k])) * prime
		hb = (hb ^ uint64(b[k])) * prime
		hc = (hc ^ uint64(c[k])) * prime
		hd = (hd ^ uint64(d[k])) * prime
	}
	return
}
