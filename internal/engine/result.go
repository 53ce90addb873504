package engine

import (
	"time"

	"github.com/hfload/hfload/internal/kv"
	"github.com/hfload/hfload/partition"
	"github.com/hfload/hfload/pipeline"
)

// Progress is a snapshot of a running load.
type Progress struct {
	Phase        string // "read" or "write"
	BytesDone    int64  // read: input bytes consumed; write: cell bytes written
	BytesTotal   int64  // read: total input bytes (0 if unknown); write: total cell bytes
	RowsRead     int64
	RowsRejected int64 // read: rows rejected so far
	CellsDone    int64
	CellsTotal   int64
	FilesWritten int
}

// Result is what Load wrote, and what it counted on the way.
type Result struct {
	Counts      pipeline.Counts
	Cells       int64 // cells written to HFiles
	RowsWritten int64 // distinct rows per file, summed
	Duplicates  int64 // cells with a key equal to another cell's key (all policies count them)
	DupExamples []string
	Splits      partition.Splits // the region boundaries in force (computed ones with SplitSample)
	Files       []FileResult
	SpillBytes  int64 // bytes written to run files (spills and merge passes) in the temporary directory
	Spills      int64
	MergePasses int64 // intermediate merge passes (runs merged into runs before the final merges)
	PeakMemory  int64 // the sorter's accounted peak
	Elapsed     time.Duration
	ReadTime    time.Duration // reading, mapping and in-memory sorting/spilling (phase 1)
	WriteTime   time.Duration // merging and writing HFiles, and verifying them (phase 2)
	VerifyWait  time.Duration // part of WriteTime spent waiting for verifications after the last write

	sharedBloomChunks int64 // bloom chunks copied from a region's shared bloom (tests)
}

// FileResult describes one written HFile.
type FileResult struct {
	Family      string `json:"family"`
	Path        string `json:"path"` // relative to the output directory: <family>/<name>
	Region      int    `json:"region"`
	RegionStart string `json:"region_start"` // toStringBinary; "" = table start
	RegionEnd   string `json:"region_end"`   // toStringBinary; "" = table end
	FirstRow    string `json:"first_row"`
	LastRow     string `json:"last_row"`
	FirstKey    string `json:"first_key"`
	LastKey     string `json:"last_key"`
	Rows        int64  `json:"rows"`
	Cells       int64  `json:"cells"`
	Bytes       int64  `json:"bytes"`
}

// setKeys sets the region bounds and the file's first and last keys and rows (flat keys), formatted as ToStringBinary and Key.String do, in one string allocation
// (every file of a load has these six strings; with thousands of regions they were a good part of its
// garbage). A valid key's formatted text starts with its row's: FirstRow and LastRow are taken from it.
// ts keeps the text of the last timestamp formatted (nil: none kept). With rowsOnly, FirstKey and
// LastKey are left empty (Spec.RowBoundsOnly) and only the keys' rows are formatted.
func (fr *FileResult) setKeys(regionStart, regionEnd, firstKey, lastKey []byte, ts *tsText, rowsOnly bool) {
	if ts == nil {
		ts = new(tsText)
	}
	var arr [512]byte // the formatted strings: on the stack unless they are long
	b := kv.AppendStringBinary(arr[:0], regionStart)
	var ends [4]int
	ends[0] = len(b)
	b = kv.AppendStringBinary(b, regionEnd)
	ends[1] = len(b)
	var rows [2][2]int // where FirstRow and LastRow lie in b
	keyStart := len(b)
	appendKey := func(b, k []byte) ([]byte, int, bool) { // called directly: b stays on the stack
		if rowsOnly {
			return appendKeyRow(b, k)
		}
		return appendKeyString(b, k, ts)
	}
	b, rowLen, ok := appendKey(b, firstKey)
	rows[0] = [2]int{keyStart, keyStart + rowLen}
	ends[2] = len(b)
	firstOK := ok
	keyStart = len(b)
	b, rowLen, ok = appendKey(b, lastKey)
	rows[1] = [2]int{keyStart, keyStart + rowLen}
	ends[3] = len(b)
	// The row of a key that is not valid is formatted on its own, after the keys (nil: "").
	for i, k := range [2][]byte{firstKey, lastKey} {
		if valid := (i == 0 && firstOK) || (i == 1 && ok); !valid {
			rows[i] = [2]int{len(b), len(b)}
			if k != nil {
				b = kv.AppendStringBinary(b, kv.Key(k).Row())
				rows[i][1] = len(b)
			}
		}
	}
	all := string(b)
	fr.RegionStart, fr.RegionEnd = all[:ends[0]], all[ends[0]:ends[1]]
	if !rowsOnly {
		fr.FirstKey, fr.LastKey = all[ends[1]:ends[2]], all[ends[2]:ends[3]]
	}
	fr.FirstRow, fr.LastRow = all[rows[0][0]:rows[0][1]], all[rows[1][0]:rows[1][1]]
}

// appendKeyString appends kv.Key(k).String() to dst, the timestamp's text from ts. For a valid key it
// reports ok and how long its row's ToStringBinary is, which the appended text starts with.
func appendKeyString(dst, k []byte, ts *tsText) (out []byte, rowLen int, ok bool) {
	if !kv.Key(k).Valid() {
		return append(dst, kv.Key(k).String()...), 0, false
	}
	key := kv.Key(k)
	start := len(dst)
	dst = kv.AppendStringBinary(dst, key.Row())
	rowLen = len(dst) - start
	return kv.AppendFormatKeyAfterRowText(dst, key.Family(), key.Qualifier(), ts.text(key.Timestamp()), key.Type()), rowLen, true
}

// appendKeyRow is appendKeyString for Spec.RowBoundsOnly: it appends only a valid key's row, whose
// length it reports, and nothing for one that is not valid (its row is formatted on its own).
func appendKeyRow(dst, k []byte) (out []byte, rowLen int, ok bool) {
	if !kv.Key(k).Valid() {
		return dst, 0, false
	}
	start := len(dst)
	dst = kv.AppendStringBinary(dst, kv.Key(k).Row())
	return dst, len(dst) - start, true
}

// tsText is the text of the last timestamp formatted (kv.AppendTimestamp's): the cells of a load
// mostly share one timestamp, and formatting it (13 digits) was ~250 instructions of each file's first
// and last key.
type tsText struct {
	ts  int64
	n   int // 0: none yet
	buf [24]byte
}

// text returns ts's text, formatted unless it is the last one's.
func (c *tsText) text(ts int64) []byte {
	if c.n == 0 || c.ts != ts {
		c.ts, c.n = ts, len(kv.AppendTimestamp(c.buf[:0], ts))
	}
	return c.buf[:c.n]
}
