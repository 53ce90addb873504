package beamtask

import (
	"context"
	"fmt"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/hfload/hfload/jobs"
	"github.com/hfload/hfload/partition"
	"github.com/hfload/hfload/pipeline"
)

// Task is what every task of one run needs: enough to prepare the run's RunSpec on any worker, and
// where the shared files go. It is passed to workers (as JSON) inside the pipeline's DoFns.
type Task struct {
	JobYAML string // the job, resolved (job file, --set, flags), as YAML
	Started int64  // the run's start time, Unix nanoseconds (the cell timestamp when the job sets none)
	Verify  string // the run's verify mode
	Workers int    // mapping goroutines per task (0: the worker's GOMAXPROCS)
	// Splits are the region boundaries known before the run (nil with split_sample: computed).
	Splits [][]byte
	Dir    string // the staging directory: HFiles go to Dir/<family>/ (unless Out is set)
	Out    string // an output in a bucket, s3://bucket/prefix: HFiles are uploads to <prefix>/<family>/
	// Work is where tasks share run files, summaries and the rejects of units: a directory every worker
	// sees at the same path, or a bucket prefix (s3://…) that a bulk load skips (jobs.BucketWorkDir).
	Work   string
	TmpDir string // the worker's local scratch: reducers' spills, files before upload ("": the system's)
	Units  []Unit // the work units, in input order
	// Recuts counts the runs again after chunks that started inside a record (Recut).
	Recuts int `json:",omitempty"`
	// Layouts are the header and field count of every CSV file cut into chunks (SplitCSV).
	Layouts []CSVLayout `json:",omitempty"`
	// SettingsSeed is the launcher's jobs.RunSpec.SettingsSeed (a worker, which does not resolve the
	// split options again, would compute another): with the inputs' checksums, it names the HFiles.
	SettingsSeed []byte
	// ReduceSize is the most run-file bytes of one target (region and family) one reduce task takes;
	// a larger target is cut into sub-ranges (Plan). 0: the job's max_file_size; < 0: never cut.
	ReduceSize int64
	// Shuffle is how maps hand records to reducers: ShuffleFiles ("" too) or ShuffleBeam.
	Shuffle string `json:"shuffle,omitempty"`
	// NoMapCombine: the maps of an aggregating job do not fold equal keys before the shuffle (they do
	// by default where the job's aggregates allow it: mapCombine); the reducers fold them all.
	NoMapCombine bool `json:"no_map_combine,omitempty"`
	// Incremental runs (state_dir): the launcher plans which inputs to load and takes the state's lock.
	// Inputs are the paths of the inputs it loads, in order (nil: every input of the job); Watermark
	// filters their rows by the previous run's mark (nil: none); Seed is the HFile name seed the
	// launcher computed from the planned inputs' checksums and that mark (nil: from the maps' sums).
	Inputs    []string                `json:"inputs,omitempty"`
	Watermark *jobs.WatermarkSettings `json:"watermark,omitempty"`
	Seed      []byte                  `json:"seed,omitempty"`
}

// NewTask describes a run of job started at started, writing into dir, with shared files under work.
func NewTask(job *jobs.Job, started time.Time, spec *jobs.RunSpec, dir, work string) (*Task, error) {
	b, err := yaml.Marshal(job)
	if err != nil {
		return nil, fmt.Errorf("beam: encode job: %w", err)
	}
	t := &Task{JobYAML: string(b), Started: started.UnixNano(), Verify: string(spec.Verify),
		Workers: spec.Pipeline.Workers, Dir: dir, Work: work, SettingsSeed: spec.SettingsSeed}
	if spec.SplitSample <= 0 {
		for _, s := range spec.Splits {
			t.Splits = append(t.Splits, s)
		}
	}
	if job.StateDir != "" {
		for _, in := range spec.Inputs {
			t.Inputs = append(t.Inputs, in.Path)
		}
		t.Watermark = spec.Watermark()
		if spec.NameSeed != nil {
			if t.Seed, err = spec.NameSeed(); err != nil {
				return nil, err
			}
		}
	}
	units, err := PlanUnits(spec)
	if err != nil {
		return nil, err
	}
	t.Units = units
	return t, nil
}

// planned keeps the inputs an incremental run loads (Task.Inputs), in the launcher's order: each
// path's first occurrence, as the launcher's plan keeps it (with its index, so row ordinals match).
func (t *Task) planned(ins []pipeline.Input) []pipeline.Input {
	if t.Inputs == nil {
		return ins
	}
	want := map[string]int{}
	for _, p := range t.Inputs {
		want[p]++
	}
	var out []pipeline.Input
	for _, in := range ins {
		if want[in.Path] > 0 {
			want[in.Path]--
			out = append(out, in)
		}
	}
	return out
}

// Spec prepares the run's RunSpec on a worker: the same job, the same start time, the launcher's
// split points (a live cluster is not asked again).
func (t *Task) Spec(ctx context.Context) (*jobs.RunSpec, error) {
	var job jobs.Job
	if err := yaml.Unmarshal([]byte(t.JobYAML), &job); err != nil {
		return nil, fmt.Errorf("beam: decode job: %w", err)
	}
	job.SplitsFrom, job.Splits, job.SplitUniform, job.SplitBySalt = "", "", 0, 0
	spec, err := job.PrepareContext(ctx, time.Unix(0, t.Started))
	if err != nil {
		return nil, err
	}
	spec.Verify = jobs.VerifyMode(t.Verify)
	spec.SettingsSeed = t.SettingsSeed
	spec.Pipeline.Workers = t.Workers
	if spec.SplitSample <= 0 {
		spec.Splits = t.splits()
	}
	spec.Inputs = t.planned(spec.Inputs)
	if len(spec.Inputs) != t.inputs() {
		return nil, fmt.Errorf("beam: the worker sees %d input files, the launcher planned %d: inputs must be on storage every worker reads the same",
			len(spec.Inputs), t.inputs())
	}
	return spec, nil
}

func (t *Task) splits() partition.Splits {
	if len(t.Splits) == 0 {
		return nil
	}
	out := make(partition.Splits, len(t.Splits))
	copy(out, t.Splits)
	return out
}

func (t *Task) inputs() int {
	if len(t.Units) == 0 {
		return 0
	}
	return t.Units[len(t.Units)-1].Input + 1
}

// Names of the shared files, relative to the work area (slash-separated).
func unitSummaryName(u int) string     { return fmt.Sprintf("units/u%06d.json", u) }
func unitRejectsName(u int) string     { return fmt.Sprintf("units/u%06d.rejects", u) }
func runFileName(u, target int) string { return fmt.Sprintf("runs/u%06d-t%06d.run", u, target) }

const splitsFile = "splits"

// runUnit is the unit that wrote the run file rel (runFileName), -1 if rel is not one.
func runUnit(rel string) int {
	var u, target int
	if n, err := fmt.Sscanf(rel, "runs/u%d-t%d.run", &u, &target); err != nil || n != 2 {
		return -1
	}
	return u
}
