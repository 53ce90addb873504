package beamrun

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/hfload/hfload/internal/beamtask"
	"github.com/hfload/hfload/jobs"
)

func init() {
	register.DoFn2x2[context.Context, int, []byte, error](&sampleFn{})
	register.Combiner1[[]byte](&mergeFn{})
	register.DoFn2x2[context.Context, []byte, []byte, error](&splitsFn{})
	register.DoFn5x1[context.Context, int, []byte, func(int, string), func(string), error](&mapFn{})
	register.Emitter2[int, string]()
	register.Emitter1[string]()
	register.DoFn5x1[context.Context, int, func(*string) bool, []byte, func([]byte), error](&planFn{})
	register.Iter1[string]()
	register.Emitter1[[]byte]()
	register.DoFn4x1[context.Context, []byte, []byte, func(*string) bool, error](&reduceFn{})
	register.DoFn5x1[context.Context, int, []byte, func(int, []byte), func(string), error](&mapRecordsFn{})
	register.Emitter2[int, []byte]()
	register.DoFn5x1[context.Context, int, func(*[]byte) bool, []byte, func(*string) bool, error](&reduceRecordsFn{})
	register.Iter1[[]byte]()
}

// Build adds the load's pipeline to a new Beam pipeline.
func Build(t *beamtask.Task, spec *jobs.RunSpec) *beam.Pipeline {
	p, s := beam.NewPipelineWithRoot()
	idx := make([]int, len(t.Units))
	for i := range idx {
		idx[i] = i
	}
	units := beam.Reshuffle(s, beam.CreateList(s, idx))
	var splits beam.PCollection
	if spec.SplitSample > 0 {
		samples := beam.ParDo(s.Scope("sample"), &sampleFn{Task: *t}, units)
		merged := beam.Combine(s.Scope("merge samples"), &mergeFn{}, samples)
		splits = beam.ParDo(s.Scope("splits"), &splitsFn{Task: *t}, merged)
	} else {
		splits = beam.Create(s, beamtask.EncodeSplits(t.Splits))
	}
	if t.Shuffle == beamtask.ShuffleBeam {
		// The records themselves through the runner's shuffle: blocks of framed records keyed by
		// (region, family), grouped, streamed into one reduce task per key.
		recs, sums := beam.ParDo2(s.Scope("map records"), &mapRecordsFn{Task: *t}, units, beam.SideInput{Input: splits})
		grouped := beam.GroupByKey(s, recs)
		beam.ParDo0(s.Scope("reduce records"), &reduceRecordsFn{Task: *t}, grouped, beam.SideInput{Input: splits}, beam.SideInput{Input: sums})
		return p
	}
	refs, sums := beam.ParDo2(s.Scope("map"), &mapFn{Task: *t}, units, beam.SideInput{Input: splits})
	grouped := beam.GroupByKey(s, refs)
	// One reduce task per (region, family), or per sub-range of an oversized one, spread over workers.
	tasks := beam.Reshuffle(s, beam.ParDo(s.Scope("plan"), &planFn{Task: *t}, grouped, beam.SideInput{Input: splits}))
	// The inputs' checksums (beamtask.InputSum) name the HFiles: as a side input, every map is done first.
	beam.ParDo0(s.Scope("reduce"), &reduceFn{Task: *t}, tasks, beam.SideInput{Input: splits}, beam.SideInput{Input: sums})
	return p
}

// Runner returns a beamtask.RunFunc that builds the pipeline and runs it with the named Beam runner
// (registered by the binary: prism, universal, flink, spark, dataflow), waiting for it to finish.
func Runner(runner string) beamtask.RunFunc {
	return func(ctx context.Context, t *beamtask.Task, spec *jobs.RunSpec) (err error) {
		defer func() {
			if p := recover(); p != nil { // the SDK panics on some misconfigurations
				err = fmt.Errorf("beam pipeline (%s runner): %v", runner, p)
			}
		}()
		if _, err := beam.Run(ctx, runner, Build(t, spec)); err != nil {
			return fmt.Errorf("beam pipeline (%s runner): %w", runner, err)
		}
		return nil
	}
}

// prepare is every DoFn's Setup: the RunSpec prepared once per DoFn instance from its task.
func prepare(ctx context.Context, t *beamtask.Task, spec **jobs.RunSpec) error {
	s, err := t.Spec(ctx)
	if err != nil {
		return err
	}
	*spec = s
	return nil
}

type sampleFn struct {
	Task beamtask.Task
	spec *jobs.RunSpec
}

func (f *sampleFn) Setup(ctx context.Context) error { return prepare(ctx, &f.Task, &f.spec) }

func (f *sampleFn) ProcessElement(ctx context.Context, unit int) ([]byte, error) {
	return beamtask.Sample(ctx, &f.Task, f.spec, unit)
}

// mergeFn merges bottom-k samples (beamtask.MergeSamples): a combine, so runners merge partial
// samples on the workers before the one global merge.
type mergeFn struct{}

func (mergeFn) MergeAccumulators(a, b []byte) ([]byte, error) { return beamtask.MergeSamples(a, b) }

type splitsFn struct {
	Task beamtask.Task
	spec *jobs.RunSpec
}

func (f *splitsFn) Setup(ctx context.Context) error { return prepare(ctx, &f.Task, &f.spec) }

func (f *splitsFn) ProcessElement(ctx context.Context, merged []byte) ([]byte, error) {
	return beamtask.SplitsFromSample(ctx, &f.Task, f.spec, merged)
}

type mapFn struct {
	Task beamtask.Task
	spec *jobs.RunSpec
}

func (f *mapFn) Setup(ctx context.Context) error { return prepare(ctx, &f.Task, &f.spec) }

func (f *mapFn) ProcessElement(ctx context.Context, unit int, splits []byte, emit func(int, string), emitSum func(string)) error {
	sp, err := beamtask.DecodeSplits(splits)
	if err != nil {
		return err
	}
	refs, sum, err := beamtask.Map(ctx, &f.Task, f.spec, unit, sp)
	if err != nil {
		return err
	}
	for _, r := range refs {
		emit(r.Target, r.Path)
	}
	if sum != nil {
		emitSum(sum.Encode())
	}
	return nil
}

// planFn cuts one target's work into reduce tasks (beamtask.Plan), emitted as JSON.
type planFn struct {
	Task beamtask.Task
	spec *jobs.RunSpec
}

func (f *planFn) Setup(ctx context.Context) error { return prepare(ctx, &f.Task, &f.spec) }

func (f *planFn) ProcessElement(ctx context.Context, target int, runs func(*string) bool, splits []byte, emit func([]byte)) error {
	sp, err := beamtask.DecodeSplits(splits)
	if err != nil {
		return err
	}
	// A retried map attempt emits its references again: each run file counts once.
	seen := map[string]bool{}
	var paths []string
	var p string
	for runs(&p) {
		if !seen[p] {
			seen[p] = true
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	tasks, err := beamtask.Plan(ctx, &f.Task, f.spec, sp, target, paths)
	if err != nil {
		return err
	}
	for _, task := range tasks {
		b, err := json.Marshal(task)
		if err != nil {
			return fmt.Errorf("beam: %w", err)
		}
		emit(b)
	}
	return nil
}

type reduceFn struct {
	Task beamtask.Task
	spec *jobs.RunSpec
}

func (f *reduceFn) Setup(ctx context.Context) error { return prepare(ctx, &f.Task, &f.spec) }

func (f *reduceFn) ProcessElement(ctx context.Context, task []byte, splits []byte, sums func(*string) bool) error {
	sp, err := beamtask.DecodeSplits(splits)
	if err != nil {
		return err
	}
	all, err := inputSums(sums)
	if err != nil {
		return err
	}
	var st beamtask.SubTask
	if err := json.Unmarshal(task, &st); err != nil {
		return fmt.Errorf("beam: reduce task: %w", err)
	}
	return beamtask.Reduce(ctx, &f.Task, f.spec, sp, st, all)
}

// inputSums decodes the map tasks' InputSums (a side input: input checksums, CSV chunks' spans).
func inputSums(sums func(*string) bool) ([]beamtask.InputSum, error) {
	var all []beamtask.InputSum
	var enc string
	for sums(&enc) {
		s, err := beamtask.DecodeInputSum(enc)
		if err != nil {
			return nil, err
		}
		all = append(all, s)
	}
	return all, nil
}

// mapRecordsFn is mapFn for the record shuffle (beamtask.MapRecords): it emits blocks of framed
// records keyed by target instead of run-file names.
type mapRecordsFn struct {
	Task beamtask.Task
	spec *jobs.RunSpec
}

func (f *mapRecordsFn) Setup(ctx context.Context) error { return prepare(ctx, &f.Task, &f.spec) }

func (f *mapRecordsFn) ProcessElement(ctx context.Context, unit int, splits []byte, emit func(int, []byte), emitSum func(string)) error {
	sp, err := beamtask.DecodeSplits(splits)
	if err != nil {
		return err
	}
	sum, err := beamtask.MapRecords(ctx, &f.Task, f.spec, unit, sp, emit)
	if err != nil {
		return err
	}
	if sum != nil {
		emitSum(sum.Encode())
	}
	return nil
}

// reduceRecordsFn writes one target's HFiles from its grouped record blocks (beamtask.ReduceRecords).
type reduceRecordsFn struct {
	Task beamtask.Task
	spec *jobs.RunSpec
}

func (f *reduceRecordsFn) Setup(ctx context.Context) error { return prepare(ctx, &f.Task, &f.spec) }

func (f *reduceRecordsFn) ProcessElement(ctx context.Context, target int, blocks func(*[]byte) bool, splits []byte, sums func(*string) bool) error {
	sp, err := beamtask.DecodeSplits(splits)
	if err != nil {
		return err
	}
	all, err := inputSums(sums)
	if err != nil {
		return err
	}
	return beamtask.ReduceRecords(ctx, &f.Task, f.spec, sp, target, blocks, all)
}
