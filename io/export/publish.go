package export

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/neardup/neardup/internal/fanout"

	"github.com/neardup/neardup/io/output"
	"github.com/neardup/neardup/io/store"
)

// ManifestFile is the export's manifest, beside its files. Its name
// starts with an underscore, as _SUCCESS's does, because the readers
// people train from read the folder whole and skip only names that start
// with _ or . (pandas and pyarrow datasets, Spark): a plain export.json
// made pd.read_parquet(DIR) and spark.read.parquet(DIR) fail on it as a
// file with no Parquet footer. It is not named like the run's manifest
// so that an export folder is never taken for a neardup output.
const ManifestFile = "_export.json"

// legacyManifestFile is the manifest's name before it began with an
// underscore. An export into a folder that holds one takes it for an
// earlier export, as it would ManifestFile, and replaces it.
const legacyManifestFile = "export.json"

// SuccessMarker is written last, when the export is complete.
const SuccessMarker = output.SuccessMarker

// CountsDir, below a run's temporary folder, holds each written file's
// counts.
const CountsDir = "_counts"

// PartsDir, below a run's temporary folder, holds the slices of each
// file, copied in parallel before they are joined.
const PartsDir = "_parts"

// File is one input file and what its export holds.
type File struct {
	Input  string `json:"input"`
	Output string `json:"output"` // the name in the export folder
	Counts Counts `json:"counts"`
}

// Manifest records an export: the run it read, the rule, and its counts,
// per file and in all.
type Manifest struct {
	Tool        string  `json:"tool"`
	From        string  `json:"from"`
	Drop        Drop    `json:"drop"`
	DropInvalid bool    `json:"drop_invalid"`
	Columns     string  `json:"added_columns"`           // --add-columns: none, or the list
	Prefix      string  `json:"column_prefix,omitempty"` // the added columns' names begin with it
	Sweep       string  `json:"sweep"`                   // the sweep whose input files were written
	StartedAt   string  `json:"started_at"`
	WallSeconds float64 `json:"wall_seconds"`
	Counts      Counts  `json:"counts"`
	Files       []File  `json:"files"`
}

// Dir is an export folder being written.
type Dir struct {
	Path string
	// The export's hold on its temporary folder, where the pipeline
	// writes the files and their counts (TempDir).
	*output.Claim
}

// Check refuses dir as an export folder when it holds anything but an
// earlier export, unless overwrite is set.
func Check(ctx context.Context, dir string, overwrite bool) error {
	if dir == "" {
		return fmt.Errorf("no --output folder given")
	}
	names, err := store.Contents(ctx, dir)
	if err != nil || len(names) == 0 || overwrite {
		return err
	}
	ok, err := store.Exists(ctx, store.Join(dir, ManifestFile))
	if err != nil {
		return err
	}
	if !ok {
		if ok, err = store.Exists(ctx, store.Join(dir, legacyManifestFile)); err != nil {
			return err
		}
	}
	if !ok {
		if ok, _ = store.Exists(ctx, store.Join(dir, output.TempRoot)); !ok {
			return fmt.Errorf("output folder %s holds files that are not a neardup export; choose another folder or pass --overwrite", dir)
		}
	}
	return nil
}

// Prepare readies dir for an export: it refuses a dir Check refuses,
// claims the folder (output.StartTemp: refused while another run's lease
// there is live), removes an earlier export's _SUCCESS, so that nothing looks complete
// while this one works, and any temporary files a killed export left,
// and picks this export's temporary folder.
func Prepare(ctx context.Context, dir string, overwrite bool) (*Dir, error) {
	return prepare(ctx, dir, overwrite, output.StartTemp)
}

// PrepareDry is Prepare for a dry run: the same refusals, an
// output.DryTemp claim, and nothing written or removed.
func PrepareDry(ctx context.Context, dir string, overwrite bool) (*Dir, error) {
	return prepare(ctx, dir, overwrite, output.DryTemp)
}

func prepare(ctx context.Context, dir string, overwrite bool, start func(context.Context, string, string) (*output.Claim, error)) (*Dir, error) {
	if err := Check(ctx, dir, overwrite); err != nil {
		return nil, err
	}
	claim, err := start(ctx, dir, "export")
	if err != nil {
		return nil, err
	}
	return &Dir{Path: dir, Claim: claim}, nil
}

// Publish moves the files of m (written under TempDir by their output
// names) into place, with the counts the writers left beside them,
// replacing an earlier export's files; then it writes the manifest, and
// _SUCCESS last (output.Plan: a publication that stops midway is finished
// by output.Resume).
func (d *Dir) Publish(ctx context.Context, m *Manifest) error {
	if err := d.Check(ctx); err != nil {
		return err
	}
	m.Counts = Counts{}
	for i := range m.Files {
		f := &m.Files[i]
		b, err := store.ReadFile(ctx, store.Join(d.TempDir, CountsDir, CountsName(f.Output)))
		if err != nil {
			return fmt.Errorf("the counts of %s: %w", f.Input, err)
		}
		if err := json.Unmarshal(b, &f.Counts); err != nil {
			return fmt.Errorf("the counts of %s: %w", f.Input, err)
		}
		m.Counts.Add(f.Counts)
	}
	plan := &output.Plan{Manifest: ManifestFile}
	// An earlier export's files go, unless this one writes them again;
	// so does its manifest under the legacy name.
	for _, name := range []string{ManifestFile, legacyManifestFile} {
		b, err := store.ReadFile(ctx, store.Join(d.Path, name))
		if err != nil {
			continue
		}
		if name == legacyManifestFile {
			plan.Remove = append(plan.Remove, name)
		}
		var old Manifest
		if json.Unmarshal(b, &old) == nil {
			for _, f := range old.Files {
				plan.Remove = append(plan.Remove, f.Output)
			}
		}
	}
	plan.Moves = make([]output.Move, len(m.Files))
	err := fanout.Each(len(m.Files), 32, func(i int) error {
		name := m.Files[i].Output
		size, err := store.Size(ctx, store.Join(d.TempDir, name))
		if err != nil {
			return fmt.Errorf("the export of %s: %w", m.Files[i].Input, err)
		}
		plan.Moves[i] = output.Move{From: name, To: name, Bytes: size}
		return nil
	})
	if err != nil {
		return err
	}
	return d.PublishPlan(ctx, plan, m)
}

// CountsName is the name, under a run's CountsDir, of the counts of the
// file written as output.
func CountsName(output string) string { return output + ".json" }
