package settings

import (
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/neardup/neardup/io/export"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/similarity/sketch"
	"github.com/neardup/neardup/text/stopword"
)

// ErrUsage marks an error in what the user asked for (a flag, a
// combination of flags), as opposed to a failure of the run.
var ErrUsage = errors.New("usage")

// Usagef is a usage error: what the user asked for, and why it cannot run.
func Usagef(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUsage, fmt.Sprintf(format, args...))
}

// Defaults is every setting at its declared default, resolved as a run
// with no flags given would resolve it: the one default configuration the
// runner, the tests, the bench and the quality tool share.
func Defaults() Run {
	var r Run
	r.setDefaults()
	if err := r.Resolve(nil); err != nil {
		panic(fmt.Sprintf("settings: the defaults: %v", err))
	}
	return r
}

// Default is Defaults' Config.
func Default() Config { return Defaults().Config }

// value is one declaration's flag.Value, writing into a Run.
type value struct {
	s    *Setting
	r    *Run
	text string
}

func (v *value) String() string {
	if v == nil || v.s == nil {
		return ""
	}
	return v.text
}

func (v *value) Set(x string) error {
	if err := v.s.set(v.r, x); err != nil {
		return err
	}
	v.text = x
	return nil
}

func (v *value) IsBoolFlag() bool { return v.s.Bool }

// Register sets r to the defaults and declares on fs the flag of every
// setting, writing into r. Every command registers them all, so that a
// flag a command does not take is refused by name (see Setting.Takes),
// not as unknown.
func (r *Run) Register(fs *flag.FlagSet) {
	r.setDefaults()
	for _, s := range Declarations {
		fs.Var(&value{s: s, r: r, text: s.Default}, s.Name, s.Help)
	}
}

// setDefaults sets r to every declared default. A default its own
// setting refuses is a mistake in Declarations (TestDeclarations), so it
// panics.
func (r *Run) setDefaults() {
	*r = Run{}
	for _, s := range Declarations {
		if s.Default == "" {
			continue
		}
		if err := s.set(r, s.Default); err != nil {
			panic(fmt.Sprintf("settings: the default of --%s: %v", s.Name, err))
		}
	}
}

// Export is how the deduplicated crawl is written (runner export,
// --dedup-output): which rows it drops and which columns it adds.
func (r *Run) Export() (export.Rule, export.Added) {
	return export.Rule{Drop: r.Drop, DropInvalid: r.DropInvalid}, export.Added{Columns: r.AddColumns, Prefix: r.ColumnPrefix}
}

// Resolve settles what one flag implies for others, given the flags the
// user set (by name), and checks the combinations only the flags given
// can tell apart; then Validate. Its errors wrap ErrUsage.
func (r *Run) Resolve(set map[string]bool) error {
	if set["features"] {
		if err := r.SetFeatures(r.features); err != nil {
			return Usagef("--features: %v", err)
		}
	}
	if r.Chunks > 0 && !set["sketch"] {
		// A page has a few chunks (about ten of 256 bytes in 3 KB):
		// MOD_25 would keep none of most pages'. Keep them all, as
		// Jain's Bloom filters do.
		r.Sketch = sketch.Spec{Kind: sketch.Mod, N: 1}
	}
	switch {
	case set["policy"] && set["threshold"]:
		return Usagef("give --policy or --threshold, not both")
	case !set["policy"] && r.threshold > 0:
		r.Policy.Resemblance, r.Policy.Containment = r.threshold, 0
	}
	if r.DedupOutput == "" && (set["drop"] || set["drop-invalid"] || set["add-columns"] || set["column-prefix"]) {
		return Usagef("--drop, --drop-invalid, --add-columns and --column-prefix shape the deduplicated crawl: give --dedup-output too")
	}
	if missing := r.Tables.Missing(tables.ExportNeeds); r.DedupOutput != "" && len(missing) > 0 {
		return Usagef("--dedup-output reads the %s table: add it to --tables", strings.Join(missing, ", "))
	}
	if set["bloom-bits"] && r.Verification() != VerifyBloom {
		return Usagef("--bloom-bits goes with --verify=bloom")
	}
	switch r.Mode {
	case ModePairs:
		if set["super-size"] || set["bands"] {
			return Usagef("--super-size and --bands go with --mode=supershingle")
		}
	case ModeExact:
		if set["super-size"] || set["bands"] || set["sketch"] || set["template-shingles"] {
			return Usagef("--mode=exact takes no --sketch, --super-size, --bands or --template-shingles: its sketch is each document's ppjoin+ prefix")
		}
		r.Sketch = sketch.Spec{Kind: sketch.Mod, N: 1} // unused: the sketch is the prefix
	}
	if r.Columns.HTML == "" {
		if set["extract"] {
			return Usagef("--extract needs --html-column: text input is used as it is")
		}
		r.Extract = ""
	}
	if !r.Templates.On() {
		if set["template-share"] || set["template-min-pages"] {
			return Usagef("--template-share and --template-min-pages go with --template-shingles=auto")
		}
	} else {
		r.Templates.Share, r.Templates.MinPages = r.templateShare, r.templatePages
	}
	r.Columns.URLRequired, r.Columns.IDRequired, r.Columns.DateRequired = set["url-column"] || r.Columns.Redirect != "", set["id-column"], set["date-column"]
	r.Columns.Score = r.Keep.NeedsColumn()
	return r.Validate()
}

// Validate checks the combinations of settings that cannot run together.
// A full run, recluster, update and query all check their Config with it;
// its errors wrap ErrUsage.
func (c Config) Validate() error {
	if c.Columns.Text == "" && c.Columns.HTML == "" {
		return Usagef("name the text with --text-column or the HTML with --html-column")
	}
	if c.Columns.Redirect != "" && c.Columns.URL == "" {
		return Usagef("--redirect-column needs the rows' URLs: name them with --url-column")
	}
	if c.Verify == VerifySketch && c.Mode != ModeSuperShingle {
		return Usagef("--verify=sketch goes with --mode=supershingle (phase 3's pairs are their sketch estimates already)")
	}
	if c.Verify == VerifyDense && c.Policy.Containment > 0 {
		return Usagef("--verify=dense settles resemblance only (a sample of the K smallest values cannot estimate containment): use --verify=uncertain with a containment policy")
	}
	switch c.Mode {
	case ModeExact:
		switch {
		case c.Policy.Containment > 0:
			return Usagef("--mode=exact joins on resemblance: its prefix filter has no bound for containment; use --mode=pairs --verify=exact with a containment policy")
		case c.Verify == VerifyBloom || c.Verify == VerifyUncertain || c.Verify == VerifyDense:
			return Usagef("--mode=exact verifies every candidate exactly; --verify=%s goes with the pairs and supershingle modes", c.Verify)
		case c.Equivalence == ShingleEquivalent:
			return Usagef("--mode=exact cannot take --equivalence=shingle: its sketches are prefixes, and equal prefixes are not equal sets")
		}
	case ModeSuperShingle:
		if c.Policy.Containment > 0 {
			return Usagef("super-shingles cannot detect containment (see docs/sketches.md); use --mode=pairs with a containment policy")
		}
		if c.Sketch.Kind == sketch.MinHash {
			if c.Bands < 1 || c.Sketch.N%c.Bands != 0 {
				return Usagef("--sketch=%s in supershingle mode needs --bands=B dividing %d", c.Sketch, c.Sketch.N)
			}
		} else if c.Bands > 0 {
			return Usagef("--bands needs a minhash:K sketch")
		}
		if c.SuperSize < 1 {
			return Usagef("--super-size must be at least 1")
		}
	case ModePairs:
	default:
		return Usagef("--mode must be pairs, supershingle or exact, not %q", c.Mode)
	}
	if c.Policy.Resemblance <= 0 && c.Policy.Containment <= 0 {
		return Usagef("the policy links nothing: give --policy resemblance:T or containment:T")
	}
	if c.Policy.Containment > 0 && c.Sketch.Kind != sketch.Mod && (c.Verification() == "" || c.UncertainOnly()) {
		return Usagef("a containment policy needs a mod:M sketch (or --verify=bloom or exact): %s cannot estimate containment", c.Sketch)
	}
	if c.Stopwords != "" {
		if err := stopword.Check(c.Stopwords); err != nil {
			return Usagef("--stopwords: %v", err)
		}
	}
	if c.Templates.On() {
		if c.Columns.URL == "" {
			return Usagef("--template-shingles=auto needs the pages' URLs: --url-column is empty")
		}
		if c.Sketch.Kind == sketch.MinHash {
			// A min-hash position whose minimum is a template shingle would
			// need the minimum of the rest, which only phase 1 could find.
			return Usagef("--template-shingles=auto needs a mod:M or min:N sketch, not %s", c.Sketch)
		}
		if err := c.Templates.Validate(); err != nil {
			return Usagef("--template-shingles: %v", err)
		}
	}
	return nil
}

// Manifest is the manifest's record of c: every declared setting that has
// a manifest key, as the manifest writes it.
func Manifest(c Config) map[string]string {
	m := map[string]string{}
	for _, s := range Declarations {
		if s.Manifest != "" {
			m[s.Manifest] = s.manifest(c)
		}
	}
	return m
}

// FromManifest rebuilds the Config of a finished run from its manifest:
// the settings it recorded (what Manifest wrote) and, for the settings it
// keeps only among the flags (the input's columns), the flags. Settings an
// older output did not record keep their defaults.
func FromManifest(recorded, flags map[string]string) (Config, error) {
	r := Defaults()
	for _, s := range Declarations {
		key, v, ok := s.Manifest, "", false
		if key != "" {
			v, ok = recorded[key]
		} else {
			key = "--" + s.Name
			v, ok = flags[s.Name]
			ok = ok && v != ""
		}
		if !ok && s.Manifest != "" && s.Absent != "" {
			v, ok = s.Absent, true
		}
		if !ok {
			continue
		}
		var err error
		if s.load != nil && s.Manifest != "" {
			err = s.load(&r.Config, v)
		} else {
			err = s.set(&r, v)
		}
		if err != nil {
			return r.Config, fmt.Errorf("manifest setting %s %q: %w", key, v, err)
		}
	}
	if r.Columns.HTML == "" {
		r.Extract = ""
	}
	return r.Config, nil
}

// Recorded is the setting the manifest records under key, or nil.
func Recorded(key string) *Setting {
	for _, s := range Declarations {
		if s.Manifest == key {
			return s
		}
	}
	return nil
}

// IndexKeys are the manifest keys an update must share with its index.
func IndexKeys() []string {
	var keys []string
	for _, s := range Declarations {
		if s.Index {
			keys = append(keys, s.Manifest)
		}
	}
	return keys
}
