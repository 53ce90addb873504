package sorter

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/hfload/hfload/internal/cellrec"
	"github.com/hfload/hfload/internal/kv"
)

type rec struct {
	kv  []byte
	seq uint64
}

// randRecords makes n records over a small key space so that prefixes, rows and whole keys collide.
func randRecords(rng *rand.Rand, n int) []rec {
	out := make([]rec, n)
	for i := range out {
		var row []byte
		switch rng.IntN(4) {
		case 0: // short rows (shorter than the 8-byte prefix, incl. zero bytes)
			row = []byte{byte(rng.IntN(3)), byte(rng.IntN(3))}[:1+rng.IntN(2)]
		case 1: // long rows sharing an 8-byte prefix
			row = fmt.Appendf(nil, "rowprefix-%03d", rng.IntN(50))
		default:
			row = fmt.Appendf(nil, "r%05d", rng.IntN(2000))
		}
		fam := []byte{"fg"[rng.IntN(2)]}
		qual := fmt.Appendf(nil, "q%d", rng.IntN(4))
		ts := int64(rng.IntN(3))
		typ := kv.TypePut
		if rng.IntN(8) == 0 {
			typ = kv.TypeDelete
		}
		val := make([]byte, rng.IntN(120))
		for j := range val {
			val[j] = byte(rng.Uint32())
		}
		out[i] = rec{kv.AppendKeyValue(nil, row, fam, qual, ts, typ, val), uint64(i)}
	}
	return out
}

func reference(recs []rec) []rec {
	ref := append([]rec(nil), recs...)
	sort.SliceStable(ref, func(i, j int) bool {
		if c := kv.CompareKeyValues(ref[i].kv, ref[j].kv); c != 0 {
			return c < 0
		}
		return ref[i].seq < ref[j].seq
	})
	return ref
}

func newTestPool(t testing.TB, mem int64, par int) *Pool {
	t.Helper()
	return newTestPoolOpts(t, PoolOptions{Memory: mem, Parallelism: par})
}

// newTestPoolOpts makes a pool with opts in a test directory, with testDict unless opts has a Dict.
func newTestPoolOpts(t testing.TB, opts PoolOptions) *Pool {
	t.Helper()
	opts.TempDir = t.TempDir()
	if opts.Dict == nil {
		opts.Dict = testDict
	}
	p, err := NewPool(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func drain(t testing.TB, s *Sorter) []rec {
	t.Helper()
	it, err := s.Finish(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out, _ := collect(it, s.p.Dict())
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}

func sameRecords(t *testing.T, got, want []rec) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d records, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].seq != want[i].seq || !bytes.Equal(got[i].kv, want[i].kv) {
			t.Fatalf("record %d: got seq %d %s value %q, want seq %d %s value %q", i, got[i].seq,
				kv.Key(kv.KVKey(got[i].kv)), kv.KVValue(got[i].kv), want[i].seq,
				kv.Key(kv.KVKey(want[i].kv)), kv.KVValue(want[i].kv))
		}
	}
}

func assertDirEmpty(t *testing.T, p *Pool) {
	t.Helper()
	ents, err := os.ReadDir(p.Dir())
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 0 {
		t.Fatalf("spill directory holds %d files after Close, e.g. %s", len(ents), ents[0].Name())
	}
}

func TestSortMatchesReference(t *testing.T) {
	for _, tc := range []struct {
		mem        int64
		par        int
		n          int
		compress   bool
		wantSpill  bool
		wantPasses bool
	}{
		{mem: 64 << 10, par: 1, n: 20000, wantSpill: true, wantPasses: true},
		{mem: 64 << 10, par: 1, n: 20000, compress: true, wantSpill: true, wantPasses: true},
		{mem: 256 << 10, par: 2, n: 20000, wantSpill: true, wantPasses: true},
		{mem: 256 << 10, par: 2, n: 20000, compress: true, wantSpill: true, wantPasses: true},
		{mem: 8 << 20, par: 2, n: 20000}, // fits: a single sorter spills at half the arena memory
	} {
		t.Run(fmt.Sprintf("mem=%d/par=%d/compress=%v", tc.mem, tc.par, tc.compress), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(tc.mem), 1))
			recs := randRecords(rng, tc.n)
			// Add in a shuffled order: seq, not add order, breaks ties.
			order := rng.Perm(len(recs))
			p := newTestPoolOpts(t, PoolOptions{Memory: tc.mem, Parallelism: tc.par, CompressRuns: tc.compress})
			s := p.NewSorter("t", SorterOptions{})
			for _, i := range order {
				if err := s.Add(rc(recs[i].kv), recs[i].seq); err != nil {
					t.Fatal(err)
				}
			}
			got := drain(t, s)
			sameRecords(t, got, reference(recs))
			if tc.wantSpill != (p.Spills() > 0) {
				t.Errorf("spills = %d, want spilling %v", p.Spills(), tc.wantSpill)
			}
			if tc.wantPasses != (p.MergePasses() > 0) {
				t.Errorf("merge passes = %d, want passes %v", p.MergePasses(), tc.wantPasses)
			}
			if pk := p.PeakBytes(); pk > tc.mem {
				t.Errorf("peak accounted %d > budget %d", pk, tc.mem)
			}
			if u := p.UsedBytes() - p.PooledBytes(); u != p.reserveIO {
				t.Errorf("after Close %d bytes still accounted, want the I/O reserve %d", u, p.reserveIO)
			}
			assertDirEmpty(t, p)
			t.Logf("spills %d, passes %d, peak %d of %d", p.Spills(), p.MergePasses(), p.PeakBytes(), tc.mem)
		})
	}
}

func TestDuplicatesOrderedBySeq(t *testing.T) {
	p := newTestPool(t, 64<<10, 1)
	s := p.NewSorter("dups", SorterOptions{})
	rng := rand.New(rand.NewPCG(7, 7))
	const n = 5000
	seqs := rng.Perm(n)
	for _, sq := range seqs {
		kv := kv.AppendKeyValue(nil, []byte("same"), []byte("f"), []byte("q"), 5, kv.TypePut,
			binary.BigEndian.AppendUint64(nil, uint64(sq)))
		if err := s.Add(rc(kv), uint64(sq)); err != nil {
			t.Fatal(err)
		}
	}
	got := drain(t, s)
	if len(got) != n {
		t.Fatalf("got %d records, want %d", len(got), n)
	}
	for i, r := range got {
		if r.seq != uint64(i) || binary.BigEndian.Uint64(kv.KVValue(r.kv)) != uint64(i) {
			t.Fatalf("position %d holds seq %d", i, r.seq)
		}
	}
	if p.Spills() == 0 {
		t.Fatal("expected spills with a 64 KiB budget")
	}
}

func TestWideRowWithinBudget(t *testing.T) {
	const n = 1_000_000
	const mem = 16 << 20
	p := newTestPool(t, mem, 2)
	s := p.NewSorter("wide", SorterOptions{})
	rng := rand.New(rand.NewPCG(3, 3))
	perm := rng.Perm(n)
	var buf []byte
	var q [8]byte
	for i, v := range perm {
		binary.BigEndian.PutUint64(q[:], uint64(v))
		buf = kv.AppendKeyValue(buf[:0], []byte("the-one-wide-row"), []byte("d"), q[:], 1, kv.TypePut, q[4:])
		if err := s.Add(rc(buf), uint64(i)); err != nil {
			t.Fatal(err)
		}
	}
	it, err := s.Finish(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	j := 0
	for it.Next() {
		for cells := it.Cells(); len(cells) > 0; {
			var qual []byte
			qual, _, cells = p.Dict().Next(cells)
			if binary.BigEndian.Uint64(qual) != uint64(j) {
				t.Fatalf("position %d holds qualifier %d", j, binary.BigEndian.Uint64(qual))
			}
			j++
		}
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	it.Close()
	if j != n {
		t.Fatalf("got %d cells, want %d", j, n)
	}
	if p.Spills() == 0 {
		t.Fatal("a 1e6-cell row in 16 MiB should spill")
	}
	if pk := p.PeakBytes(); pk > mem {
		t.Fatalf("peak accounted %d > budget %d", pk, mem)
	}
	assertDirEmpty(t, p)
	t.Logf("spills %d, passes %d, peak %d of %d", p.Spills(), p.MergePasses(), p.PeakBytes(), int64(mem))
}

func TestManySortersShareOnePool(t *testing.T) {
	const mem = 1 << 20
	const nSorters = 40
	p := newTestPool(t, mem, 2)
	sorters := make([]*Sorter, nSorters)
	for i := range sorters {
		sorters[i] = p.NewSorter(fmt.Sprintf("region-%d", i), SorterOptions{})
	}
	rng := rand.New(rand.NewPCG(11, 11))
	recs := randRecords(rng, 60000)
	// A skewed assignment: sorter 0 gets half the records.
	assign := make([]int, len(recs))
	for i := range assign {
		if rng.IntN(2) == 0 {
			assign[i] = 0
		} else {
			assign[i] = rng.IntN(nSorters)
		}
	}
	const workers = 6
	var wg sync.WaitGroup
	errc := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < len(recs); i += workers {
				if err := sorters[assign[i]].Add(rc(recs[i].kv), recs[i].seq); err != nil {
					errc <- err
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errc)
	t.Logf("after adds: spills %d", p.Spills())
	for err := range errc {
		t.Fatal(err)
	}
	want := make([][]rec, nSorters)
	for i, r := range recs {
		want[assign[i]] = append(want[assign[i]], r)
	}
	got := make([][]rec, nSorters)
	var mu sync.Mutex
	var firstErr error
	sem := make(chan struct{}, 3)
	for i := range sorters {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			it, err := sorters[i].Finish(context.Background())
			var out []rec
			if err == nil {
				out, _ = collect(it, p.Dict())
				err = it.Err()
				if cerr := it.Close(); err == nil {
					err = cerr
				}
			}
			mu.Lock()
			got[i] = out
			if err != nil && firstErr == nil {
				firstErr = err
			}
			mu.Unlock()
		}(i)
	}
	wg.Wait()
	if firstErr != nil {
		t.Fatal(firstErr)
	}
	for i := range sorters {
		sameRecords(t, got[i], reference(want[i]))
	}
	if pk := p.PeakBytes(); pk > mem {
		t.Fatalf("peak accounted %d > budget %d", pk, mem)
	}
	if p.Spills() == 0 {
		t.Fatal("expected spills")
	}
	assertDirEmpty(t, p)
	t.Logf("spills %d, passes %d, peak %d of %d", p.Spills(), p.MergePasses(), p.PeakBytes(), int64(mem))
}

func TestInvalidRecordAndMisuse(t *testing.T) {
	p := newTestPool(t, 1<<20, 1)
	s := p.NewSorter("bad", SorterOptions{})
	good := rc(kv.AppendKeyValue(nil, []byte("r"), []byte("f"), []byte("q"), 1, kv.TypePut, []byte("v")))
	descending := cellrec.AppendLiteralCell(cellrec.AppendLiteralCell(
		cellrec.AppendHeader(nil, []byte("r"), []byte("f"), 1, kv.TypePut), []byte("b"), nil), []byte("a"), nil)
	dictCell := p.Dict().AppendCell(cellrec.AppendHeader(nil, []byte("r"), []byte("f"), 1, kv.TypePut), p.Dict().Len(), nil)
	for _, bad := range [][]byte{nil, good[:5], good[:len(good)-1], append(append([]byte(nil), good...), 0), descending, dictCell} {
		if err := s.Add(bad, 0); err == nil {
			t.Fatalf("Add(%x) succeeded", bad)
		}
	}
	// Inconsistent row length inside an otherwise well-sized record.
	broken := append([]byte(nil), good...)
	broken[0] = 0x7f
	if err := s.Add(broken, 0); err == nil {
		t.Fatal("Add accepted a record with a bad row length")
	}
	if err := s.Add(good, 0); err != nil {
		t.Fatal(err)
	}
	huge := rc(kv.AppendKeyValue(nil, []byte("r"), []byte("f"), nil, 1, kv.TypePut, make([]byte, 2<<20)))
	if err := s.Add(huge, 1); err == nil {
		t.Fatal("a record larger than the budget was accepted")
	}
	if err := s.Add(good, 2); err != nil {
		t.Fatalf("a rejected record broke the sorter: %v", err)
	}
	s2 := p.NewSorter("ok", SorterOptions{})
	s2.Add(good, 0)
	it, err := s2.Finish(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := s2.Add(good, 1); err == nil {
		t.Fatal("Add after Finish succeeded")
	}
	if _, err := s2.Finish(context.Background()); err == nil {
		t.Fatal("second Finish succeeded")
	}
	it.Close()
	s.Close()

	empty := p.NewSorter("empty", SorterOptions{})
	if got := drain(t, empty); len(got) != 0 {
		t.Fatalf("empty sorter produced %d records", len(got))
	}
	assertDirEmpty(t, p)
	if u := p.UsedBytes() - p.PooledBytes(); u != p.reserveIO {
		t.Fatalf("%d bytes still accounted", u)
	}
}

func TestCancelRemovesRuns(t *testing.T) {
	p := newTestPool(t, 64<<10, 1)
	s := p.NewSorter("cancel", SorterOptions{})
	for _, r := range randRecords(rand.New(rand.NewPCG(5, 5)), 5000) {
		if err := s.Add(rc(r.kv), r.seq); err != nil {
			t.Fatal(err)
		}
	}
	if s.Runs() == 0 {
		t.Fatal("expected runs")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Finish(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Finish with a cancelled context: %v", err)
	}
	assertDirEmpty(t, p)
	if u := p.UsedBytes() - p.PooledBytes(); u != p.reserveIO {
		t.Fatalf("%d bytes still accounted", u)
	}

	// Cancellation while iterating stops Next with the context's error.
	s2 := p.NewSorter("cancel2", SorterOptions{})
	for _, r := range randRecords(rand.New(rand.NewPCG(6, 6)), 5000) {
		s2.Add(rc(r.kv), r.seq)
	}
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	it, err := s2.Finish(ctx2)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for it.Next() {
		n++
		if n == 10 {
			cancel2()
		}
	}
	if !errors.Is(it.Err(), context.Canceled) || n >= 5000 {
		t.Fatalf("after cancel: %d records, err %v", n, it.Err())
	}
	it.Close()
	assertDirEmpty(t, p)
}

func TestPoolCloseRemovesDir(t *testing.T) {
	p, err := NewPool(PoolOptions{Memory: 64 << 10, TempDir: t.TempDir(), Parallelism: 1})
	if err != nil {
		t.Fatal(err)
	}
	s := p.NewSorter("left-open", SorterOptions{})
	for _, r := range randRecords(rand.New(rand.NewPCG(9, 9)), 3000) {
		s.Add(rc(r.kv), r.seq)
	}
	if s.Runs() == 0 {
		t.Fatal("expected runs")
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p.Dir()); !os.IsNotExist(err) {
		t.Fatalf("spill directory still exists: %v", err)
	}
	if err := s.Add(rc(randRecords(rand.New(rand.NewPCG(1, 1)), 1)[0].kv), 0); err == nil {
		// Add may succeed if it fits in memory; Finish must then fail or produce no files.
		if _, err := s.Finish(context.Background()); err == nil {
			t.Fatal("Finish after Pool.Close succeeded")
		}
	}
}

func TestNewPoolRejectsBadOptions(t *testing.T) {
	for _, o := range []PoolOptions{{Memory: 1000}, {Memory: -1}, {Memory: 64 << 10, Parallelism: 64}} {
		if _, err := NewPool(o); err == nil {
			t.Errorf("NewPool(%+v) succeeded", o)
		}
	}
}

// Records larger than a run chunk get raw chunks of their own; they must survive spills and merges.
func TestLargeRecords(t *testing.T) {
	const mem = 256 << 10
	p := newTestPool(t, mem, 1)
	rng := rand.New(rand.NewPCG(21, 21))
	recs := randRecords(rng, 3000)
	for i := 0; i < len(recs); i += 50 {
		val := make([]byte, p.ChunkSize()+rng.IntN(int(p.MaxRecord())-p.ChunkSize()-100))
		for j := range val {
			val[j] = byte(j * i)
		}
		k := kv.Key(kv.KVKey(recs[i].kv))
		recs[i].kv = kv.AppendKeyValue(nil, k.Row(), k.Family(), k.Qualifier(), k.Timestamp(), k.Type(), val)
	}
	s := p.NewSorter("large", SorterOptions{})
	for _, i := range rng.Perm(len(recs)) {
		if err := s.Add(rc(recs[i].kv), recs[i].seq); err != nil {
			t.Fatal(err)
		}
	}
	sameRecords(t, drain(t, s), reference(recs))
	if p.Spills() == 0 {
		t.Fatal("expected spills")
	}
	if pk := p.PeakBytes(); pk > mem {
		t.Fatalf("peak accounted %d > budget %d", pk, mem)
	}
	assertDirEmpty(t, p)
	t.Logf("spills %d, passes %d, peak %d of %d", p.Spills(), p.MergePasses(), p.PeakBytes(), int64(mem))
}

func TestCorruptRunIsAnError(t *testing.T) {
	for _, tc := range []struct {
		where    string
		compress bool
	}{{"payload", false}, {"header", false}, {"truncate", false}, {"payload", true}, {"header", true}, {"truncate", true}} {
		where := tc.where
		t.Run(fmt.Sprintf("%s/compress=%v", where, tc.compress), func(t *testing.T) {
			p := newTestPoolOpts(t, PoolOptions{Memory: 64 << 10, Parallelism: 1, CompressRuns: tc.compress})
			s := p.NewSorter("corrupt", SorterOptions{})
			for _, r := range randRecords(rand.New(rand.NewPCG(8, 8)), 3000) {
				if err := s.Add(rc(r.kv), r.seq); err != nil {
					t.Fatal(err)
				}
			}
			path := s.runs[0].path
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			switch where {
			case "payload":
				b[len(b)/2] ^= 0x40
			case "header":
				b[1] ^= 0x7f
			case "truncate":
				b = b[:len(b)-10]
			}
			if err := os.WriteFile(path, b, 0o600); err != nil {
				t.Fatal(err)
			}
			it, err := s.Finish(context.Background())
			if err == nil {
				for it.Next() {
				}
				err = it.Err()
				it.Close()
			}
			if err == nil {
				t.Fatal("a corrupted run was read without error")
			}
			t.Log(err)
			assertDirEmpty(t, p)
		})
	}
}

// The pool spills the sorter holding the most memory, even when another sorter asks for room.
func TestLargestSorterIsSpilled(t *testing.T) {
	p := newTestPool(t, 1<<20, 1)
	big := p.NewSorter("big", SorterOptions{})
	small := p.NewSorter("small", SorterOptions{})
	recs := randRecords(rand.New(rand.NewPCG(4, 4)), 40000)
	i := 0
	for ; big.Runs() == 0; i++ {
		if err := big.Add(rc(recs[i].kv), recs[i].seq); err != nil {
			t.Fatal(err)
		}
	}
	// big just spilled itself; fill it again to just below the point where it spilled last time.
	filled := i
	for j := 0; j < filled*8/10; j++ {
		if err := big.Add(rc(recs[i].kv), recs[i].seq); err != nil {
			t.Fatal(err)
		}
		i++
	}
	for small.Runs() == 0 && big.Runs() == 1 {
		if err := small.Add(rc(recs[i].kv), recs[i].seq); err != nil {
			t.Fatal(err)
		}
		i++
	}
	if big.Runs() != 2 || small.Runs() != 0 {
		t.Fatalf("runs: big %d, small %d; want big spilled for small", big.Runs(), small.Runs())
	}
	big.Close()
	small.Close()
	assertDirEmpty(t, p)
}

// A sorter waiting for memory held by a busy sorter must not wait forever once that sorter goes idle
// (or keeps adding): the busy one is asked to give its memory back.
func TestWaiterIsNotStarvedByBusySorter(t *testing.T) {
	p := newTestPool(t, 256<<10, 1)
	a := p.NewSorter("a", SorterOptions{})
	b := p.NewSorter("b", SorterOptions{})
	recs := randRecords(rand.New(rand.NewPCG(12, 12)), 30000)
	done := make(chan error, 4)
	for w := 0; w < 3; w++ { // three writers keep b's lock busy
		go func(w int) {
			for i := w; i < 25000; i += 3 {
				if err := b.Add(rc(recs[i].kv), recs[i].seq); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}(w)
	}
	go func() {
		for _, r := range recs[25000:] {
			if err := a.Add(rc(r.kv), r.seq); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	for i := 0; i < 4; i++ {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("Add is stuck waiting for memory held by another sorter")
		}
	}
	sameRecords(t, drain(t, a), reference(recs[25000:]))
	sameRecords(t, drain(t, b), reference(recs[:25000]))
	assertDirEmpty(t, p)
}

// A reused seq (equal key and seq) still gives one deterministic order: by value, whatever the budget.
func TestReusedSeqIsDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 13))
	var recs []rec
	for i := 0; i < 4000; i++ {
		val := fmt.Appendf(nil, "v%06d", rng.IntN(1000000))
		recs = append(recs, rec{kv.AppendKeyValue(nil, []byte("k"), []byte("f"), []byte("q"), 1,
			kv.TypePut, val), 7})
	}
	var first []rec
	for _, mem := range []int64{64 << 10, 1 << 20} {
		p := newTestPool(t, mem, 1)
		s := p.NewSorter("reused", SorterOptions{})
		for _, i := range rng.Perm(len(recs)) {
			if err := s.Add(rc(recs[i].kv), recs[i].seq); err != nil {
				t.Fatal(err)
			}
		}
		got := drain(t, s)
		for j := 1; j < len(got); j++ {
			if bytes.Compare(kv.KVValue(got[j-1].kv), kv.KVValue(got[j].kv)) > 0 {
				t.Fatalf("budget %d: values out of order at %d", mem, j)
			}
		}
		if first == nil {
			first = got
		} else {
			sameRecords(t, got, first)
		}
	}
}

// TestAddRecordsWhileSpilling feeds one sorter from several goroutines in batches, with a budget that
// forces many spills: spills run outside the sorter's lock while the others go on adding, and the
// output is still exactly the reference order, within the budget, with every run file removed.
func TestAddRecordsWhileSpilling(t *testing.T) {
	const mem = 512 << 10
	p := newTestPool(t, mem, 2)
	s := p.NewSorter("one", SorterOptions{})
	rng := rand.New(rand.NewPCG(21, 21))
	recs := randRecords(rng, 40000)
	const workers, batch = 4, 97
	var wg sync.WaitGroup
	errc := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			var buf []Record
			for i := w * batch; i < len(recs); i += workers * batch {
				buf = buf[:0]
				for _, r := range recs[i:min(i+batch, len(recs))] {
					buf = append(buf, Record{Rec: rc(r.kv), Seq: r.seq})
				}
				if err := s.AddRecords(buf); err != nil {
					errc <- err
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	if n := s.Records(); n != int64(len(recs)) {
		t.Fatalf("Records() = %d, want %d", n, len(recs))
	}
	got := drain(t, s)
	sameRecords(t, got, reference(recs))
	if p.Spills() < 4 {
		t.Fatalf("spills = %d, want several", p.Spills())
	}
	if pk := p.PeakBytes(); pk > mem {
		t.Fatalf("peak accounted %d > budget %d", pk, mem)
	}
	assertDirEmpty(t, p)
}

func TestAddRecordsRejectsBadBatchWhole(t *testing.T) {
	p := newTestPool(t, 1<<20, 1)
	s := p.NewSorter("bad", SorterOptions{})
	good := rc(kv.AppendKeyValue(nil, []byte("r"), []byte("f"), []byte("q"), 1, kv.TypePut, []byte("v")))
	err := s.AddRecords([]Record{{Rec: good, Seq: 1}, {Rec: good[:len(good)-1], Seq: 2}})
	if err == nil {
		t.Fatal("a batch with a truncated record was accepted")
	}
	if n := s.Records(); n != 0 {
		t.Fatalf("%d records added from a rejected batch, want 0", n)
	}
	if err := s.AddRecords([]Record{{Rec: good, Seq: 3}}); err != nil {
		t.Fatalf("sorter unusable after a rejected batch: %v", err)
	}
	s.Close()
}

// TestNearlySortedInputMergesSegments: records added as sorted batches in shuffled batch order (what
// an export ordered by primary key looks like after parallel mapping) are merged from their ascending
// segments instead of being sorted, and come out in exactly the reference order, in memory and spilled.
func TestNearlySortedInputMergesSegments(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	recs := randRecords(rng, 30000)
	// Duplicate keys with seqs out of order inside a batch must still come out by seq.
	recs = append(recs, rec{recs[0].kv, 1 << 40}, rec{recs[0].kv, 1 << 39})
	sorted := reference(recs)
	var batches [][]rec
	for i := 0; i < len(sorted); i += 1000 {
		b := sorted[i:min(i+1000, len(sorted))]
		if i == 0 { // one batch with a local disorder
			b = append([]rec(nil), b...)
			b[10], b[11] = b[11], b[10]
		}
		batches = append(batches, b)
	}
	rng.Shuffle(len(batches), func(i, j int) { batches[i], batches[j] = batches[j], batches[i] })
	for _, mem := range []int64{64 << 20, 1 << 20} {
		p := newTestPool(t, mem, 2)
		s := p.NewSorter("nearly", SorterOptions{})
		for _, b := range batches {
			rs := make([]Record, len(b))
			for i, r := range b {
				rs[i] = Record{Rec: rc(r.kv), Seq: r.seq}
			}
			if err := s.AddRecords(rs); err != nil {
				t.Fatal(err)
			}
		}
		if mem == 64<<20 {
			s.mu.Lock()
			s.a.sort()
			segs := len(s.a.segs)
			s.mu.Unlock()
			// Consecutive batches that happen to ascend form one segment; the local disorder adds one.
			if segs < 2 || segs > len(batches)+2 {
				t.Fatalf("%d segments for %d sorted batches, want between 2 and one per batch plus 2", segs, len(batches))
			}
		}
		sameRecords(t, drain(t, s), sorted)
	}
	// Random input still takes the radix sort.
	p := newTestPool(t, 64<<20, 2)
	s := p.NewSorter("random", SorterOptions{})
	for _, r := range recs {
		if err := s.Add(rc(r.kv), r.seq); err != nil {
			t.Fatal(err)
		}
	}
	s.mu.Lock()
	s.a.sort()
	if s.a.segs != nil {
		t.Fatalf("random input merged from %d segments", len(s.a.segs))
	}
	s.mu.Unlock()
	sameRecords(t, drain(t, s), sorted)
}

// Reserve accounts a caller's memory against the budget, spilling a sorter to make room; Release gives
// it back; a request beyond the budget is an error.
func TestPoolReserveForCaller(t *testing.T) {
	const mem = 1 << 20
	p := newTestPool(t, mem, 1)
	s := p.NewSorter("fill", SorterOptions{})
	for _, r := range randRecords(rand.New(rand.NewPCG(3, 1)), 3000) {
		if err := s.Add(rc(r.kv), r.seq); err != nil {
			t.Fatal(err)
		}
	}
	before := p.UsedBytes() - p.PooledBytes()
	n := int64(mem / 2)
	if err := p.Reserve(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	if used := p.UsedBytes(); used > mem || used-p.PooledBytes() < n {
		t.Fatalf("after Reserve(%d): %d bytes used of %d", n, used, mem)
	}
	if s.Runs() == 0 && before+n > mem {
		t.Fatal("the reservation did not make room by spilling")
	}
	p.Release(n)
	if err := p.Reserve(context.Background(), mem); err == nil {
		t.Fatal("a reservation of the whole budget succeeded")
	}
	got := drain(t, s)
	if len(got) != 3000 {
		t.Fatalf("%d records after the reservations, want 3000", len(got))
	}
}
