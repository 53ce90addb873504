// Package gen writes deterministic, realistic relational exports for tests, benchmarks and demos
// (`hfload gen`). Output is a pure function of Options: the same seed gives the same bytes. Rows are
// streamed to an io.Writer, so multi-gigabyte files need no memory beyond one Parquet row group.
//
// Datasets (see Datasets for the machine-readable list):
//
// orders — an e-commerce order export, one row per order line:
//
//	order_id     int64     unique, increasing from 1000001 (a natural row key)
//	customer_id  int64     1..200000, skewed: a few customers order a lot
//	product_id   int32     1..5000
//	order_ts     datetime  "2006-01-02 15:04:05" (UTC), increasing with order_id, ~3 s apart
//	quantity     int32     1..20; NULL in ~1% of rows
//	unit_price   decimal   two decimals, "12.34", 0.99..999.99
//	status       string    NEW|PAID|SHIPPED|DELIVERED|CANCELLED|RETURNED; NULL in ~2%
//	comment      string    NULL in ~60%; otherwise free text, sometimes with commas, double
//	                       quotes or line breaks, and sometimes the empty string (written as "")
//
// logs — application log events:
//
//	hostname     string    web-01.dc1.example.com .. (40 hosts in 2 data centres)
//	event        string    login|logout|request|purchase|error|timeout|cache_miss
//	ts           int64     epoch milliseconds, increasing
//	level        string    DEBUG|INFO|WARN|ERROR (mostly INFO)
//	message      string    free text with occasional quotes and commas; NULL in ~1%
//
// metrics — a time series (OpenTSDB-like): every 10 s, one sample per host and metric:
//
//	metric       string    cpu.user|cpu.system|mem.used|disk.read.bytes|net.in.bytes|load.1m
//	host         string    host-0001 .. host-0050 (the tag)
//	ts           int64     epoch milliseconds, multiples of 10000, non-decreasing
//	value        double    metric-dependent range; NULL in ~0.1% (a missed sample)
//
// CSV output follows RFC 4180 with the chosen separator: a field is quoted when it holds the
// separator, a quote or a line break, when it is an empty string (so that it differs from NULL), or
// when it equals the NULL marker. NULL is an empty unquoted field, or Options.Null when set.
// Parquet output (via Arrow's pqarrow writer) has one nullable column per dataset column: int64,
// int32, decimal128(12,2), utf8, timestamp[ms, UTC] for datetimes, float64; rows are cut into row
// groups of Options.RowGroupRows.
package gen
