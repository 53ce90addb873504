// Package jobs runs hfload loads as repeatable jobs: it reads job files
// (YAML holding every `hfload run` setting), stages output next to its final
// place and commits it atomically with a _manifest.json written last, keeps
// per-job incremental state (which inputs were loaded, watermarks), and stops
// two runs of one job from overlapping with a kernel-released lock.
//
// The flow of one job run is:
//
//	job, err := jobs.LoadJob("nightly.yaml", os.LookupEnv, sets) // parse, ${VAR}, --set
//	err = job.Apply(flagOverrides)                                // explicit flags win
//	err = job.Validate()                                          // no data read yet
//	st, err := job.OpenState()                                    // jobs with state_dir only
//	lock, notes, err := st.Lock("run " + job.Name)                // ErrLocked if another run holds it
//	defer lock.Release()
//	plan, err := st.Plan(ctx, paths, job.Reload)                  // skip already-loaded inputs
//	if plan.NoOp() { print plan.Summary(); exit 0 }
//	stg, err := job.Stage(runID)                                  // <out>/<job>/.hfload-staging-<run>/
//	m, err := jobs.NewManifest(job, version, runID, started)
//	defer stg.Abort()
//	... write <stg.FamilyDir(f)>/<file> ...
//	err = st.Begin(rec)                                           // pending record
//	err = stg.Commit(m)                                           // verify, fsync, rename, manifest last
//	err = st.Record(rec)                                          // only after Commit
//
// One-off runs (no state_dir) skip the state; job.Stage then stages inside
// out and commits straight into it. See docs/jobs.md for the layouts, the lock
// semantics and the exit codes.
package jobs
