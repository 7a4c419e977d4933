package synth

import (
	"math/rand/v2"
	"regexp"
	"slices"
	"testing"
	"unicode/utf8"
)

func TestWords(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	w := ASCII.Words(r, 2000, func(r *rand.Rand) int { return 1 + r.IntN(4) })
	seen := map[string]bool{}
	for _, x := range w {
		if n := utf8.RuneCountInString(x); n < 2 || n > 14 || seen[x] {
			t.Fatalf("word %q: %d runes, seen %v", x, n, seen[x])
		}
		seen[x] = true
	}
	if len(w) != 2000 {
		t.Fatalf("%d words, want 2000", len(w))
	}
	sorted := slices.Clone(w)
	ByLength(sorted)
	for i := 1; i < len(sorted); i++ {
		if len(sorted[i-1]) > len(sorted[i]) {
			t.Fatalf("ByLength: %q before %q", sorted[i-1], sorted[i])
		}
	}
}

func TestAppendUUID(t *testing.T) {
	re := regexp.MustCompile(`^<urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}>$`)
	r := rand.New(rand.NewPCG(3, 4))
	for range 1000 {
		if id := string(AppendUUID(nil, r)); !re.MatchString(id) {
			t.Fatalf("%q is not a version 4 UUID", id)
		}
	}
}

func TestLogNormal(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 1000 {
		if x := LogNormal(r, 400, 2, 30, 5000); x < 30 || x > 5000 {
			t.Fatalf("LogNormal: %d out of [30, 5000]", x)
		}
		if x := LogNormalAtLeast(r, 400, 0.5, 250, 3000); x < 250 || x > 3000 {
			t.Fatalf("LogNormalAtLeast: %d out of [250, 3000]", x)
		}
	}
}
