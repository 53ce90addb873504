package jobs

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"

	"github.com/hfload/hfload/pipeline"
)

// CheckJob is `hfload validate`: everything that can be checked without
// reading input data. It runs Validate, compiles the mapping, checks every
// families: entry names a family of the mapping and has valid HFile
// settings, and reads the split points (a splits file must exist and parse; with splits_from the REST
// server is asked, and an unreachable server is an I/O error, not a configuration error).
// Inputs are not expanded: a cron job's files may not exist yet. All
// problems are reported together (errors.Join), each wrapping ErrConfig (or ErrIO, above).
func CheckJob(job *Job) error {
	var errs []error
	if err := job.Validate(); err != nil {
		errs = append(errs, err)
	}
	if _, err := job.SourceOptions(); err != nil {
		errs = append(errs, err)
	}
	if job.Columns != "" || !job.Mapping.IsZero() {
		cfg, err := job.MappingConfig()
		if err == nil {
			dup, derr := ParseDuplicatePolicy(job.Duplicates)
			if derr == nil {
				_, err = job.Aggregation(cfg, dup) // may declare the _one column, as Prepare does
			}
		}
		if err != nil {
			errs = append(errs, err)
		} else if m, err := pipeline.Compile(cfg); err != nil {
			where := "mapping"
			if job.File != "" && job.Mapping.Line > 0 {
				where = fmt.Sprintf("%s:%d", filepath.Base(job.File), job.Mapping.Line) // the error names the mapping
			} else if job.File != "" {
				where = filepath.Base(job.File) + ": columns"
			}
			errs = append(errs, fmt.Errorf("%w: %s: %w", ErrConfig, where, err))
		} else {
			fams := map[string]bool{}
			for _, f := range m.Families() {
				fams[f] = true
				if _, err := job.WriterOptions(f); err != nil {
					errs = append(errs, err)
				}
			}
			var names []string
			for f := range job.Families {
				names = append(names, f)
			}
			sort.Strings(names)
			for _, f := range names {
				if !fams[f] {
					errs = append(errs, fmt.Errorf("%w: families: %q is not a family of the mapping (families: %v)", ErrConfig, f, m.Families()))
				}
			}
		}
	}
	if _, err := job.SplitPoints(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
