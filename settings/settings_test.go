package settings

import (
	"errors"
	"flag"
	"io"
	"slices"
	"strings"
	"testing"
)

// TestSetFeatures: SetFeatures reads back what Features writes, and
// refuses the rest, naming it.
func TestSetFeatures(t *testing.T) {
	for _, f := range []string{"words:10", "words:3", "chunks:64", "chunks:256"} {
		cfg := Config{ShingleWords: 10}
		if err := cfg.SetFeatures(f); err != nil || cfg.Features() != f {
			t.Errorf("SetFeatures(%q): %v, Features() %q", f, err, cfg.Features())
		}
	}
	for _, f := range []string{"", "words", "words:0", "chunks:100", "chunks:x", "bytes:4"} {
		cfg := Config{ShingleWords: 10}
		if err := cfg.SetFeatures(f); err == nil || !strings.Contains(err.Error(), f) {
			t.Errorf("SetFeatures(%q): %v, want an error naming it", f, err)
		}
	}
}

// TestManifestRoundTrip: what Manifest records, FromManifest reads back
// to a Config that records the same, for a spread of settings.
func TestManifestRoundTrip(t *testing.T) {
	for _, args := range [][]string{
		nil,
		{"--mode=supershingle", "--super-size=4", "--verify=sketch", "--sketch=min:50"},
		{"--mode=supershingle", "--sketch=minhash:100", "--bands=20"},
		{"--mode=exact", "--threshold=0.7"},
		{"--verify=bloom", "--bloom-bits=12", "--policy=resemblance:0.5,containment:0.8"},
		{"--verify=uncertain", "--policy=resemblance:0.6,containment:0.8"},
		{"--features=chunks:256", "--stopwords=en", "--keep=longest", "--clusters=centered"},
		{"--html-column=html", "--extract=visible", "--template-shingles=auto", "--template-share=0.6", "--template-min-pages=5"},
		{"--pairs=linked", "--components=distributed", "--component-rounds=3", "--seed=7", "--equivalence=lexical"},
	} {
		r := parse(t, args...)
		flags := map[string]string{}
		for _, s := range Declarations {
			flags[s.Name] = s.Default
		}
		for _, a := range args {
			k, v, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
			flags[k] = v
		}
		back, err := FromManifest(Manifest(r.Config), flags)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		want, got := Manifest(r.Config), Manifest(back)
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%v: %s recorded %q, read back as %q", args, k, v, got[k])
			}
		}
		if back.Columns.HTML != r.Columns.HTML || back.Verification() != r.Verification() || back.LinksAll() != r.LinksAll() || back.UncertainOnly() != r.UncertainOnly() {
			t.Errorf("%v: read back %+v, want %+v", args, back, r.Config)
		}
	}
}

// parse parses a command line as the runner does.
func parse(t *testing.T, args ...string) Run {
	t.Helper()
	var r Run
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	r.Register(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if err := r.Resolve(set); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return r
}

// TestInvalidCombinations: each is a usage error naming what to change,
// not a panic, whether it comes from flags (Resolve) or from a Config
// built in code (Validate).
func TestInvalidCombinations(t *testing.T) {
	for args, want := range map[string]string{
		"--verify=sketch":                                             "--verify=sketch goes with --mode=supershingle",
		"--mode=exact --policy=containment:0.8":                       "--mode=exact joins on resemblance",
		"--mode=exact --verify=bloom":                                 "--verify=bloom goes with",
		"--mode=exact --verify=uncertain":                             "--verify=uncertain goes with",
		"--sketch=min:10 --policy=containment:0.8 --verify=uncertain": "a containment policy needs a mod:M sketch",
		"--mode=exact --sketch=min:10":                                "--mode=exact takes no --sketch",
		"--mode=supershingle --policy=containment:0.8":                "super-shingles cannot detect containment",
		"--mode=supershingle --sketch=minhash:100":                    "needs --bands=B dividing 100",
		"--mode=supershingle --bands=4":                               "--bands needs a minhash:K sketch",
		"--super-size=3":                                              "go with --mode=supershingle",
		"--bloom-bits=4":                                              "--bloom-bits goes with --verify=bloom",
		"--sketch=min:10 --policy=containment:0.8":                    "a containment policy needs a mod:M sketch",
		"--stopwords=xx":                                              "--stopwords",
		"--template-shingles=auto --url-column=":                      "needs the pages' URLs",
		"--template-shingles=auto --sketch=minhash:10":                "needs a mod:M or min:N sketch",
		"--template-share=0.3":                                        "go with --template-shingles=auto",
		"--extract=visible":                                           "--extract needs --html-column",
		"--policy=resemblance:0.5 --threshold=0.6":                    "give --policy or --threshold, not both",
		"--mode=exact --equivalence=shingle":                          "cannot take --equivalence=shingle",
		"--template-shingles=auto --template-share=1.5":               "template share must be in (0, 1)",
		"--template-shingles=auto --template-min-pages=1":             "at least 2",
	} {
		var r Run
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		r.Register(fs)
		if err := fs.Parse(strings.Fields(args)); err != nil {
			t.Fatalf("%s: %v", args, err)
		}
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		err := r.Resolve(set)
		if err == nil || !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want a usage error saying %q", args, err, want)
		}
	}
	c := Default()
	c.Mode = "nope"
	if err := c.Validate(); err == nil || !errors.Is(err, ErrUsage) {
		t.Errorf("an unknown mode in a Config built in code: %v", err)
	}
}

// TestDeclarations: every setting has a group, help, a default its own
// parser takes, and a manifest key only with a way to write it.
func TestDeclarations(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range Declarations {
		if seen[s.Name] {
			t.Errorf("--%s declared twice", s.Name)
		}
		seen[s.Name] = true
		if s.Help == "" || !slices.Contains(Groups, s.Group) {
			t.Errorf("--%s: no help or an unknown group %q", s.Name, s.Group)
		}
		if (s.Manifest != "") != (s.manifest != nil) {
			t.Errorf("--%s: manifest key %q without its writer, or the other way", s.Name, s.Manifest)
		}
		if s.Default != "" {
			var r Run
			if err := s.set(&r, s.Default); err != nil {
				t.Errorf("--%s: its default %q: %v", s.Name, s.Default, err)
			}
		}
	}
	d := Defaults()
	if d.Policy.Resemblance != 0.5 || d.Sketch.String() != "mod:25" || d.ShingleWords != 10 || d.Mode != ModePairs || d.Extract != "" {
		t.Errorf("defaults: %+v", d.Config)
	}
}

// TestAnchorDocsOfAnOlderOutput: an output whose manifest has no
// anchor_docs was made when shingles over the cap were dropped, so it
// reads as 0 whatever the default; one that records it keeps its value.
func TestAnchorDocsOfAnOlderOutput(t *testing.T) {
	if Default().AnchorDocs != 4 {
		t.Fatalf("default --anchor-docs %d, want 4", Default().AnchorDocs)
	}
	old, err := FromManifest(map[string]string{"max_shingle_docs": "1000"}, nil)
	if err != nil || old.AnchorDocs != 0 {
		t.Fatalf("an older manifest: AnchorDocs %d (%v), want 0", old.AnchorDocs, err)
	}
	rec, err := FromManifest(map[string]string{"anchor_docs": "7"}, nil)
	if err != nil || rec.AnchorDocs != 7 {
		t.Fatalf("a manifest with anchor_docs 7: AnchorDocs %d (%v)", rec.AnchorDocs, err)
	}
}
