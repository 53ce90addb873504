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
// few seconds otherwise (cron, CI), nothing when disabled. The read phase counts input bytes, rows (and
// rows/s) and rejected rows; the write phase counts KeyValue bytes (uncompressed cells, what the HFiles
// hold before compression) and cells.
type progress struct {
	w          io.Writer
	off        bool
	tty        bool
	mu         sync.Mutex
	phase      string
	bar        *progressbar.ProgressBar
	lastLine   time.Time
	lastDesc   time.Time
	phaseStart time.Time
	now        func() time.Time
	every      time.Duration // between log lines without a terminal
}

func newProgress(w io.Writer, off bool) *progress {
	p := &progress{w: w, off: off, now: time.Now, every: 5 * time.Second}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.tty = true
	}
	return p
}

// phaseLabel names what a phase's bytes are.
var phaseLabel = map[string]string{"read": "read+map+sort", "write": "write KeyValues"}

func (p *progress) update(ev jobs.Progress) {
	if p.off {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if ev.Phase != p.phase {
		if p.bar != nil {
			p.bar.Finish()
			fmt.Fprintln(p.w)
		}
		p.phase, p.phaseStart, p.bar, p.lastDesc = ev.Phase, now, nil, time.Time{}
		if p.tty {
			total := ev.BytesTotal
			if total <= 0 {
				total = -1
			}
			p.bar = progressbar.NewOptions64(total, progressbar.OptionSetWriter(p.w),
				progressbar.OptionSetDescription(p.describe(ev, now)), progressbar.OptionShowBytes(true),
				progressbar.OptionSetWidth(30), progressbar.OptionThrottle(200*time.Millisecond),
				progressbar.OptionShowCount(), progressbar.OptionSetPredictTime(true))
		}
	}
	if p.bar != nil {
		if now.Sub(p.lastDesc) >= 200*time.Millisecond {
			p.lastDesc = now
			p.bar.Describe(p.describe(ev, now))
		}
		p.bar.Set64(ev.BytesDone)
		return
	}
	if !p.lastLine.IsZero() && now.Sub(p.lastLine) < p.every {
		return
	}
	p.lastLine = now
	fmt.Fprintln(p.w, p.logLine(ev, now))
}

// describe is a bar's label: what its bytes are and the phase's counters.
func (p *progress) describe(ev jobs.Progress, now time.Time) string {
	if ev.Phase == "read" {
		return fmt.Sprintf("%s %s (%s rows/s), %d rejected", phaseLabel["read"], jobs.Count(ev.RowsRead, "row"),
			shortCount(rate(ev.RowsRead, now.Sub(p.phaseStart))), ev.RowsRejected)
	}
	return fmt.Sprintf("%s, %s", phaseLabel[ev.Phase], jobs.Count(ev.CellsDone, "cell"))
}

// logLine is the line printed instead of a bar when there is no terminal.
func (p *progress) logLine(ev jobs.Progress, now time.Time) string {
	el := now.Sub(p.phaseStart)
	pct, of := "", ""
	if ev.BytesTotal > 0 {
		pct = fmt.Sprintf(" %.1f%%", 100*float64(ev.BytesDone)/float64(ev.BytesTotal))
		of = " of " + jobs.HumanSize(ev.BytesTotal)
	}
	mbs := float64(ev.BytesDone) / 1e6 / max(el.Seconds(), 0.001)
	if ev.Phase == "read" {
		return fmt.Sprintf("hfload: read%s: %s%s, %s (%s rows/s), %d rejected, %.1f MB/s", pct, jobs.HumanSize(ev.BytesDone), of,
			jobs.Count(ev.RowsRead, "row"), shortCount(rate(ev.RowsRead, el)), ev.RowsRejected, mbs)
	}
	return fmt.Sprintf("hfload: %s%s: %s%s of KeyValues, %s, %.1f MB/s", ev.Phase, pct, jobs.HumanSize(ev.BytesDone), of,
		jobs.Count(ev.CellsDone, "cell"), mbs)
}

func rate(n int64, d time.Duration) float64 { return float64(n) / max(d.Seconds(), 0.001) }

// shortCount renders a rate for a narrow display: 950, 12.3k, 4.56M.
func shortCount(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.2fM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.1fk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
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
