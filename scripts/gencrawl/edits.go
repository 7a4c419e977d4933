package main

import (
	"math"
)

type span struct{ s, e int }

func sentenceSpans(d []item) []span {
	var out []span
	start := 0
	for i, it := range d {
		if endsSentence(it.p) || it.br || i == len(d)-1 {
			out = append(out, span{start, i + 1})
			start = i + 1
		}
	}
	return out
}

func paragraphSpans(d []item) []span {
	var out []span
	start := 0
	for i, it := range d {
		if it.br || i == len(d)-1 {
			out = append(out, span{start, i + 1})
			start = i + 1
		}
	}
	return out
}

// normalize makes the last item end a sentence and carry no paragraph break.
func normalize(d []item) []item {
	if len(d) == 0 {
		return d
	}
	d[len(d)-1].br = false
	if !endsSentence(d[len(d)-1].p) {
		d[len(d)-1].p = "."
	}
	return d
}

func splice(d []item, s, e int, repl []item) []item {
	out := make([]item, 0, len(d)-(e-s)+len(repl))
	out = append(out, d[:s]...)
	out = append(out, repl...)
	return append(out, d[e:]...)
}

func (g *textGen) opSub(d []item, lo, hi int) []item {
	i := lo + g.r.IntN(hi-lo)
	w := g.word()
	for w == d[i].w {
		w = g.word()
	}
	d[i].w = w
	return d
}

func (g *textGen) opIns(d []item, lo, hi int) []item {
	i := lo + g.r.IntN(hi-lo+1)
	return splice(d, i, i, []item{{w: g.word()}})
}

func (g *textGen) opDel(d []item, lo, hi int) []item {
	i := lo + g.r.IntN(hi-lo)
	it := d[i]
	if i > 0 && (it.p != "" || it.br) {
		prev := &d[i-1]
		if prev.p == "" || endsSentence(it.p) {
			prev.p = it.p
		}
		prev.br = prev.br || it.br
	}
	return splice(d, i, i+1, nil)
}

func (g *textGen) opReplaceSentence(d []item) []item {
	ss := sentenceSpans(d)
	sp := ss[g.r.IntN(len(ss))]
	ns := g.sentence(0)
	last := d[sp.e-1]
	if endsSentence(last.p) {
		ns[len(ns)-1].p = last.p
	}
	ns[len(ns)-1].br = last.br
	return splice(d, sp.s, sp.e, ns)
}

func (g *textGen) opInsSentence(d []item) []item {
	ss := sentenceSpans(d)
	k := g.r.IntN(len(ss) + 1)
	pos := 0
	if k > 0 {
		pos = ss[k-1].e
	}
	return splice(d, pos, pos, g.sentence(0))
}

func (g *textGen) opDelSentence(d []item) []item {
	ss := sentenceSpans(d)
	if len(ss) < 3 {
		return d
	}
	sp := ss[g.r.IntN(len(ss))]
	if d[sp.e-1].br && sp.s > 0 {
		d[sp.s-1].br = true
	}
	return splice(d, sp.s, sp.e, nil)
}

func (g *textGen) opDelParagraph(d []item) []item {
	ps := paragraphSpans(d)
	if len(ps) < 2 {
		return g.opDelSentence(d)
	}
	sp := ps[g.r.IntN(len(ps))]
	return splice(d, sp.s, sp.e, nil)
}

func (g *textGen) opInsParagraph(d []item) []item {
	ps := paragraphSpans(d)
	k := g.r.IntN(len(ps) + 1)
	np := g.paragraph()
	if k == len(ps) {
		d[len(d)-1].br = true
		return splice(d, len(d), len(d), np)
	}
	pos := 0
	if k > 0 {
		pos = ps[k-1].e
	}
	return splice(d, pos, pos, np)
}

func (g *textGen) opSwapParagraphs(d []item) []item {
	ps := paragraphSpans(d)
	if len(ps) < 2 {
		return g.opReplaceSentence(d)
	}
	k := g.r.IntN(len(ps) - 1)
	a := clone(d[ps[k].s:ps[k].e])
	b := clone(d[ps[k+1].s:ps[k+1].e])
	a[len(a)-1].br = true
	b[len(b)-1].br = true
	out := splice(d, ps[k].s, ps[k+1].e, append(b, a...))
	return out
}

func (g *textGen) opEdge(d []item) []item {
	n := len(d)
	w := ShingleSize - 1
	if w > n {
		w = n
	}
	lo, hi := 0, w
	if g.r.IntN(2) == 0 {
		lo, hi = n-w, n
	}
	switch g.r.IntN(3) {
	case 0:
		return g.opSub(d, lo, hi)
	case 1:
		return g.opIns(d, lo, hi)
	default:
		return g.opDel(d, lo, hi)
	}
}

type weightedOp struct {
	w  int
	op func([]item) []item
}

// randomOp applies one random edit; gap (current - target resemblance)
// selects coarse edits when far from the target and fine ones when close.
func (g *textGen) randomOp(d []item, gap float64) []item {
	n := len(d)
	sub := func(d []item) []item { return g.opSub(d, 0, n) }
	ins := func(d []item) []item { return g.opIns(d, 0, n) }
	del := func(d []item) []item { return g.opDel(d, 0, n) }
	var ops []weightedOp
	switch {
	case gap > 0.25:
		ops = []weightedOp{{3, g.opReplaceSentence}, {1, g.opDelParagraph}, {1, g.opInsParagraph},
			{1, g.opSwapParagraphs}, {2, g.opDelSentence}, {2, g.opInsSentence}, {2, sub}}
	case gap > 0.08:
		ops = []weightedOp{{4, sub}, {2, ins}, {2, del}, {2, g.opReplaceSentence}, {1, g.opInsSentence},
			{1, g.opDelSentence}, {1, g.opSwapParagraphs}}
	default:
		ops = []weightedOp{{3, sub}, {2, ins}, {2, del}, {3, g.opEdge}}
	}
	total := 0
	for _, o := range ops {
		total += o.w
	}
	x := g.r.IntN(total)
	for _, o := range ops {
		if x < o.w {
			return normalize(o.op(d))
		}
		x -= o.w
	}
	panic("unreachable")
}

// makeNear edits a copy of base until the exact w-shingle resemblance between
// wrap(base) and wrap(result) is within aim of target. wrap maps the edited
// items to the full token sequence that is compared (e.g. adding a fixed
// header). It returns ok=false if it could not converge.
func (g *textGen) makeNear(base []item, wrap func([]item) []string, target, aim float64) ([]item, float64, bool) {
	baseToks := wrap(base)
	bh := hashShingles(baseToks)
	cur := clone(base)
	curJ := 1.0
	minLen, maxLen := len(base)*6/10, len(base)*16/10
	for iter := 0; iter < 5000; iter++ {
		if math.Abs(curJ-target) <= aim {
			m := Compare(ShingleSet(baseToks), ShingleSet(wrap(cur)))
			if math.Abs(m.Resemblance-target) <= aim {
				return cur, m.Resemblance, true
			}
		}
		cand := g.randomOp(clone(cur), curJ-target)
		if len(cand) < minLen || len(cand) > maxLen || len(cand) < 2*ShingleSize {
			continue
		}
		j := hashJaccard(bh, hashShingles(wrap(cand)))
		if j < target-aim {
			continue
		}
		cur, curJ = cand, j
	}
	return nil, 0, false
}

// excerpt returns whole consecutive sentences of long with between minW and
// maxW words, or nil.
func (g *textGen) excerpt(long []item, minW, maxW int) []item {
	ss := sentenceSpans(long)
	for try := 0; try < 200; try++ {
		k := g.r.IntN(len(ss))
		want := minW + g.r.IntN(maxW-minW+1)
		e, n := k, 0
		for e < len(ss) && n < want {
			n += ss[e].e - ss[e].s
			e++
		}
		if n >= minW && n <= maxW {
			return normalize(clone(long[ss[k].s:ss[e-1].e]))
		}
	}
	return nil
}
