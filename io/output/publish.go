package output

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/neardup/neardup/internal/fanout"
	"github.com/neardup/neardup/io/store"
)

// Publication at scale. A run over terabytes publishes thousands of
// shards; on an object store each move is a copy and a delete of tens of
// milliseconds or more, and any of them may fail. So a publication is
// written down before it touches the published files (a Plan, in the
// run's temporary folder), carried out many files at once, and can be
// finished from its plan by another process (Resume: `runner publish`)
// when the one that began it died or failed midway. Every step of a plan
// can be done twice: a file already moved is found at its destination at
// the size written, a file already removed is not an error.
//
// Meanwhile the output folder has no _SUCCESS (StartTemp removed it), and
// the table folders may hold some of the new shards and some of the old:
// neardup's readers (ReadManifest) refuse such a folder, and so should
// anyone's (docs/cluster.md).

// PlanFile is a publication's plan, in its run's temporary folder.
const PlanFile = "_publish.json"

// PublishConcurrency is how many files a publication moves or removes at
// once.
var PublishConcurrency = 32

// Plan is a publication: the files to remove, the files to move into
// place, and the manifest to write once they are, with _SUCCESS last.
// Paths are relative: From to the run's temporary folder, the others to
// the output folder.
type Plan struct {
	Run string `json:"run"`
	// Manifest is the manifest's file name, and ManifestJSON its text.
	Manifest     string          `json:"manifest"`
	ManifestJSON json.RawMessage `json:"manifest_json"`
	// Clear are folders whose files go, but those that moves put there.
	Clear []string `json:"clear,omitempty"`
	// Remove are files that go, unless a move puts a file there.
	Remove []string `json:"remove,omitempty"`
	Moves  []Move   `json:"moves"`
}

// Move is one file put into place.
type Move struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Bytes int64  `json:"bytes"` // its size as written: a move done is seen by it
}

// ErrUnfinished marks a publication that stopped midway: its plan is
// kept, and Resume (runner publish) finishes it.
var ErrUnfinished = errors.New("publication stopped midway")

// PublishPlan writes plan p, with manifest, into the run's temporary
// folder, then carries it out. The lease must be held (Hold) until it
// returns.
func (c *Claim) PublishPlan(ctx context.Context, p *Plan, manifest any) error {
	b, err := json.MarshalIndent(manifest, "", "  ")
	if err != nil {
		return err
	}
	p.Run, p.ManifestJSON = c.Run(), b
	b, err = json.Marshal(p)
	if err != nil {
		return err
	}
	if err := store.WriteFile(ctx, store.Join(c.TempDir, PlanFile), b); err != nil {
		return fmt.Errorf("cannot write the publication's plan: %w; nothing was published", err)
	}
	return c.carryOut(ctx, p)
}

// carryOut does what plan p says, and seals the output.
func (c *Claim) carryOut(ctx context.Context, p *Plan) error {
	err := c.carryOutFiles(ctx, p)
	c.Release()
	if err == nil {
		err = seal(ctx, c.Dir, c.TempDir, p)
	}
	if err != nil {
		// Give the folder up at once, so that runner publish (or a new
		// run) need not wait for the lease to expire.
		store.Remove(ctx, store.Join(c.TempDir, LeaseFile))
		return fmt.Errorf("%w: %v; %s has no %s, and its tables may hold some files of the new run and some of the old: `runner publish --output %s` finishes it", ErrUnfinished, err, c.Dir, SuccessMarker, c.Dir)
	}
	return nil
}

func (c *Claim) carryOutFiles(ctx context.Context, p *Plan) error {
	dests := map[string]bool{}
	for _, m := range p.Moves {
		dests[m.To] = true
	}
	var gone []string
	for _, f := range p.Remove {
		if !dests[f] {
			gone = append(gone, store.Join(c.Dir, f))
		}
	}
	for _, folder := range p.Clear {
		names, err := store.List(ctx, store.Join(c.Dir, folder, "*"))
		if err != nil {
			return err
		}
		for _, n := range names {
			if !dests[folder+"/"+n[strings.LastIndexAny(n, `/`+string(os.PathSeparator))+1:]] {
				gone = append(gone, n)
			}
		}
	}
	if err := fanout.Each(len(gone), PublishConcurrency, func(i int) error {
		return store.Remove(ctx, gone[i])
	}); err != nil {
		return err
	}
	if store.IsLocal(c.Dir) {
		for _, folder := range p.Clear {
			os.Remove(store.Join(c.Dir, folder)) // when empty: a table this run does not write
		}
	}
	return fanout.Each(len(p.Moves), PublishConcurrency, func(i int) error {
		m := p.Moves[i]
		from, to := store.Join(c.TempDir, m.From), store.Join(c.Dir, m.To)
		err := store.Move(ctx, from, to)
		if err == nil {
			return nil
		}
		// Moved already, by an earlier attempt?
		if size, e := store.Size(ctx, to); e == nil && size == m.Bytes {
			if _, e := store.Size(ctx, from); e != nil {
				return nil
			}
		}
		return fmt.Errorf("publishing %s: %w", to, err)
	})
}

// seal ends a publication whose files are in place: it writes the
// manifest, removes the run's temporary files but the plan, writes
// _SUCCESS, and removes the plan. Dying anywhere, it leaves the plan, so
// Resume can seal again.
func seal(ctx context.Context, dir, tempDir string, p *Plan) error {
	if err := store.WriteFile(ctx, store.Join(dir, p.Manifest), append(p.ManifestJSON, '\n')); err != nil {
		return err
	}
	names, err := store.ListAll(ctx, tempDir)
	if err != nil {
		return err
	}
	plan := store.Join(tempDir, PlanFile)
	names = slices.DeleteFunc(names, func(n string) bool { return n == plan })
	if err := fanout.Each(len(names), PublishConcurrency, func(i int) error {
		return store.Remove(ctx, names[i])
	}); err != nil {
		return err
	}
	if err := store.WriteFile(ctx, store.Join(dir, SuccessMarker), nil); err != nil {
		return err
	}
	if err := store.Remove(ctx, plan); err != nil {
		return err
	}
	if store.IsLocal(tempDir) {
		os.RemoveAll(tempDir)
		// _temporary itself, unless another run has its folder there.
		os.Remove(filepath.Dir(tempDir))
	}
	return nil
}

// Resume finishes the publication in dir that a run began and did not
// end (its launcher died, or a move failed): it takes over the run's
// temporary folder, refusing while any run's lease there is live, and
// carries out the plan the run left. It says what it did, or that there
// was nothing to finish.
func Resume(ctx context.Context, dir string) (string, error) {
	live, err := liveLeases(ctx, dir, "")
	if err != nil {
		return "", err
	}
	if len(live) > 0 {
		return "", refusal(dir, live)
	}
	plans, err := store.List(ctx, store.Join(dir, TempRoot, "*", PlanFile))
	if err != nil {
		return "", err
	}
	if len(plans) == 0 {
		if ok, err := store.Exists(ctx, store.Join(dir, SuccessMarker)); err == nil && ok {
			return fmt.Sprintf("%s is published already (it has %s)", dir, SuccessMarker), nil
		}
		return "", fmt.Errorf("%s holds no publication to finish: no run into it got as far as publishing its tables (a run that died sooner published nothing); run it again", dir)
	}
	// Only the run holding the lease publishes, and a run clears dead
	// runs' folders when it starts: two plans mean the later run died
	// publishing too. Its plan is the one to finish.
	name := plans[len(plans)-1]
	b, err := store.ReadFile(ctx, name)
	if err != nil {
		return "", err
	}
	var p Plan
	if err := json.Unmarshal(b, &p); err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	now := time.Now()
	host, _ := os.Hostname()
	c := &Claim{Dir: dir, TempDir: store.Join(dir, TempRoot, p.Run),
		lease: Lease{Run: p.Run, Command: "publish", Host: host, PID: os.Getpid(), Started: now.UTC(), Renewed: now.UTC()}}
	if err := c.Renew(ctx); err != nil {
		return "", fmt.Errorf("cannot take over run %s's lease in %s: %w", p.Run, dir, err)
	}
	defer c.Hold(ctx)()
	if err := c.carryOut(ctx, &p); err != nil {
		return "", err
	}
	return fmt.Sprintf("published run %s in %s: %d files moved into place, %s and %s written", p.Run, dir, len(p.Moves), p.Manifest, SuccessMarker), nil
}
