package engine

import (
	"sync"

	"github.com/hfload/hfload/hfilewriter"
)

// spareWriters keeps the HFile writers and stream verifiers of finished files, so that the next
// files' take their buffers (hfilewriter.NewWriterReusing, NewStreamVerifierReusing) instead of
// making and zeroing their own: with thousands of regions most files hold a few KiB of cells, and
// fresh buffers cost more than the cells. It holds at most one of each per file written at once.
type spareWriters struct {
	mu  sync.Mutex
	w   []*hfilewriter.Writer
	svs []*hfilewriter.StreamVerifier
}

// get takes a spare writer and verifier (each nil if there is none).
func (s *spareWriters) get() (*hfilewriter.Writer, *hfilewriter.StreamVerifier) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var w *hfilewriter.Writer
	var sv *hfilewriter.StreamVerifier
	if n := len(s.w); n > 0 {
		w, s.w = s.w[n-1], s.w[:n-1]
	}
	if n := len(s.svs); n > 0 {
		sv, s.svs = s.svs[n-1], s.svs[:n-1]
	}
	return w, sv
}

// put keeps a closed writer and a finished verifier (either may be nil) for the next file.
func (s *spareWriters) put(w *hfilewriter.Writer, sv *hfilewriter.StreamVerifier) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if w != nil {
		s.w = append(s.w, w)
	}
	if sv != nil {
		s.svs = append(s.svs, sv)
	}
}
