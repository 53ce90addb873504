package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/hfload/hfload/jobs"
)

// progress renders jobs.Progress events: a progress bar per phase on a terminal, a plain log line every
// few seconds otherwise (cron, CI), nothing when disabled.
type progress struct {
	w        io.Writer
	off      bool
	tty      bool
	mu       sync.Mutex
	phase    string
	bar      *progressbar.ProgressBar
	lastLine time.Time
	start    time.Time
}

func newProgress(w io.Writer, off bool) *progress {
	p := &progress{w: w, off: off, start: time.Now()}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.tty = true
	}
	return p
}

func (p *progress) update(ev jobs.Progress) {
	if p.off {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if ev.Phase != p.phase {
		if p.bar != nil {
			p.bar.Finish()
			fmt.Fprintln(p.w)
		}
		p.phase = ev.Phase
		p.bar = nil
		if p.tty {
			total := ev.BytesTotal
			if total <= 0 {
				total = -1
			}
			desc := map[string]string{"read": "read+map+sort", "write": "merge+write  "}[ev.Phase]
			p.bar = progressbar.NewOptions64(total, progressbar.OptionSetWriter(p.w),
				progressbar.OptionSetDescription(desc), progressbar.OptionShowBytes(true),
				progressbar.OptionSetWidth(30), progressbar.OptionThrottle(200*time.Millisecond),
				progressbar.OptionShowCount(), progressbar.OptionSetPredictTime(true))
		}
	}
	if p.bar != nil {
		p.bar.Set64(ev.BytesDone)
		return
	}
	if time.Since(p.lastLine) < 5*time.Second {
		return
	}
	p.lastLine = time.Now()
	el := time.Since(p.start).Seconds()
	pct := ""
	if ev.BytesTotal > 0 {
		pct = fmt.Sprintf(" %.1f%%", 100*float64(ev.BytesDone)/float64(ev.BytesTotal))
	}
	fmt.Fprintf(p.w, "hfload: %s%s: %s, %d rows, %d cells, %.1f MB/s\n", ev.Phase, pct, jobs.HumanSize(ev.BytesDone),
		ev.RowsRead, ev.CellsDone, float64(ev.BytesDone)/1e6/max(el, 0.001))
}

// log prints a message line (warnings, notes) without breaking a progress bar.
func (p *progress) log(msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		p.bar.Clear()
	}
	fmt.Fprintln(p.w, "hfload:", msg)
}

func (p *progress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		p.bar.Finish()
		fmt.Fprintln(p.w)
		p.bar = nil
	}
}
