// Package progress reports a long run's progress on stderr: rows read out of
// the total, MB/s of document text, the elapsed time and the phase the run
// is in.
//
// The pipeline's DoFns add to process-global counters (one atomic add per
// row group read, one atomic load per element to see that its phase has
// started) and a Reporter in the launcher reads them. That works only when
// the SDK workers run in the launcher's process (LOOPBACK, as on the
// embedded Prism runner); on a remote runner the counters stay at zero in
// the launcher, which then reports nothing. The counters are for display
// only: nothing the pipeline computes depends on them, and Beam's own
// metrics are kept as they are.
package progress

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Process-global counters, written by the workers and read by the Reporter.
var (
	rowsRead  atomic.Int64
	textBytes atomic.Int64

	phasesMu sync.Mutex // guards phases (registration and the Reporter's copy), never taken by workers
	phases   []*Phase
)

// AddRead records rows read and bytes of their document text. Call it once
// per row group (or bundle), never per row.
func AddRead(rows, bytes int64) {
	rowsRead.Add(rows)
	textBytes.Add(bytes)
}

// Phase is one phase of the job as the progress line names it.
type Phase struct {
	name string
	mark atomic.Pointer[mark]
}

// mark is when a phase started and how many rows had been read then.
type mark struct {
	at   time.Time
	rows int64
}

// NewPhase registers a phase named name ("phase 2 shingle merge"); call it
// once per phase, typically from a package-level variable.
func NewPhase(name string) *Phase {
	p := &Phase{name: name}
	phasesMu.Lock()
	phases = append(phases, p)
	phasesMu.Unlock()
	return p
}

// Name is the phase's name.
func (p *Phase) Name() string { return p.name }

// Start marks the phase started at t, unless it has started already: after
// the first call it costs one atomic load. Calling it on a nil Phase does
// nothing.
func (p *Phase) Start(t time.Time) {
	if p == nil || p.mark.Load() != nil {
		return
	}
	p.mark.CompareAndSwap(nil, &mark{at: t, rows: rowsRead.Load()})
}

// Reset zeroes the counters and forgets which phases have started: a
// Reporter does it when it starts, so that one process can run several jobs.
func Reset() {
	rowsRead.Store(0)
	textBytes.Store(0)
	phasesMu.Lock()
	defer phasesMu.Unlock()
	for _, p := range phases {
		p.mark.Store(nil)
	}
}

// Mode is what a Reporter prints.
type Mode int

const (
	// Off prints nothing.
	Off Mode = iota
	// Phases prints one line per phase as it starts, for logs and CI:
	//	neardup: phase 2 shingle merge started at 12.3s, 350000/350000 rows read
	Phases
	// Lines prints the phase lines and, every LinesEvery, a status line
	// ending in a newline.
	Lines
	// Live rewrites one status line in place ("\r") every LiveEvery, for a
	// terminal, and ends it with a newline when the run stops.
	Live
)

// How often the status line is printed.
const (
	LiveEvery  = time.Second
	LinesEvery = 5 * time.Second
	poll       = 200 * time.Millisecond // how often phase starts are looked for
)

// Flag values of ParseMode.
const (
	Auto   = "auto"
	Always = "always"
	Never  = "never"
)

// ParseMode turns a --progress value into the Mode for writing to f: auto
// is Live on a terminal and Phases elsewhere, always is Live on a terminal
// and Lines elsewhere, never is Off.
func ParseMode(s string, f *os.File) (Mode, error) {
	term := Terminal(f)
	switch s {
	case Auto:
		if term {
			return Live, nil
		}
		return Phases, nil
	case Always:
		if term {
			return Live, nil
		}
		return Lines, nil
	case Never:
		return Off, nil
	}
	return Off, fmt.Errorf("must be %s, %s or %s, not %q", Auto, Always, Never, s)
}

// Terminal reports whether f is a terminal (a character device).
func Terminal(f *os.File) bool {
	if f == nil {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// Snapshot is one reading of a run's progress.
type Snapshot struct {
	Rows, Bytes int64     // rows read, and the bytes of their document text
	Started     []Started // the phases started so far, in any order
}

// Started is a phase seen started: when, and how many rows had been read
// by then.
type Started struct {
	Name string
	At   time.Time
	Rows int64
}

// Source reads a run's progress; the Reporter calls it at every poll
// (every 200 ms), so it must not wait on the network. The Snapshot is the
// caller's: the Reporter sorts its Started in place.
type Source func() Snapshot

// Local reads the counters of the workers in this process.
func Local() Snapshot {
	s := Snapshot{Rows: rowsRead.Load(), Bytes: textBytes.Load()}
	phasesMu.Lock()
	for _, p := range phases {
		if m := p.mark.Load(); m != nil {
			s.Started = append(s.Started, Started{p.name, m.at, m.rows})
		}
	}
	phasesMu.Unlock()
	return s
}

// Reporter prints the progress of one run until Stop.
type Reporter struct {
	out    io.Writer
	mode   Mode
	start  time.Time
	now    func() time.Time
	total  atomic.Int64 // rows in the input; 0 while unknown
	source Source

	printed  map[string]bool // phase lines already printed
	lastLine time.Time       // when the status line was last printed
	width    int             // length of the live line on screen, 0 when none
	readEnd  time.Time       // when the last row was read: the rate stops there

	stop, done chan struct{}
}

// Start resets the counters and starts reporting on out in mode the
// progress of workers in this process (Local), timing the run from start.
// It returns nil for Off; a nil Reporter's methods do nothing.
func Start(out io.Writer, mode Mode, start time.Time) *Reporter {
	if mode == Off {
		return nil
	}
	Reset()
	return StartFrom(out, mode, start, Local)
}

// StartFrom starts reporting on out in mode the progress that src reads,
// timing the run from start. It returns nil for Off.
func StartFrom(out io.Writer, mode Mode, start time.Time, src Source) *Reporter {
	if mode == Off {
		return nil
	}
	r := newReporter(out, mode, start, time.Now)
	r.source = src
	r.stop, r.done = make(chan struct{}), make(chan struct{})
	go r.loop()
	return r
}

func newReporter(out io.Writer, mode Mode, start time.Time, now func() time.Time) *Reporter {
	return &Reporter{out: out, mode: mode, start: start, now: now, source: Local, printed: map[string]bool{}, lastLine: start}
}

// SetTotal gives the number of input rows, when known.
func (r *Reporter) SetTotal(rows int64) {
	if r != nil {
		r.total.Store(rows)
	}
}

// Stop prints what is left (the phase lines not printed yet, the live
// line's last state and its newline) and stops the Reporter.
func (r *Reporter) Stop() {
	if r == nil {
		return
	}
	close(r.stop)
	<-r.done
	r.finish()
}

func (r *Reporter) loop() {
	defer close(r.done)
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
			r.tick()
		}
	}
}

// state is one reading of the counters.
type state struct {
	now         time.Time
	rows, bytes int64
	total       int64
	started     []Started // the phases started, in order of their start
}

func (r *Reporter) read() state {
	snap := r.source()
	s := state{now: r.now(), rows: snap.Rows, bytes: snap.Bytes, total: r.total.Load(), started: snap.Started}
	slices.SortStableFunc(s.started, func(a, b Started) int { return a.At.Compare(b.At) })
	if s.total > 0 && s.rows >= s.total && r.readEnd.IsZero() {
		r.readEnd = s.now
	}
	return s
}

// tick prints what is due at one poll.
func (r *Reporter) tick() {
	s := r.read()
	r.phaseLines(s)
	every := LinesEvery
	if r.mode == Live {
		every = LiveEvery
	}
	// Half a poll early, so that the ticker's jitter does not skip a poll.
	if (r.mode == Live || r.mode == Lines) && s.now.Sub(r.lastLine) >= every-poll/2 {
		r.lastLine = s.now
		r.statusLine(s)
	}
}

// finish prints the phase lines not printed yet and ends the live line.
func (r *Reporter) finish() {
	s := r.read()
	r.phaseLines(s)
	if r.mode == Live && r.width > 0 {
		r.statusLine(s)
		fmt.Fprint(r.out, "\n")
		r.width = 0
	}
}

func (r *Reporter) phaseLines(s state) {
	if r.mode != Phases && r.mode != Lines {
		return
	}
	for _, st := range s.started {
		if r.printed[st.Name] {
			continue
		}
		r.printed[st.Name] = true
		fmt.Fprintf(r.out, "neardup: %s started at %s%s\n", st.Name, seconds(st.At.Sub(r.start)), rowsPart(st.Rows, s.total))
	}
}

func (r *Reporter) statusLine(s state) {
	line := r.status(s)
	if r.mode != Live {
		fmt.Fprintln(r.out, line)
		return
	}
	// On a terminal the line is rewritten in place, padded to blank what is
	// left of a longer one, and the cursor goes back to the start of the
	// line so that another writer's log line replaces it rather than being
	// glued to its end.
	pad := max(r.width-len(line), 0)
	fmt.Fprintf(r.out, "\r%s%s\r", line, strings.Repeat(" ", pad))
	r.width = len(line)
}

// status is the status line: elapsed time, phase, rows read and the rate
// of document text while reading.
func (r *Reporter) status(s state) string {
	phase := "starting"
	if n := len(s.started); n > 0 {
		phase = s.started[n-1].Name
	}
	line := fmt.Sprintf("neardup: %s, %s%s", seconds(s.now.Sub(r.start)), phase, rowsPart(s.rows, s.total))
	if s.total > 0 {
		line += fmt.Sprintf(" (%d%%)", min(100*s.rows/s.total, 100))
	}
	end := s.now
	if !r.readEnd.IsZero() {
		end = r.readEnd
	}
	if d := end.Sub(r.start).Seconds(); s.bytes > 0 && d > 0 {
		line += fmt.Sprintf(", %.1f MB/s of text", float64(s.bytes)/1e6/d)
	}
	return line
}

// rowsPart is ", R/T rows read", ", R rows read" while the total is
// unknown, or nothing when no rows are read at all (recluster).
func rowsPart(rows, total int64) string {
	switch {
	case total > 0:
		return fmt.Sprintf(", %d/%d rows read", min(rows, total), total)
	case rows > 0:
		return fmt.Sprintf(", %d rows read", rows)
	}
	return ""
}

// seconds formats an elapsed time: 12.3s, 2m05s, 1h02m05s.
func seconds(d time.Duration) string {
	d = max(d, 0)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d/time.Minute), int(d%time.Minute/time.Second))
	}
	return fmt.Sprintf("%dh%02dm%02ds", int(d/time.Hour), int(d%time.Hour/time.Minute), int(d%time.Minute/time.Second))
}
