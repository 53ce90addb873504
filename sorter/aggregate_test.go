package sorter

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/hfload/hfload/internal/cellrec"
	"github.com/hfload/hfload/internal/kv"
)

func longBytes(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }

func randValue(rng *rand.Rand, op, typ string) []byte {
	if op == "count" {
		return longBytes(1)
	}
	switch typ {
	case "long":
		return longBytes(rng.Int64N(2e12) - 1e12)
	case "double":
		switch rng.IntN(20) {
		case 0:
			return binary.BigEndian.AppendUint64(nil, math.Float64bits(math.Copysign(0, -1)))
		case 1:
			return binary.BigEndian.AppendUint64(nil, 0)
		}
		return binary.BigEndian.AppendUint64(nil, math.Float64bits((rng.Float64()-0.5)*1e6))
	case "decimal":
		unscaled := rng.Int64N(2e6) - 1e6
		scale := rng.IntN(5)
		d := appendTestDecimal(unscaled, scale)
		return []byte(d)
	default:
		b := make([]byte, rng.IntN(6))
		for i := range b {
			b[i] = "abcxyz"[rng.IntN(6)]
		}
		return b
	}
}

// appendTestDecimal formats independently of the package: via big.Rat's FloatString.
func appendTestDecimal(unscaled int64, scale int) string {
	r := new(big.Rat).SetFrac(big.NewInt(unscaled), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil))
	return r.FloatString(scale)
}

func scaleOf(s string) int {
	if i := strings.IndexByte(s, '.'); i >= 0 {
		return len(s) - i - 1
	}
	return 0
}

func ratOf(t *testing.T, s string) *big.Rat {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		t.Fatalf("bad decimal %q", s)
	}
	return r
}

// expectValue computes the aggregate of vals (in seq order) without the package's fold code.
func expectValue(t *testing.T, op, typ string, vals [][]byte) []byte {
	switch op {
	case "first":
		return vals[0]
	case "last":
		return vals[len(vals)-1]
	case "count":
		return longBytes(int64(len(vals)))
	}
	switch typ {
	case "long":
		sum := new(big.Int)
		mn, mx := int64(math.MaxInt64), int64(math.MinInt64)
		for _, v := range vals {
			x := int64(binary.BigEndian.Uint64(v))
			sum.Add(sum, big.NewInt(x))
			mn, mx = min(mn, x), max(mx, x)
		}
		switch op {
		case "sum":
			if !sum.IsInt64() {
				t.Fatal("test data overflows")
			}
			return longBytes(sum.Int64())
		case "min":
			return longBytes(mn)
		}
		return longBytes(mx)
	case "double":
		acc := math.Float64frombits(binary.BigEndian.Uint64(vals[0]))
		for _, v := range vals[1:] {
			x := math.Float64frombits(binary.BigEndian.Uint64(v))
			switch op {
			case "sum":
				acc += x
			case "min":
				acc = math.Min(acc, x)
			case "max":
				acc = math.Max(acc, x)
			}
		}
		return binary.BigEndian.AppendUint64(nil, math.Float64bits(acc))
	case "decimal":
		if op == "sum" {
			sum, sc := new(big.Rat), 0
			for _, v := range vals {
				sum.Add(sum, ratOf(t, string(v)))
				sc = max(sc, scaleOf(string(v)))
			}
			return []byte(sum.FloatString(sc))
		}
		best := vals[0]
		for _, v := range vals[1:] {
			c := ratOf(t, string(v)).Cmp(ratOf(t, string(best)))
			if c == 0 {
				c = bytes.Compare(v, best)
			}
			if (op == "min" && c < 0) || (op == "max" && c > 0) {
				best = v
			}
		}
		return best
	default:
		best := vals[0]
		for _, v := range vals[1:] {
			c := bytes.Compare(v, best)
			if (op == "min" && c < 0) || (op == "max" && c > 0) {
				best = v
			}
		}
		return best
	}
}

func TestAggregatorsMatchIndependent(t *testing.T) {
	cases := map[string][]string{
		"long":    {"sum", "min", "max", "first", "last", "count"},
		"double":  {"sum", "min", "max", "first", "last"},
		"decimal": {"sum", "min", "max", "first", "last"},
		"string":  {"min", "max", "first", "last"},
	}
	for _, typ := range []string{"long", "double", "decimal", "string"} {
		for _, op := range cases[typ] {
			t.Run(op+"/"+typ, func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(len(op)), uint64(len(typ))))
				const n, keys = 6000, 37
				type in struct {
					row []byte
					val []byte
				}
				ins := make([]in, n)
				groups := map[string][][]byte{}
				firstSeq, lastSeq := map[string]uint64{}, map[string]uint64{}
				for i := range ins {
					row := fmt.Appendf(nil, "k%03d", rng.IntN(keys))
					ins[i] = in{row, randValue(rng, op, typ)}
					groups[string(row)] = append(groups[string(row)], ins[i].val)
					if _, ok := firstSeq[string(row)]; !ok {
						firstSeq[string(row)] = uint64(i)
					}
					lastSeq[string(row)] = uint64(i)
				}
				agg, err := NewAggregator(op, typ)
				if err != nil {
					t.Fatal(err)
				}
				p := newTestPool(t, 64<<10, 1)
				s := p.NewSorter("agg", agg.Options())
				for _, i := range rng.Perm(n) { // shuffled add order; seq = input position
					rec := kv.AppendKeyValue(nil, ins[i].row, []byte("s"), []byte(op), 0, kv.TypePut, ins[i].val)
					if err := s.Add(rc(rec), uint64(i)); err != nil {
						t.Fatal(err)
					}
				}
				got := drain(t, s)
				if len(got) != len(groups) {
					t.Fatalf("got %d records, want one per key (%d)", len(got), len(groups))
				}
				for j, r := range got {
					row := string(kv.Key(kv.KVKey(r.kv)).Row())
					if j > 0 && kv.CompareKeyValues(got[j-1].kv, r.kv) >= 0 {
						t.Fatalf("keys out of order at %d", j)
					}
					want := expectValue(t, op, typ, groups[row])
					gv := kv.KVValue(r.kv)
					if typ == "double" && op == "sum" {
						g, w := math.Float64frombits(binary.BigEndian.Uint64(gv)), math.Float64frombits(binary.BigEndian.Uint64(want))
						if math.Abs(g-w) > 1e-9*math.Max(1, math.Abs(w))*float64(len(groups[row])) {
							t.Fatalf("key %s: sum %v, want %v", row, g, w)
						}
					} else if !bytes.Equal(gv, want) {
						t.Fatalf("key %s: got %q, want %q", row, gv, want)
					}
					wantSeq := firstSeq[row]
					if op == "last" {
						wantSeq = lastSeq[row]
					}
					if r.seq != wantSeq {
						t.Fatalf("key %s: seq %d, want %d", row, r.seq, wantSeq)
					}
				}
				if p.Spills() == 0 {
					t.Fatal("expected spills")
				}
				if err := agg.Err(); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

func fold(t *testing.T, g *Aggregator, vals ...string) string {
	t.Helper()
	h := cellrec.Header{Row: []byte("r"), Family: []byte("f"), Type: kv.TypePut}
	acc := []byte(vals[0])
	for _, v := range vals[1:] {
		acc = g.Combine(nil, &h, nil, acc, []byte(v))
	}
	return string(acc)
}

func TestDecimalExact(t *testing.T) {
	sum, _ := NewAggregator("sum", "decimal")
	for _, tc := range []struct {
		in   []string
		want string
	}{
		{[]string{"0.1", "0.2"}, "0.3"},
		{[]string{"0.1", "0.20"}, "0.30"},
		{[]string{"-1.5", "1.5"}, "0.0"},
		{[]string{"1e2", "0.5"}, "100.5"},
		{[]string{"-0.001", "0"}, "-0.001"},
		{[]string{"99999999999999999999999999.99", "0.01"}, "100000000000000000000000000.00"},
		{[]string{"+3", "-.5"}, "2.5"},
	} {
		if got := fold(t, sum, tc.in...); got != tc.want {
			t.Errorf("sum(%v) = %s, want %s", tc.in, got, tc.want)
		}
	}
	if err := sum.Err(); err != nil {
		t.Fatal(err)
	}
	mn, _ := NewAggregator("min", "decimal")
	if a, b := fold(t, mn, "1.0", "1.00"), fold(t, mn, "1.00", "1.0"); a != b {
		t.Errorf("min of numerically equal decimals depends on order: %s vs %s", a, b)
	}
	if got := fold(t, mn, "10", "9.99", "-0.5"); got != "-0.5" {
		t.Errorf("min = %s", got)
	}
	if got := fold(t, sum, "1", "abc"); got != "1" || sum.Err() == nil {
		t.Errorf("bad decimal: got %s, err %v", got, sum.Err())
	}
}

func TestDoubleOrderLikeJava(t *testing.T) {
	negZero := math.Copysign(0, -1)
	for _, tc := range []struct{ x, y float64 }{{negZero, 0}, {-1, negZero}, {math.Inf(1), math.NaN()}, {-math.MaxFloat64, 1}} {
		if compareDouble(tc.x, tc.y) != -1 || compareDouble(tc.y, tc.x) != 1 {
			t.Errorf("compareDouble(%v, %v) not < ", tc.x, tc.y)
		}
	}
	if compareDouble(math.NaN(), math.NaN()) != 0 {
		t.Error("NaN != NaN in Double.compare order")
	}
}

func TestLongSumOverflowSurfaces(t *testing.T) {
	agg, _ := NewAggregator("sum", "long")
	p := newTestPool(t, 1<<20, 1)
	s := p.NewSorter("overflow", agg.Options())
	for i, v := range []int64{math.MaxInt64, 1} {
		rec := kv.AppendKeyValue(nil, []byte("r"), []byte("f"), nil, 0, kv.TypePut, longBytes(v))
		if err := s.Add(rc(rec), uint64(i)); err != nil {
			t.Fatal(err)
		}
	}
	it, err := s.Finish(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for it.Next() {
	}
	if err := it.Err(); err == nil || !strings.Contains(err.Error(), "overflow") {
		t.Fatalf("Iterator.Err() = %v, want an overflow error", err)
	}
	it.Close()
	assertDirEmpty(t, p)
}

func TestAggregatorRejectsBadSpecs(t *testing.T) {
	for _, spec := range [][2]string{{"sum", "string"}, {"avg", "long"}, {"min", "int"}} {
		if _, err := NewAggregator(spec[0], spec[1]); err == nil {
			t.Errorf("NewAggregator(%q, %q) succeeded", spec[0], spec[1])
		}
	}
	agg, _ := NewAggregator("max", "long")
	if got := fold(t, agg, string(longBytes(1)), "short"); got != string(longBytes(1)) || agg.Err() == nil {
		t.Errorf("malformed long: got %x, err %v", got, agg.Err())
	}
}

func TestMillionRowGroupFoldsWithinBudget(t *testing.T) {
	const n = 1_000_000
	const mem = 4 << 20
	agg, _ := NewAggregator("count", "long")
	p := newTestPool(t, mem, 2)
	s := p.NewSorter("group", agg.Options())
	rec := kv.AppendKeyValue(nil, []byte("one-group"), []byte("s"), []byte("cnt"), 0, kv.TypePut, longBytes(1))
	for i := 0; i < n; i++ {
		if err := s.Add(rc(rec), uint64(i)); err != nil {
			t.Fatal(err)
		}
	}
	got := drain(t, s)
	if len(got) != 1 {
		t.Fatalf("got %d records, want 1", len(got))
	}
	if v := int64(binary.BigEndian.Uint64(kv.KVValue(got[0].kv))); v != n || got[0].seq != 0 {
		t.Fatalf("count = %d (seq %d), want %d", v, got[0].seq, n)
	}
	if p.Spills() == 0 {
		t.Fatal("a million cells in 4 MiB should spill")
	}
	if pk := p.PeakBytes(); pk > mem {
		t.Fatalf("peak accounted %d > budget %d", pk, mem)
	}
	assertDirEmpty(t, p)
	t.Logf("spills %d, passes %d, peak %d of %d", p.Spills(), p.MergePasses(), p.PeakBytes(), int64(mem))
}
