package pipeline

import "github.com/hfload/hfload/internal/hugepage"

// hugeRanges advises the buffers of batches and CSV sources before they are first written
// (internal/hugepage): at most 1,024 ranges. They are made once a worker, a source or a batch kept for
// reuse.
var hugeRanges = hugepage.Ranges{Max: 1024}

// hugeMake is make([]T, 0, n) with transparent huge pages asked for its memory (hugepage.Make): for the
// buffers of batches, made once and then reused, which are fresh memory when made.
func hugeMake[T any](n int) []T { return hugepage.Make[T](&hugeRanges, n) }
