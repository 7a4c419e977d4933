package output

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/neardup/neardup/io/store"
)

// A run owns its temporary folder, DIR/_temporary/RUN/, by a lease: the
// file RUN/_lease.json, written before anything else of the run and
// renewed every LeaseRenew while the launcher waits for its job. A run
// starting in the same folder removes only the folders of runs whose
// lease has not been renewed for LeaseTTL (their launcher is gone), and
// refuses to start while a lease is live: users relaunch into a folder a
// live job still fills, and deleting its files would publish partial
// tables (issue 38). Publish requires the lease still there and still
// this run's, so a run whose files were removed anyway fails.
//
// Renewal rewrites the lease from the launcher's clock; a lease counts as
// live while its renewal, or the file's modification time (the object
// store's clock), is within LeaseTTL of this launcher's clock, so a skew
// between machines shorter than LeaseTTL - LeaseRenew does no harm. A
// lease written on this machine by a process that is gone is dead at once
// (processAlive).

// LeaseFile is the lease's name in a run's temporary folder.
const LeaseFile = "_lease.json"

// LeaseTTL is how long a lease lives without renewal, and LeaseRenew how
// often a waiting launcher renews it. Variables for the tests.
var (
	LeaseTTL   = 3 * time.Minute
	LeaseRenew = 30 * time.Second
)

// Lease is the record of the run that owns a temporary folder.
type Lease struct {
	Run     string    `json:"run"`
	Command string    `json:"command"` // run, update, recluster, export
	Host    string    `json:"host"`
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
	Renewed time.Time `json:"renewed"`
}

// live reports whether l, whose file was last modified at mod (zero:
// unknown), is live at now.
func (l Lease) live(mod, now time.Time) bool {
	last := l.Renewed
	if mod.After(last) {
		last = mod
	}
	return now.Sub(last) < LeaseTTL
}

func (l Lease) String() string {
	return fmt.Sprintf("run %s (%s, started %s on %s, pid %d, renewed %s)", l.Run, l.Command,
		l.Started.UTC().Format(time.RFC3339), l.Host, l.PID, l.Renewed.UTC().Format(time.RFC3339))
}

// Claim is a run's hold on its temporary folder in an output folder.
type Claim struct {
	Dir     string // the output folder
	TempDir string // DIR/_temporary/RUN, the run's own
	lease   Lease
	dry     bool // DryTemp's: nothing is written

	mu   sync.Mutex
	stop func() // ends Hold's renewals; nil when none run
}

// ErrLiveRun is the error of a run refused because another run owns a
// live lease in the same output folder.
var ErrLiveRun = fmt.Errorf("another run is writing into this output folder")

// newRunID names a run: its start in nanoseconds (so that names sort by
// start), the process and a random part (two launchers of one process,
// the tests').
func newRunID(now time.Time) string {
	var b [4]byte
	rand.Read(b[:])
	return fmt.Sprintf("%d-%d-%s", now.UnixNano(), os.Getpid(), hex.EncodeToString(b[:]))
}

// StartTemp claims dir for a job of command (run, update, recluster,
// export) that publishes into it. It refuses while another run's lease
// there is live, naming it; else it writes this run's lease, removes the
// folders of runs whose leases expired (or that have none: a killed
// run's), and an earlier job's _SUCCESS, so that nothing looks complete
// while this one works.
func StartTemp(ctx context.Context, dir, command string) (*Claim, error) {
	c, err := newClaim(ctx, dir, command)
	if err != nil {
		return nil, err
	}
	if err := c.Renew(ctx); err != nil {
		return nil, fmt.Errorf("cannot write the run's lease in %s: %w", dir, err)
	}
	// Two runs that started together both wrote leases: the earlier
	// stays, the later gives way.
	live, err := liveLeases(ctx, dir, c.lease.Run)
	if err != nil {
		return nil, err
	}
	if slices.ContainsFunc(live, func(l Lease) bool { return l.Run < c.lease.Run }) {
		store.RemoveAll(ctx, c.TempDir)
		return nil, refusal(dir, live)
	}
	keep := map[string]bool{c.lease.Run: true}
	for _, l := range live {
		keep[l.Run] = true
	}
	if err := removeRunsExcept(ctx, dir, keep); err != nil {
		return nil, fmt.Errorf("cannot clear old temporary files in %s: %w", dir, err)
	}
	if err := store.Remove(ctx, store.Join(dir, SuccessMarker)); err != nil {
		return nil, fmt.Errorf("cannot clear %s: %w", store.Join(dir, SuccessMarker), err)
	}
	return c, nil
}

// DryTemp is the claim of a dry run (a Dataflow --dry_run prints the job
// instead of submitting it): the temporary folder StartTemp would name,
// and StartTemp's refusal of a folder another run's live lease holds, so
// that a dry run says what the run would meet; but nothing is written,
// renewed or removed.
func DryTemp(ctx context.Context, dir, command string) (*Claim, error) {
	c, err := newClaim(ctx, dir, command)
	if err != nil {
		return nil, err
	}
	c.dry = true
	return c, nil
}

// newClaim is a new run's claim on dir, its lease not yet written; an
// error wraps ErrLiveRun when another run's lease there is live.
func newClaim(ctx context.Context, dir, command string) (*Claim, error) {
	now := time.Now()
	host, _ := os.Hostname()
	c := &Claim{Dir: dir, lease: Lease{Run: newRunID(now), Command: command, Host: host, PID: os.Getpid(), Started: now.UTC(), Renewed: now.UTC()}}
	c.TempDir = store.Join(dir, TempRoot, c.lease.Run)
	live, err := liveLeases(ctx, dir, "")
	if err != nil {
		return nil, err
	}
	if len(live) > 0 {
		return nil, refusal(dir, live)
	}
	return c, nil
}

func refusal(dir string, live []Lease) error {
	var runs []string
	for _, l := range live {
		runs = append(runs, l.String())
	}
	return fmt.Errorf("%w: %s holds %s; wait until it finishes, or choose another --output (a run whose launcher died gives the folder up %s after its last renewal)",
		ErrLiveRun, dir, strings.Join(runs, "; "), LeaseTTL)
}

// liveLeases lists the live leases in dir's temporary folder, but the
// run except's.
func liveLeases(ctx context.Context, dir, except string) ([]Lease, error) {
	names, err := store.List(ctx, store.Join(dir, TempRoot, "*", LeaseFile))
	if err != nil {
		return nil, err
	}
	now := time.Now()
	host, _ := os.Hostname()
	var live []Lease
	for _, name := range names {
		b, err := store.ReadFile(ctx, name)
		if err != nil {
			continue // removed meanwhile
		}
		var l Lease
		if json.Unmarshal(b, &l) != nil || l.Run == except {
			continue
		}
		_, mod, err := store.Stat(ctx, name)
		if err != nil {
			continue
		}
		if l.live(mod, now) && !(l.Host == host && !processAlive(l.PID)) {
			live = append(live, l)
		}
	}
	slices.SortFunc(live, func(a, b Lease) int { return strings.Compare(a.Run, b.Run) })
	return live, nil
}

// processAlive reports whether process pid runs on this machine. A
// lease of a launcher on this machine whose process is gone (a run
// interrupted with ^C, killed, crashed) is dead at once: its job went
// with it on the embedded runner, and on a cluster no one is left to
// publish what its job still writes (into its own folder, which the next
// run removes).
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// removeRunsExcept removes the files below dir's temporary folder of
// every run but those of keep.
func removeRunsExcept(ctx context.Context, dir string, keep map[string]bool) error {
	root := store.Join(dir, TempRoot)
	names, err := store.ListAll(ctx, root)
	if err != nil {
		return err
	}
	prefix := strings.TrimSuffix(root, "/") + "/"
	if store.IsLocal(root) {
		prefix = strings.TrimSuffix(root, string(os.PathSeparator)) + string(os.PathSeparator)
	}
	gone := map[string]bool{}
	for _, n := range names {
		run, _, _ := strings.Cut(strings.TrimPrefix(n, prefix), "/")
		run, _, _ = strings.Cut(run, string(os.PathSeparator))
		if keep[run] {
			continue
		}
		if store.IsLocal(root) {
			if !gone[run] {
				gone[run] = true
				if err := os.RemoveAll(store.Join(root, run)); err != nil {
					return err
				}
			}
			continue
		}
		if err := store.Remove(ctx, n); err != nil {
			return err
		}
	}
	return nil
}

// Renew rewrites the run's lease with the time now.
func (c *Claim) Renew(ctx context.Context) error {
	if c.dry {
		return nil
	}
	l := c.lease // never changed after StartTemp but by the tests
	l.Renewed = time.Now().UTC()
	b, err := json.Marshal(l)
	if err != nil {
		return err
	}
	return store.WriteFile(ctx, store.Join(c.TempDir, LeaseFile), b)
}

// Hold renews the lease every LeaseRenew until the returned function is
// called, or Release: while the launcher waits for its job and publishes
// its tables (a publication of thousands of shards on an object store
// can outlast LeaseTTL).
func (c *Claim) Hold(ctx context.Context) (stop func()) {
	if c.dry {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(LeaseRenew)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				c.Renew(ctx) // a failure is seen by Check
			}
		}
	}()
	var once sync.Once
	stop = func() { once.Do(func() { close(done); wg.Wait() }) }
	c.mu.Lock()
	c.stop = stop
	c.mu.Unlock()
	return stop
}

// Release ends Hold's renewals, before the temporary folder is removed
// (a renewal after would write the lease there again).
func (c *Claim) Release() {
	c.mu.Lock()
	stop := c.stop
	c.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// Check verifies, before publication, that the run still owns its
// temporary folder: its lease is there and is its own. It renews the
// lease, so that publication has LeaseTTL before anyone may take over.
func (c *Claim) Check(ctx context.Context) error {
	b, err := store.ReadFile(ctx, store.Join(c.TempDir, LeaseFile))
	var l Lease
	if err == nil {
		err = json.Unmarshal(b, &l)
	}
	if err != nil || l.Run != c.lease.Run {
		return fmt.Errorf("this run's temporary files in %s were removed while it ran (by another run into the same output?): its tables cannot be proven complete, and nothing was published; run again", c.TempDir)
	}
	if err := c.Renew(ctx); err != nil {
		return fmt.Errorf("cannot renew the run's lease in %s: %w", c.Dir, err)
	}
	return nil
}

// Run is the run's name, its temporary folder's.
func (c *Claim) Run() string { return c.lease.Run }
