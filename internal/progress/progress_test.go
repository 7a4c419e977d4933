package progress

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The phases of these tests, registered once like the pipeline's.
var (
	read   = NewPhase("phase 1 read/sketch")
	merge  = NewPhase("phase 2 shingle merge")
	output = NewPhase("output")
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// fakeClock is a clock the test moves by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time      { return c.t }
func (c *fakeClock) set(d time.Duration) { c.t = t0.Add(d) }

func newTest(mode Mode) (*Reporter, *bytes.Buffer, *fakeClock) {
	Reset()
	var out bytes.Buffer
	c := &fakeClock{t0}
	return newReporter(&out, mode, t0, c.now), &out, c
}

func TestPhaseLinesPrintOnce(t *testing.T) {
	r, out, c := newTest(Phases)
	r.SetTotal(350000)
	read.Start(t0.Add(300 * time.Millisecond))
	c.set(time.Second)
	r.tick()
	AddRead(200000, 100e6)
	c.set(5 * time.Second)
	r.tick()
	AddRead(150000, 75e6)
	merge.Start(t0.Add(12300 * time.Millisecond))
	merge.Start(t0.Add(13 * time.Second)) // not the first start: ignored
	c.set(12500 * time.Millisecond)
	r.tick()
	r.tick()
	output.Start(t0.Add(20 * time.Second)) // started after the last poll: Stop prints it
	c.set(20100 * time.Millisecond)
	r.finish()
	want := "neardup: phase 1 read/sketch started at 0.3s, 0/350000 rows read\n" +
		"neardup: phase 2 shingle merge started at 12.3s, 350000/350000 rows read\n" +
		"neardup: output started at 20.0s, 350000/350000 rows read\n"
	if got := out.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestPhaseLinesInStartOrder(t *testing.T) {
	r, out, _ := newTest(Phases)
	output.Start(t0.Add(2 * time.Second))
	read.Start(t0.Add(1 * time.Second))
	r.finish()
	want := "neardup: phase 1 read/sketch started at 1.0s\nneardup: output started at 2.0s\n"
	if got := out.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestLiveLine(t *testing.T) {
	r, out, c := newTest(Live)
	r.SetTotal(1000)
	read.Start(t0.Add(100 * time.Millisecond))
	c.set(500 * time.Millisecond)
	r.tick()
	if out.Len() != 0 {
		t.Fatalf("printed before the first second: %q", out)
	}
	AddRead(250, 20e6)
	c.set(time.Second)
	r.tick()
	line1 := "neardup: 1.0s, phase 1 read/sketch, 250/1000 rows read (25%), 20.0 MB/s of text"
	if got, want := out.String(), "\r"+line1+"\r"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	out.Reset()
	c.set(1500 * time.Millisecond)
	r.tick() // not due yet
	AddRead(750, 20e6)
	merge.Start(t0.Add(1900 * time.Millisecond))
	c.set(2 * time.Second)
	r.tick()
	// The rate stops when the last row is read: 40 MB in 2 s.
	line2 := "neardup: 2.0s, phase 2 shingle merge, 1000/1000 rows read (100%), 20.0 MB/s of text"
	if got, want := out.String(), "\r"+line2+"\r"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	out.Reset()
	output.Start(t0.Add(3 * time.Second))
	c.set(4 * time.Second)
	r.finish()
	// Shorter than the line on screen: padded to blank its end, then the
	// newline. No phase lines on a terminal.
	line3 := "neardup: 4.0s, output, 1000/1000 rows read (100%), 20.0 MB/s of text"
	want := "\r" + line3 + strings.Repeat(" ", len(line2)-len(line3)) + "\r\n"
	if got := out.String(); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestLiveShortRunPrintsNothing(t *testing.T) {
	r, out, c := newTest(Live)
	read.Start(t0)
	output.Start(t0.Add(200 * time.Millisecond))
	c.set(300 * time.Millisecond)
	r.tick()
	r.finish()
	if out.Len() != 0 {
		t.Errorf("a run shorter than a second printed %q", out)
	}
}

func TestLinesMode(t *testing.T) {
	r, out, c := newTest(Lines)
	read.Start(t0.Add(100 * time.Millisecond))
	AddRead(500, 1e6) // the total is never known
	for d := time.Duration(0); d <= 11*time.Second; d += poll {
		c.set(d)
		r.tick()
	}
	r.finish()
	want := "neardup: phase 1 read/sketch started at 0.1s\n" +
		"neardup: 5.0s, phase 1 read/sketch, 500 rows read, 0.2 MB/s of text\n" +
		"neardup: 10.0s, phase 1 read/sketch, 500 rows read, 0.1 MB/s of text\n"
	if got := out.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestStatusWithoutRows(t *testing.T) {
	r, _, c := newTest(Live)
	c.set(75 * time.Minute)
	if got, want := r.status(r.read()), "neardup: 1h15m00s, starting"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	c.set(125500 * time.Millisecond)
	if got, want := r.status(r.read()), "neardup: 2m05s, starting"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestParseMode(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	for _, nt := range []*os.File{f, pw, nil} {
		if Terminal(nt) {
			t.Errorf("%v is not a terminal", nt)
		}
		for flag, want := range map[string]Mode{Auto: Phases, Always: Lines, Never: Off} {
			if got, err := ParseMode(flag, nt); err != nil || got != want {
				t.Errorf("ParseMode(%q, not a terminal) = %v, %v; want %v", flag, got, err, want)
			}
		}
	}
	// A character device stands in for a terminal.
	if tty, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0); err == nil {
		defer tty.Close()
		if !Terminal(tty) {
			t.Errorf("%s is a character device", os.DevNull)
		}
		for flag, want := range map[string]Mode{Auto: Live, Always: Live, Never: Off} {
			if got, err := ParseMode(flag, tty); err != nil || got != want {
				t.Errorf("ParseMode(%q, terminal) = %v, %v; want %v", flag, got, err, want)
			}
		}
	}
	if _, err := ParseMode("sometimes", f); err == nil {
		t.Error("ParseMode accepted sometimes")
	}
}

func TestOffAndNil(t *testing.T) {
	r := Start(&bytes.Buffer{}, Off, time.Now())
	if r != nil {
		t.Fatal("Start(Off) returned a Reporter")
	}
	r.SetTotal(5)
	r.Stop()
	var p *Phase
	p.Start(time.Now())
}

// TestConcurrent runs workers and a real Reporter together (for -race).
func TestConcurrent(t *testing.T) {
	var out syncBuffer
	r := Start(&out, Lines, time.Now())
	r.SetTotal(8 * 1000)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1000 {
				read.Start(time.Now())
				AddRead(1, 10)
			}
		}()
	}
	wg.Wait()
	merge.Start(time.Now())
	time.Sleep(2 * poll)
	r.Stop()
	got := out.String()
	if strings.Count(got, "phase 1 read/sketch started") != 1 || strings.Count(got, "phase 2 shingle merge started") != 1 {
		t.Errorf("want one line per phase, got\n%s", got)
	}
	if !strings.Contains(got, "8000/8000 rows read") {
		t.Errorf("want every row read by phase 2, got\n%s", got)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// The workers' side costs an atomic add per row group and an atomic load
// per element.
func BenchmarkAddRead(b *testing.B) {
	for range b.N {
		AddRead(1000, 1<<20)
	}
}

func BenchmarkStartedPhase(b *testing.B) {
	now := time.Now()
	read.Start(now)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			read.Start(now)
		}
	})
}
