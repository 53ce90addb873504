package beamtask

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strconv"

	"github.com/hfload/hfload/internal/engine"
	"github.com/hfload/hfload/jobs"
	"github.com/hfload/hfload/partition"
)

// MaxFilesPerRegionFamily is how many HFiles HBase's bulk load takes for one family of one region:
// BulkLoadHFilesTool reads hbase.mapreduce.bulkload.max.hfiles.perRegion.perFamily
// (BulkLoadHFiles.MAX_FILES_PER_REGION_PER_FAMILY) with the default 32 and refuses a load with more
// (checkHFilesCountPerRegionPerFamily). A distributed run never splits a region into more
// sub-ranges than this, and refuses to commit a (region, family) with more files.
const MaxFilesPerRegionFamily = 32

// SubTask is one reduce task: the records of one target (region·families + family) whose rows are in
// [Lo, Hi) (nil: the region's own bound), read from Runs. A target of at most the run's reduce size
// is one SubTask (Sub 0 of Subs 1) covering the region, written exactly as `hfload run` writes it.
type SubTask struct {
	Target int      `json:"target"`
	Sub    int      `json:"sub"`
	Subs   int      `json:"subs"`
	Lo     []byte   `json:"lo,omitempty"`
	Hi     []byte   `json:"hi,omitempty"`
	Runs   []string `json:"runs"`
}

// targetPlan is what a plan task leaves for the launcher: how the target was cut.
type targetPlan struct {
	Target int   `json:"target"`
	Bytes  int64 `json:"bytes"` // of its run files
	// IndexBytes: of the runs' indexes, read to plan (the runs themselves are not read).
	IndexBytes int64    `json:"index_bytes,omitempty"`
	Bounds     [][]byte `json:"bounds,omitempty"`
}

// reduceSize is the most run-file bytes one reduce task takes before its target is cut into
// sub-ranges: Task.ReduceSize, else the job's max_file_size.
func (t *Task) reduceSize(spec *jobs.RunSpec) int64 {
	if t.ReduceSize != 0 {
		return t.ReduceSize
	}
	return spec.MaxFileSize
}

// Plan cuts one target's work into reduce tasks. A target whose run files hold more than the reduce
// size is cut into sub-ranges of roughly equal bytes (at most MaxFilesPerRegionFamily) at rows of the
// runs' indexes (their byte quantiles; the runs themselves are not read): each is merged and written by
// its own task, which reads each run only from the index entry before its first row to its last, into
// its own HFiles, and never straddles the region. Others are one task.
func Plan(ctx context.Context, t *Task, spec *jobs.RunSpec, splits partition.Splits, target int, runs []string) ([]SubTask, error) {
	st, err := t.open(ctx, spec)
	if err != nil {
		return nil, err
	}
	runs = append([]string(nil), runs...)
	sort.Strings(runs)
	plan := targetPlan{Target: target}
	var marks []indexMark
	for _, r := range runs {
		ix, err := readRunIndex(ctx, st, r)
		if err != nil {
			return nil, err
		}
		plan.Bytes += ix.end + 1 + int64(uvarintLen(uint64(ix.records)))
		plan.IndexBytes += ix.size
		for i, row := range ix.rows {
			end := ix.end
			if i+1 < len(ix.offs) {
				end = ix.offs[i+1]
			}
			marks = append(marks, indexMark{row: row, bytes: end - ix.offs[i]})
		}
	}
	if limit := t.reduceSize(spec); limit > 0 && plan.Bytes > limit {
		k := int(min((plan.Bytes+limit-1)/limit, MaxFilesPerRegionFamily))
		nf := len(spec.Mapping.Families())
		var lo []byte
		if region := target / nf; region > 0 {
			lo = splits[region-1]
		}
		plan.Bounds = quantileBounds(marks, k, lo)
	}
	b, err := json.Marshal(plan)
	if err != nil {
		return nil, fmt.Errorf("beam: %w", err)
	}
	if err := st.put(ctx, planName(target), b); err != nil {
		return nil, err
	}
	return plan.subTasks(runs), nil
}

// indexMark is one entry of a run's index: a row and the bytes from it to the next entry.
type indexMark struct {
	row   []byte
	bytes int64
}

// quantileBounds returns up to k-1 ascending rows, all after lo (nil: none), that cut the marks' bytes
// into k parts of about equal size: the row of the first mark (in row order) at which the bytes before
// it reach each j/k of the total.
func quantileBounds(marks []indexMark, k int, lo []byte) [][]byte {
	sort.SliceStable(marks, func(i, j int) bool { return bytes.Compare(marks[i].row, marks[j].row) < 0 })
	var total int64
	for _, m := range marks {
		total += m.bytes
	}
	var out [][]byte
	var before int64
	j := 1
	for _, m := range marks {
		if j >= k {
			break
		}
		if before*int64(k) >= total*int64(j) {
			last := lo
			if n := len(out); n > 0 {
				last = out[n-1]
			}
			if last == nil || bytes.Compare(m.row, last) > 0 {
				out = append(out, bytes.Clone(m.row))
			}
			for j < k && before*int64(k) >= total*int64(j) {
				j++
			}
		}
		before += m.bytes
	}
	return out
}

func (p *targetPlan) subTasks(runs []string) []SubTask {
	out := make([]SubTask, len(p.Bounds)+1)
	for i := range out {
		out[i] = SubTask{Target: p.Target, Sub: i, Subs: len(out), Runs: runs}
		if i > 0 {
			out[i].Lo = p.Bounds[i-1]
		}
		if i < len(p.Bounds) {
			out[i].Hi = p.Bounds[i]
		}
	}
	return out
}

// in reports whether row belongs to the sub-range.
func (s *SubTask) in(row []byte) bool {
	return (s.Lo == nil || bytes.Compare(row, s.Lo) >= 0) && (s.Hi == nil || bytes.Compare(row, s.Hi) < 0)
}

func planName(target int) string { return fmt.Sprintf("plan/t%06d.json", target) }
func reduceSummaryName(target, sub int) string {
	return fmt.Sprintf("reduce/t%06d-s%02d.json", target, sub)
}

// subRangeName names the files of sub-range sub > 0 of a region: the name `hfload run` would give
// the same part of the region, hashed with the sub-range (32 hex characters, as HFile names are).
// Sub-range 0 keeps the names of `hfload run`.
func subRangeName(name string, sub int) string {
	if sub == 0 {
		return name
	}
	h := md5.Sum([]byte(name + "\x00sub-range\x00" + strconv.Itoa(sub)))
	return hex.EncodeToString(h[:])
}

// subRangeSink names the files of a sub-range (subRangeName) in the sink it wraps.
type subRangeSink struct {
	engine.Sink
	sub int
}

func (s subRangeSink) Create(ctx context.Context, family, name string, o engine.FileOptions) (engine.File, error) {
	return s.Sink.Create(ctx, family, subRangeName(name, s.sub), o)
}

// Open reads a file back (--verify blocks|full) when the wrapped sink can.
func (s subRangeSink) Open(family, name string) (engine.ReadFile, error) {
	r, ok := s.Sink.(engine.Reopener)
	if !ok {
		return nil, fmt.Errorf("output %s/%s: the sink cannot read files back", family, name)
	}
	return r.Open(family, subRangeName(name, s.sub))
}

// renameResults gives the results of a sub-range's files their names (the engine reports the names it
// asked for).
func renameResults(files []jobs.FileResult, sub int) {
	for i := range files {
		dir, name := path.Split(files[i].Path)
		files[i].Path = dir + subRangeName(name, sub)
	}
}
