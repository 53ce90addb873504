package analyze

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/hfload/hfload/internal/kv"
	"github.com/hfload/hfload/partition"
	"github.com/hfload/hfload/pipeline"
)

// Report is the result of an analysis. Its JSON form is a stable contract: fields may be added, never
// renamed or removed. Keys are in Bytes.toStringBinary form. Arrays are never null.
type Report struct {
	// Input says what was read: filled by the caller that ran the pipeline (jobs.Analyze); zero when
	// the Analyzer was fed directly.
	Input      Input      `json:"input"`
	Rows       int64      `json:"rows"`  // input rows that produced cells
	Cells      int64      `json:"cells"` // cells
	Bytes      int64      `json:"bytes"` // KeyValue bytes (4+4+key+value per cell), before compression
	Families   []string   `json:"families"`
	Duplicates Duplicates `json:"duplicates"`
	Regions    []Region   `json:"regions"` // one per region of the split points in force
	RegionSkew RegionSkew `json:"region_skew"`
	KeyRange   KeyRange   `json:"key_range"`
	Order      Order      `json:"order"`
	Sizes      Sizes      `json:"sizes"`
	Columns    []Column   `json:"columns"` // per (family, qualifier), largest value bytes first
	// SuggestedSplits are equal-bytes split points from the data for SuggestedRegions regions (possibly
	// fewer when the data has few distinct keys), and CreateCommand the HBase shell command using them.
	SuggestedRegions int       `json:"suggested_regions"`
	SuggestedSplits  []string  `json:"suggested_splits"`
	CreateCommand    string    `json:"create_command"`
	Warnings         []Warning `json:"warnings"`
}

// Input describes the data the report covers: the pipeline's counts, and whether it was a sample.
type Input struct {
	Files        int   `json:"files"`         // input files of the job
	RowsRead     int64 `json:"rows_read"`     // data rows read (good and bad; headers excluded)
	RowsRejected int64 `json:"rows_rejected"` // rows that produced no cells: unparsable, bad values, no row key
	NullsSkipped int64 `json:"nulls_skipped"` // NULL values that produced no cell
	// SampleLimit is the --sample row limit (0 = none). Sampled is true when the limit stopped the
	// reading before the end of the input: every figure then describes the first RowsRead rows only.
	SampleLimit int64 `json:"sample_limit"`
	Sampled     bool  `json:"sampled"`
	// RejectExamples are the first rejected rows as the pipeline's JSON Lines records (at most 3).
	RejectExamples []string `json:"reject_examples"`
}

// Duplicates are the uniqueness findings, counted exactly: the first pass compares 8-byte
// fingerprints of the row keys, a second read of the input confirms the suspected ones on the keys
// themselves (only when there are any). Nothing is estimated: unique keys give zero and no example.
type Duplicates struct {
	// Rows is the number of input rows whose row key an earlier, different input row already produced
	// (their cells end up in one HBase row).
	Rows int64 `json:"rows"`
	// Cells is the number of cells whose full coordinates (row, family, qualifier, timestamp, type)
	// repeat an earlier cell; HBase keeps only one of them.
	Cells int64 `json:"cells"`
	// Confirmed is true when Rows, Cells and the examples were checked on the keys: always, unless the
	// input could not be read a second time (standard input). Then Rows counts equal fingerprints
	// (a collision of two distinct keys, about n²/2^65 likely, would be counted), Cells is 0 and
	// there are no examples.
	Confirmed bool `json:"confirmed"`
	// SuspectedRows counts the input rows whose row-key fingerprint repeats another row's (first pass).
	SuspectedRows int64 `json:"suspected_rows"`
	// Partial is true when the second pass held Options.ConfirmBytes of keys and tracked no further
	// ones: Rows and Cells are then lower bounds.
	Partial bool `json:"partial"`
	// Deprecated: the Bloom-filter estimates of earlier versions, kept for the JSON contract. The
	// estimated_* fields now hold the exact counts (Rows, Cells), their *_error fields and the filter
	// rates are 0, and sampled_* equal the exact counts.
	EstimatedRows       int64   `json:"estimated_rows"`
	EstimatedCells      int64   `json:"estimated_cells"`
	EstimatedRowsError  int64   `json:"estimated_rows_error"`
	EstimatedCellsError int64   `json:"estimated_cells_error"`
	FalsePositiveRate   float64 `json:"false_positive_rate"`
	RowFilterFPRate     float64 `json:"row_filter_fp_rate"`
	CellFilterFPRate    float64 `json:"cell_filter_fp_rate"`
	SampledRows         int64   `json:"sampled_rows"`
	SampledCells        int64   `json:"sampled_cells"`
	// Examples are the first duplicates (by input position), at most Options.MaxExamples per kind.
	Examples []DuplicateExample `json:"examples"`
}

// DuplicateExample is one duplicated row key or cell with the input rows that produced it (the smallest
// positions, up to 3; a cell repeated within one input row lists that row twice). Every example is
// confirmed on the keys.
type DuplicateExample struct {
	Kind        string       `json:"kind"` // "row" or "cell"
	Row         string       `json:"row"`
	Cell        string       `json:"cell,omitempty"` // row/family:qualifier/timestamp/type, for cells
	Occurrences []Occurrence `json:"occurrences"`
	Confirmed   bool         `json:"confirmed"` // always true (kept for the JSON contract)
}

// Occurrence is an input position: file index in the run and 0-based row ordinal within the file.
type Occurrence struct {
	File int   `json:"file"`
	Row  int64 `json:"row"`
}

// Region is one region's share of the data.
type Region struct {
	StartKey string `json:"start_key"` // "" = table start
	EndKey   string `json:"end_key"`   // "" = table end
	Cells    int64  `json:"cells"`
	Bytes    int64  `json:"bytes"`
}

// KeyRange is the span of the data's row keys: the smallest and the largest key, their common prefix
// (which every key shares, since keys sort as bytes) and the shortest and longest key length. Zero
// without data.
type KeyRange struct {
	First        string `json:"first"`
	Last         string `json:"last"`
	CommonPrefix string `json:"common_prefix"`
	MinLength    int    `json:"min_length"`
	MaxLength    int    `json:"max_length"`
}

// RegionSkew summarizes the distribution over regions.
type RegionSkew struct {
	Empty int `json:"empty"` // regions without cells
	// LargestSmallestRatio is the largest region's bytes over the smallest non-empty region's bytes
	// (0 without data).
	LargestSmallestRatio float64 `json:"largest_smallest_ratio"`
	LargestRegion        int     `json:"largest_region"`
	LargestShare         float64 `json:"largest_share"` // share of all bytes in the largest region
}

// Order is the input-order analysis: consecutive input rows (by Seq, within each file) whose row key is
// >= the previous row's key. Random keys give about 0.5; keys led by a time or a sequence give ~1.
type Order struct {
	Pairs             int64   `json:"pairs"`
	AscendingPairs    int64   `json:"ascending_pairs"`
	AscendingFraction float64 `json:"ascending_fraction"`
}

// Sizes is the storage overhead of coordinates. HBase stores the row key, family and qualifier in
// every cell; averages are per cell.
type Sizes struct {
	AvgRowKey    float64 `json:"avg_row_key"`
	AvgFamily    float64 `json:"avg_family"`
	AvgQualifier float64 `json:"avg_qualifier"`
	AvgValue     float64 `json:"avg_value"`
	// CoordinateBytesPerValueByte is the flat key bytes (row + family + qualifier + 12 bytes of lengths,
	// timestamp and type) per value byte.
	CoordinateBytesPerValueByte float64 `json:"coordinate_bytes_per_value_byte"`
	KeyBytes                    int64   `json:"key_bytes"`
	ValueBytes                  int64   `json:"value_bytes"`
	// FamilySavings and QualifierSavings are the bytes saved over the whole data set by 1-byte family
	// names and 2-byte qualifiers (exact sums over the cells); SavingsShare is their sum over Bytes.
	FamilySavings    int64   `json:"family_savings"`
	QualifierSavings int64   `json:"qualifier_savings"`
	SavingsShare     float64 `json:"savings_share"`
	// NumericValues counts values that are canonical decimal integers fitting a long; NumericSavings is
	// what storing the longer ones (> 8 bytes) as 8-byte longs would save.
	NumericValues  int64 `json:"numeric_values"`
	NumericSavings int64 `json:"numeric_savings"`
}

// Column is one (family, qualifier)'s statistics.
type Column struct {
	Family         string `json:"family"`
	Qualifier      string `json:"qualifier"` // "(other)" aggregates columns beyond Options.MaxColumns
	Cells          int64  `json:"cells"`
	ValueBytes     int64  `json:"value_bytes"`
	NumericValues  int64  `json:"numeric_values"`
	NumericSavings int64  `json:"numeric_savings"`
}

// Warning is one finding. Codes: monotonic_lead, empty_regions, skewed_regions, duplicate_keys,
// duplicate_cells, duplicate_keys_unconfirmed, duplicate_count_partial, long_names, numbers_as_text;
// and, added by SetInput, rejected_rows and sample.
type Warning struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Report computes the report. It ends the first pass (see Suspects): call it after the last Add, and
// after the second pass (Confirm) if there were suspects. It may be called more than once.
func (a *Analyzer) Report() *Report {
	a.mu.Lock()
	defer a.mu.Unlock()
	o := a.opts
	r := &Report{
		Rows: a.rows, Cells: a.cells, Bytes: a.bytes,
		Input:           Input{RejectExamples: []string{}},
		Families:        slices.Clone(o.Families),
		Regions:         []Region{},
		Columns:         []Column{},
		SuggestedSplits: []string{},
		Warnings:        []Warning{},
	}
	r.Duplicates = a.duplicates()
	a.distribution(r)
	if k := a.keys; k.seen {
		n := 0
		for n < len(k.first) && n < len(k.last) && k.first[n] == k.last[n] {
			n++
		}
		r.KeyRange = KeyRange{First: kv.ToStringBinary(k.first), Last: kv.ToStringBinary(k.last),
			CommonPrefix: kv.ToStringBinary(k.first[:n]), MinLength: k.minLen, MaxLength: k.maxLen}
	}
	r.Order = a.orderReport()
	a.sizeReport(r)

	n := o.SuggestRegions
	if n == 0 {
		if len(o.Splits) > 0 {
			n = o.Splits.Len()
		} else {
			n = int(max(1, (a.bytes+o.TargetRegionBytes-1)/o.TargetRegionBytes))
		}
	}
	r.SuggestedRegions = n
	sugg := a.sampler.Splits(n)
	r.SuggestedSplits = append(r.SuggestedSplits, sugg.Strings()...)
	r.CreateCommand = partition.CreateTableCommand(o.Table, o.Families, sugg)

	a.warnings(r)
	return r
}

func (a *Analyzer) duplicates() Duplicates {
	f := a.dups
	f.freeze()
	f.mu.Lock()
	defer f.mu.Unlock()
	out := Duplicates{Examples: []DuplicateExample{}, SuspectedRows: f.fpRows, Partial: f.partial}
	switch {
	case len(f.suspects) == 0 || f.passTwo:
		out.Confirmed = true
		var rowEx, cellEx []example
		out.Rows, out.Cells, rowEx, cellEx = f.counts(a.opts.MaxExamples)
		for _, e := range rowEx {
			out.Examples = append(out.Examples, DuplicateExample{Kind: "row", Row: kv.ToStringBinary([]byte(e.key)),
				Occurrences: occurrencesOf(e.seqs), Confirmed: true})
		}
		for _, e := range cellEx {
			k := kv.Key(e.key)
			out.Examples = append(out.Examples, DuplicateExample{Kind: "cell", Row: kv.ToStringBinary(k.Row()),
				Cell: k.String(), Occurrences: occurrencesOf(e.seqs), Confirmed: true})
		}
	default: // no second pass
		out.Rows = f.fpRows
	}
	out.EstimatedRows, out.EstimatedCells = out.Rows, out.Cells
	out.SampledRows, out.SampledCells = out.Rows, out.Cells
	return out
}

func occurrencesOf(seqs []uint64) []Occurrence {
	out := make([]Occurrence, len(seqs))
	for i, s := range seqs {
		out[i] = Occurrence{File: pipeline.SeqFile(s), Row: pipeline.SeqRow(s)}
	}
	return out
}

func (a *Analyzer) distribution(r *Report) {
	var smallest int64 = math.MaxInt64
	for i, st := range a.regions {
		start, end := a.opts.Splits.Bounds(i)
		r.Regions = append(r.Regions, Region{StartKey: kv.ToStringBinary(start),
			EndKey: kv.ToStringBinary(end), Cells: st.cells, Bytes: st.bytes})
		if st.cells == 0 {
			r.RegionSkew.Empty++
			continue
		}
		smallest = min(smallest, st.bytes)
		if st.bytes > a.regions[r.RegionSkew.LargestRegion].bytes {
			r.RegionSkew.LargestRegion = i
		}
	}
	if a.bytes > 0 && smallest > 0 && smallest != math.MaxInt64 {
		largest := a.regions[r.RegionSkew.LargestRegion].bytes
		r.RegionSkew.LargestSmallestRatio = round3(float64(largest) / float64(smallest))
		r.RegionSkew.LargestShare = round3(float64(largest) / float64(a.bytes))
	}
}

// orderReport adds the pairs across batch boundaries (consecutive batches of one file, by Seq) to the
// pairs counted inside batches.
func (a *Analyzer) orderReport() Order {
	ord := a.order
	bs := slices.Clone(a.batches)
	slices.SortFunc(bs, func(x, y batchOrder) int { return cmpSeq(x.firstSeq, y.firstSeq) })
	for i := 1; i < len(bs); i++ {
		if pipeline.SeqFile(bs[i].firstSeq) != pipeline.SeqFile(bs[i-1].lastSeq) {
			continue
		}
		ord.pairs++
		if bytes.Compare(bs[i].firstRow, bs[i-1].lastRow) >= 0 {
			ord.ascending++
		}
	}
	out := Order{Pairs: ord.pairs, AscendingPairs: ord.ascending}
	if ord.pairs > 0 {
		out.AscendingFraction = round3(float64(ord.ascending) / float64(ord.pairs))
	}
	return out
}

func (a *Analyzer) sizeReport(r *Report) {
	s := a.sizes
	z := &r.Sizes
	z.KeyBytes, z.ValueBytes = s.key, s.value
	z.FamilySavings, z.QualifierSavings = s.familySave, s.qualifierSave
	z.NumericValues, z.NumericSavings = s.numericValues, s.numericSave
	if a.cells > 0 {
		c := float64(a.cells)
		z.AvgRowKey = round3(float64(s.rowKey) / c)
		z.AvgFamily = round3(float64(s.family) / c)
		z.AvgQualifier = round3(float64(s.qualifier) / c)
		z.AvgValue = round3(float64(s.value) / c)
	}
	if s.value > 0 {
		z.CoordinateBytesPerValueByte = round3(float64(s.key) / float64(s.value))
	}
	if a.bytes > 0 {
		z.SavingsShare = round3(float64(s.familySave+s.qualifierSave) / float64(a.bytes))
	}
	for k, c := range a.columns {
		r.Columns = append(r.Columns, Column{Family: a.opts.Families[k.family], Qualifier: kv.ToStringBinary([]byte(k.qualifier)),
			Cells: c.cells, ValueBytes: c.valueBytes, NumericValues: c.numericValues, NumericSavings: c.numericSave})
	}
	slices.SortFunc(r.Columns, func(x, y Column) int {
		if x.ValueBytes != y.ValueBytes {
			return cmpInt(y.ValueBytes, x.ValueBytes)
		}
		if c := strings.Compare(x.Family, y.Family); c != 0 {
			return c
		}
		return strings.Compare(x.Qualifier, y.Qualifier)
	})
	if a.other.cells > 0 {
		r.Columns = append(r.Columns, Column{Family: "", Qualifier: "(other)", Cells: a.other.cells,
			ValueBytes: a.other.valueBytes, NumericValues: a.other.numericValues, NumericSavings: a.other.numericSave})
	}
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func round3(f float64) float64 { return math.Round(f*1000) / 1000 }

func (a *Analyzer) warnings(r *Report) {
	o := a.opts
	add := func(code, format string, args ...any) {
		r.Warnings = append(r.Warnings, Warning{Code: code, Message: fmt.Sprintf(format, args...)})
	}
	// Input order.
	if r.Order.Pairs >= o.MinOrderPairs && r.Order.AscendingFraction >= o.MonotonicFraction {
		add("monotonic_lead", "%.1f%% of consecutive input rows have ascending row keys: the key leads with "+
			"an increasing value (a time or a sequence), so every new write goes to the last region, a hotspot. "+
			"Fixes: salt the key with a leading byte hash(key) %% N and pre-split with one region per salt "+
			"(hfload --split-by-salt N), or lead with a hash prefix of the key, or reverse a sequential id, or move "+
			"the time later in the key (after an entity id). (If the export is merely sorted by a key that new "+
			"data does not extend, the bulk load itself is unaffected.)", 100*r.Order.AscendingFraction)
	}
	// Regions.
	if len(r.Regions) > 1 && a.cells > 0 {
		if r.RegionSkew.Empty > 0 {
			var names []string
			for _, rg := range r.Regions {
				if rg.Cells == 0 && len(names) < 5 {
					names = append(names, fmt.Sprintf("[%s, %s)", quoteKey(rg.StartKey), quoteKey(rg.EndKey)))
				}
			}
			add("empty_regions", "%d of %d regions receive no cells (e.g. %s): %s", r.RegionSkew.Empty,
				len(r.Regions), strings.Join(names, ", "), a.emptyRegionsAdvice(r))
		}
		mean := float64(a.bytes) / float64(len(r.Regions))
		lr := r.Regions[r.RegionSkew.LargestRegion]
		if float64(lr.Bytes) > o.SkewFactor*mean {
			add("skewed_regions", "region %d [%s, %s) holds %.1f%% of the bytes, %.1f× the average region "+
				"(largest/smallest non-empty ratio %.1f): it takes most of the writes. Use split points from the "+
				"data: --split-sample %d, or the suggested_splits", r.RegionSkew.LargestRegion, quoteKey(lr.StartKey),
				quoteKey(lr.EndKey), 100*r.RegionSkew.LargestShare, float64(lr.Bytes)/mean,
				r.RegionSkew.LargestSmallestRatio, len(r.Regions))
		}
	}
	// Duplicates: only counts confirmed on the keys, never estimates.
	d := r.Duplicates
	first := map[string]*DuplicateExample{}
	for i := range d.Examples {
		if e := &d.Examples[i]; first[e.Kind] == nil {
			first[e.Kind] = e
		}
	}
	atLeast := ""
	if d.Partial {
		atLeast = "at least "
	}
	switch {
	case !d.Confirmed && d.Rows > 0:
		add("duplicate_keys_unconfirmed", "%d input rows have the same row-key fingerprint as another input row, "+
			"so they very likely repeat its row key; the input could not be read a second time (standard input) "+
			"to confirm it on the keys and to count duplicate cells. Read it from a file to check exactly", d.Rows)
	case d.Rows > 0:
		add("duplicate_keys", "%s%d input rows produce a row key that another input row already produced; "+
			"their cells merge into one HBase row%s. Check that the row key columns are unique",
			atLeast, d.Rows, exampleText(first["row"]))
	}
	if d.Cells > 0 {
		add("duplicate_cells", "%s%d cells repeat the row, family, qualifier, timestamp and type of another "+
			"cell; HBase keeps only one of them%s", atLeast, d.Cells, exampleText(first["cell"]))
	}
	if d.Partial {
		add("duplicate_count_partial", "the duplicate check held its memory limit of keys (ConfirmBytes) and "+
			"stopped tracking further row keys: the duplicate counts are lower bounds")
	}
	// Sizes.
	z := r.Sizes
	if a.bytes > 0 && z.SavingsShare > o.LongNamesShare {
		add("long_names", "family names average %.1f bytes and qualifiers %.1f bytes, stored in every cell: "+
			"1-byte family names would save %d bytes and 2-byte qualifiers %d bytes, %.1f%% of all %d bytes",
			z.AvgFamily, z.AvgQualifier, z.FamilySavings, z.QualifierSavings, 100*z.SavingsShare, a.bytes)
	}
	if z.ValueBytes > 0 && float64(z.NumericSavings) > o.NumbersShare*float64(z.ValueBytes) {
		var top []string
		for _, c := range r.Columns {
			if c.NumericSavings > 0 && len(top) < 5 {
				top = append(top, fmt.Sprintf("%s:%s (%d values)", c.Family, c.Qualifier, c.NumericValues))
			}
		}
		add("numbers_as_text", "%d values are decimal integers stored as text; storing those longer than 8 "+
			"bytes as 8-byte longs would save %d bytes (%.1f%% of value bytes). Columns: %s",
			z.NumericValues, z.NumericSavings, 100*float64(z.NumericSavings)/float64(z.ValueBytes), strings.Join(top, ", "))
	}
}

// emptyRegionsAdvice explains empty regions with the data's real key range and names the fix: split
// points from the data (--split-sample N). It never advises the option that made the split points.
func (a *Analyzer) emptyRegionsAdvice(r *Report) string {
	k := r.KeyRange
	span := fmt.Sprintf("the row keys run from %s to %s", quoteKey(k.First), quoteKey(k.Last))
	width := fmt.Sprintf("%d bytes", k.MinLength)
	if k.MaxLength != k.MinLength {
		width = fmt.Sprintf("%d to %d bytes", k.MinLength, k.MaxLength)
	}
	if k.CommonPrefix != "" {
		width += ", all starting with " + quoteKey(k.CommonPrefix)
	}
	span += " (" + width + ")"
	fix := fmt.Sprintf("Use split points from the data: --split-sample %d, or the suggested_splits (equal bytes "+
		"of these keys)", len(r.Regions))
	from := a.opts.SplitsFrom
	textKeyspace := strings.Contains(from, "--keyspace hex") || strings.Contains(from, "--keyspace decimal")
	switch {
	case strings.HasPrefix(from, "--split-uniform"):
		span = fmt.Sprintf("%s, but %s divides the whole key space of that alphabet evenly, not the range the "+
			"keys have, so its split points fall where no key exists", span, from)
	case from != "":
		span = fmt.Sprintf("the split points (%s) lie where no row key exists: %s", from, span)
	default:
		span = "the split points lie where no row key exists: " + span
	}
	if !textKeyspace {
		fix += "; for random hex or decimal text keys of one width, --split-uniform N --keyspace hex|decimal also fits"
	}
	return span + ". " + fix
}

func exampleText(e *DuplicateExample) string {
	if e == nil || len(e.Occurrences) < 2 {
		return ""
	}
	what := "key " + quoteKey(e.Row)
	if e.Kind == "cell" {
		what = "cell " + e.Cell
	}
	return fmt.Sprintf(" (e.g. %s from file %d row %d and file %d row %d)", what, e.Occurrences[0].File,
		e.Occurrences[0].Row, e.Occurrences[1].File, e.Occurrences[1].Row)
}

// quoteKey quotes a key already in toStringBinary form (printable, so no further escaping).
func quoteKey(k string) string { return `"` + k + `"` }
