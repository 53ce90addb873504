package gen

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// genKind is the type of a generated column.
type genKind int

const (
	kindInt64    genKind = iota // v.i
	kindInt32                   // v.i
	kindDecimal2                // v.i in hundredths
	kindString                  // v.s
	kindDateTime                // v.i in Unix seconds, CSV "2006-01-02 15:04:05"
	kindFloat64                 // v.f
)

func (k genKind) String() string {
	return [...]string{"int64", "int32", "decimal(12,2)", "string", "datetime", "double"}[k]
}

type genColumn struct {
	name     string
	kind     genKind
	nullable bool
	note     string
}

// genValue is one generated field. s may point into the table's scratch space: it is valid until
// the next call to row.
type genValue struct {
	null bool
	i    int64
	f    float64
	s    []byte
}

// genTable produces the rows of one dataset.
type genTable interface {
	description() string
	columns() []genColumn
	// row fills vals (len(columns())) with row number n (0-based).
	row(n int64, vals []genValue)
}

var genDatasetNames = []string{"orders", "logs", "metrics"}

func genNewTable(name string, rng *rand.Rand) genTable {
	switch name {
	case "orders":
		return &genOrders{rng: rng}
	case "logs":
		return &genLogs{rng: rng}
	case "metrics":
		return &genMetrics{rng: rng}
	}
	return nil
}

// genBase is 2024-01-01 00:00:00 UTC.
const genBase = 1704067200

type genOrders struct {
	rng     *rand.Rand
	ts      int64
	scratch []byte
}

var (
	genStatuses = [][]byte{[]byte("NEW"), []byte("PAID"), []byte("SHIPPED"), []byte("DELIVERED"), []byte("CANCELLED"), []byte("RETURNED")}
	genComments = []string{
		"leave at the door", "gift wrap please", "call before delivery", "fragile",
		"deliver after 6pm, not before", `customer says "urgent"`, "second attempt\nneighbour has key",
		"repeat order", "address: 12, Rue de la Paix", "ok", "use side entrance; ring twice",
	}
)

func (g *genOrders) description() string { return "e-commerce order lines" }

func (g *genOrders) columns() []genColumn {
	return []genColumn{
		{"order_id", kindInt64, false, "unique, increasing from 1000001"},
		{"customer_id", kindInt64, false, "1..200000, skewed"},
		{"product_id", kindInt32, false, "1..5000"},
		{"order_ts", kindDateTime, false, "2006-01-02 15:04:05 UTC, increasing"},
		{"quantity", kindInt32, true, "1..20, ~1% NULL"},
		{"unit_price", kindDecimal2, false, "0.99..999.99"},
		{"status", kindString, true, "NEW|PAID|SHIPPED|DELIVERED|CANCELLED|RETURNED, ~2% NULL"},
		{"comment", kindString, true, "~60% NULL; text with commas, quotes, line breaks; sometimes empty"},
	}
}

func (g *genOrders) row(n int64, v []genValue) {
	r := g.rng
	if n == 0 {
		g.ts = genBase
	}
	g.ts += int64(r.IntN(6))
	for i := range v {
		v[i] = genValue{}
	}
	v[0].i = 1000001 + n
	// Skew: a quarter of the orders come from the first 1000 customers.
	if r.IntN(4) == 0 {
		v[1].i = 1 + int64(r.IntN(1000))
	} else {
		v[1].i = 1 + int64(r.IntN(200000))
	}
	v[2].i = 1 + int64(r.IntN(5000))
	v[3].i = g.ts
	if r.IntN(100) == 0 {
		v[4].null = true
	} else {
		v[4].i = 1 + int64(r.IntN(20))
	}
	v[5].i = 99 + int64(r.IntN(99901))
	if r.IntN(50) == 0 {
		v[6].null = true
	} else {
		v[6].s = genStatuses[r.IntN(len(genStatuses))]
	}
	switch c := r.IntN(100); {
	case c < 60:
		v[7].null = true
	case c < 62:
		v[7].s = g.scratch[:0] // empty string, not NULL
	default:
		g.scratch = append(g.scratch[:0], genComments[r.IntN(len(genComments))]...)
		if r.IntN(3) == 0 {
			g.scratch = fmt.Appendf(g.scratch, " (ref %d)", r.IntN(100000))
		}
		v[7].s = g.scratch
	}
}

type genLogs struct {
	rng     *rand.Rand
	ts      int64
	scratch []byte
}

var (
	genEvents   = [][]byte{[]byte("login"), []byte("logout"), []byte("request"), []byte("purchase"), []byte("error"), []byte("timeout"), []byte("cache_miss")}
	genLevels   = [][]byte{[]byte("DEBUG"), []byte("INFO"), []byte("WARN"), []byte("ERROR")}
	genPaths    = []string{"/", "/cart", "/checkout", "/api/v1/items", "/login", "/search?q=a,b"}
	genHostList = func() [][]byte {
		var hs [][]byte
		for dc := 1; dc <= 2; dc++ {
			for i := 1; i <= 20; i++ {
				hs = append(hs, fmt.Appendf(nil, "web-%02d.dc%d.example.com", i, dc))
			}
		}
		return hs
	}()
)

func (g *genLogs) description() string { return "application log events" }

func (g *genLogs) columns() []genColumn {
	return []genColumn{
		{"hostname", kindString, false, "40 hosts"},
		{"event", kindString, false, "login|logout|request|purchase|error|timeout|cache_miss"},
		{"ts", kindInt64, false, "epoch milliseconds, increasing"},
		{"level", kindString, false, "DEBUG|INFO|WARN|ERROR"},
		{"message", kindString, true, "free text, ~1% NULL"},
	}
}

func (g *genLogs) row(n int64, v []genValue) {
	r := g.rng
	if n == 0 {
		g.ts = genBase * 1000
	}
	g.ts += int64(r.IntN(50))
	for i := range v {
		v[i] = genValue{}
	}
	v[0].s = genHostList[r.IntN(len(genHostList))]
	ev := r.IntN(len(genEvents))
	v[1].s = genEvents[ev]
	v[2].i = g.ts
	lvl := 1
	switch c := r.IntN(100); {
	case c < 10:
		lvl = 0
	case c < 85:
		lvl = 1
	case c < 95:
		lvl = 2
	default:
		lvl = 3
	}
	v[3].s = genLevels[lvl]
	if r.IntN(100) == 0 {
		v[4].null = true
		return
	}
	switch ev {
	case 2, 3:
		g.scratch = fmt.Appendf(g.scratch[:0], "GET %s took %d ms", genPaths[r.IntN(len(genPaths))], r.IntN(2000))
	case 4:
		g.scratch = fmt.Appendf(g.scratch[:0], `upstream said "%d %s"`, 500+r.IntN(4), "Internal Server Error")
	default:
		g.scratch = fmt.Appendf(g.scratch[:0], "user %d session %x", r.IntN(1000000), r.Uint32())
	}
	v[4].s = g.scratch
}

type genMetrics struct {
	rng *rand.Rand
}

var (
	genMetricNames = [][]byte{[]byte("cpu.user"), []byte("cpu.system"), []byte("mem.used"), []byte("disk.read.bytes"), []byte("net.in.bytes"), []byte("load.1m")}
	genMetricHosts = func() [][]byte {
		var hs [][]byte
		for i := 1; i <= 50; i++ {
			hs = append(hs, fmt.Appendf(nil, "host-%04d", i))
		}
		return hs
	}()
)

func (g *genMetrics) description() string {
	return "time series: one sample per host and metric every 10 s"
}

func (g *genMetrics) columns() []genColumn {
	return []genColumn{
		{"metric", kindString, false, "cpu.user|cpu.system|mem.used|disk.read.bytes|net.in.bytes|load.1m"},
		{"host", kindString, false, "host-0001..host-0050"},
		{"ts", kindInt64, false, "epoch milliseconds, multiple of 10000"},
		{"value", kindFloat64, true, "~0.1% NULL"},
	}
}

func (g *genMetrics) row(n int64, v []genValue) {
	r := g.rng
	per := int64(len(genMetricNames) * len(genMetricHosts))
	step, k := n/per, n%per
	host, metric := k/int64(len(genMetricNames)), k%int64(len(genMetricNames))
	for i := range v {
		v[i] = genValue{}
	}
	v[0].s = genMetricNames[metric]
	v[1].s = genMetricHosts[host]
	v[2].i = (genBase + step*10) * 1000
	if r.IntN(1000) == 0 {
		v[3].null = true
		return
	}
	phase := float64(step)/360*2*math.Pi + float64(host)
	var x float64
	switch metric {
	case 0, 1: // percent
		x = 30 + 25*math.Sin(phase) + r.NormFloat64()*5
		x = math.Max(0, math.Min(100, x))
	case 2: // bytes
		x = float64(4<<30) + float64(1<<30)*math.Sin(phase/7) + float64(r.IntN(1<<20))
	case 3, 4: // byte counters per interval
		x = float64(r.IntN(50 << 20))
	default:
		x = math.Max(0, 2+1.5*math.Sin(phase)+r.NormFloat64()*0.3)
	}
	v[3].f = math.Round(x*1000) / 1000
}
