package partition

import "github.com/hfload/hfload/internal/hugepage"

// hugeRanges advises the sampler's buffers before they are first written (internal/hugepage): at most
// 256 ranges; a sampler advises a few buffers, each made about once.
var hugeRanges = hugepage.Ranges{Max: 256}
