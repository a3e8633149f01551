package demo

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// progressWidth is the number of cells in the bar of a Progress.
const progressWidth = 20

// Progress is a text progress bar for a training loop, drawn as
//
//	train [#########...........]  45%  step 450/1000  loss 0.1234 (mean of 50 steps)
//
// The loss shown is the mean over the steps since the previous line, so
// a noisy per-batch loss reads as a trend.
// On a terminal (w is an *os.File on a character device) it redraws a
// single line with '\r'; on any other writer (a log file, a pipe, a
// bytes.Buffer) each update is printed on its own line. It redraws about
// 20 times in total: every total/20 steps and at the last step.
type Progress struct {
	w        io.Writer
	total    int
	label    string
	every    int
	terminal bool
	last     int  // last step drawn, -1 before the first
	open     bool // a terminal line was drawn and not yet ended
	width    int  // length of the longest terminal line drawn
	sum      float64
	count    int // losses summed since the last line drawn
}

// NewProgress returns a progress bar writing to w for a loop of total
// steps, labelled label.
func NewProgress(w io.Writer, total int, label string) *Progress {
	p := &Progress{w: w, total: max(total, 1), label: label, last: -1}
	p.every = max(p.total/progressWidth, 1)
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.terminal = true
		}
	}
	return p
}

// Update reports that step steps (of total) are done and the loss of the
// last step was loss. It draws only when step is a multiple of total/20
// or the last step, and never twice for the same step, showing the mean
// loss of the steps reported since the previous line.
func (p *Progress) Update(step int, loss float64) {
	if step == p.last {
		return
	}
	p.sum += loss
	p.count++
	if step%p.every != 0 && step < p.total {
		return
	}
	p.last = step
	line := p.line(step, p.sum/float64(p.count), p.count)
	p.sum, p.count = 0, 0
	if p.terminal {
		// Pad with spaces so a shorter line fully covers a longer one.
		pad := max(p.width-len(line), 0)
		p.width = max(p.width, len(line))
		fmt.Fprintf(p.w, "\r%s%s", line, strings.Repeat(" ", pad))
		p.open = true
	} else {
		fmt.Fprintln(p.w, line)
	}
}

// line formats the bar for step with the mean loss of n steps.
func (p *Progress) line(step int, loss float64, n int) string {
	s := min(max(step, 0), p.total)
	filled := s * progressWidth / p.total
	pct := s * 100 / p.total
	bar := strings.Repeat("#", filled) + strings.Repeat(".", progressWidth-filled)
	mean := "1 step"
	if n != 1 {
		mean = fmt.Sprintf("%d steps", n)
	}
	return fmt.Sprintf("%s [%s] %3d%%  step %d/%d  loss %.4f (mean of %s)", p.label, bar, pct, step, p.total, loss, mean)
}

// Done ends the progress line on a terminal; on other writers, where
// every update already ends its own line, it writes nothing.
func (p *Progress) Done() {
	if p.open {
		fmt.Fprintln(p.w)
		p.open = false
	}
}
