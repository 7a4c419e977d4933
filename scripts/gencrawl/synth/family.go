package synth

import (
	"math/rand/v2"
	"strings"
)

// SiteWords is how many words of its own site's header, and again of its
// footer, each copy of a syndicated family carries.
const SiteWords = 25

// FamilyCopy is one member of a syndicated family (issue 55): article's
// words wrapped in a header and a footer of SiteWords words each, drawn
// with pick as the copy's own site would frame them (none when site is
// false), and edited word by word at rate, deletions, substitutions and
// insertions in equal parts (the substitute or inserted word drawn with
// pick).
//
// It draws from r in a fixed order: header, one draw per article word
// plus one per substitute or insertion, footer.
func FamilyCopy(r *rand.Rand, article []string, rate float64, site bool, pick func(*rand.Rand) string) string {
	text := make([]string, 0, len(article)+2*SiteWords+8)
	frame := func() {
		for range SiteWords {
			text = append(text, pick(r))
		}
	}
	if site {
		frame()
	}
	for _, w := range article {
		switch x := r.Float64(); {
		case x < rate/3: // deleted
		case x < 2*rate/3:
			text = append(text, pick(r))
		case x < rate:
			text = append(text, w, pick(r))
		default:
			text = append(text, w)
		}
	}
	if site {
		frame()
	}
	return strings.Join(text, " ")
}
