package engine

import "sweepbench/engine/text"

import "fmt"

// HMA3 aliases. HMA3(x, L) reads L only through p = floor(L/2) (SPEC
// "Indicators"), and so does its warm-up W3 = 2*(p-1) ("How many bars are
// enough"): the lengths 2p and 2p+1 give one series, and the combos
// (Lh, 2p) and (Lh, 2p+1) one backtest, bit for bit, in every precision.
// Only an HMA3 range of step 1 holds both lengths of a p (a step of 2 or
// more moves p at every value). Sweep computes each distinct pair once,
// on the grid's Distinct grid, and reports it under every combo asked for.

// HMA3Twin is the other HMA3 length with L's p = floor(L/2): L+1 for an
// even L, L-1 for an odd one. Its series and warm-up are L's.
func HMA3Twin(L int) int { return L ^ 1 }

// Distinct is the grid whose combos Sweep computes for g: g itself unless
// its HMA3 range has step 1 and holds both lengths of some p, in which case
// its HMA3 range is 2*floor(s/2) : 2*floor(e/2) : 2 (s, e the range's
// first and last lengths), one length per p, each combo of g an alias of
// the one with its HMA length and p. Every length stays within [s-1, e], so
// the grid is valid and needs the same bars when g is (the warm-ups are
// those of the lengths they stand for).
func (g Grid) Distinct() Grid {
	r := g.HMA3
	if g.Strategy != nil || r.Step != 1 || r.Len() < 2 {
		return g
	}
	s, e := r.Start/2, r.Last()/2
	if e-s+1 == r.Len() {
		return g // e.g. 7:8: two lengths, two p
	}
	g.HMA3 = Range{Start: 2 * s, Stop: 2 * e, Step: 2}
	return g
}

// Aliases is how many combos of g are aliases: computed once, with their
// twin (the combo of the same HMA length and the other HMA3 length of the
// same p), rather than on their own. A pure function of the grid: 0 unless
// its HMA3 range has step 1, e.g. hma3 6:11 (p 3, 3, 4, 4, 5, 5) has 3 per
// HMA length.
func (g Grid) Aliases() int { return g.Len() - g.Distinct().Len() }

// AliasNote says how many of g's combos are aliases, for a report's grid
// line, between prefix and suffix: e.g. "620 hma3 aliases, computed with
// their twin (L and L+1 share p = floor(L/2))"; "" when there are none.
func AliasNote(g Grid, prefix, suffix string) string {
	a := g.Aliases()
	if a == 0 {
		return ""
	}
	return fmt.Sprintf("%s%s hma3 aliases, computed with their twin (L and L+1 share p = floor(L/2))%s", prefix, text.Thousands(a), suffix)
}

// mergeAliases lets Sweep compute each distinct combo once (Grid.Distinct).
// Tests turn it off to compare with the sweep of every combo.
var mergeAliases = true

// aliasMap maps the combos a kernel computes (the distinct grid, comp) to
// those of the grid asked for: computed combo r stands for the combos
// [users(r)) of grid, one or two consecutive indices (HMA-major order is
// kept, so a range of computed combos stands for a range of the grid's).
type aliasMap struct {
	grid, comp Grid
	same       bool // comp is grid: combo r is r
	n3, c3     int  // HMA3 lengths of grid and comp
	s          int  // grid's first HMA3 length
}

func newAliasMap(g Grid, merge bool) aliasMap {
	m := aliasMap{grid: g, comp: g, same: true}
	if merge {
		m.comp = g.Distinct()
	}
	m.same = m.comp == g
	m.n3, m.c3, m.s = g.HMA3.Len(), m.comp.HMA3.Len(), g.HMA3.Start
	return m
}

// users is the range [lo, hi) of grid combos that computed combo r stands
// for: the combos of its row whose HMA3 length has its p.
func (m *aliasMap) users(r int) (lo, hi int) {
	if m.same {
		return r, r + 1
	}
	row, j := r/m.c3, r%m.c3
	p := m.s/2 + j // comp's j-th length is 2p
	a, b := max(2*p-m.s, 0), min(2*p+1-m.s, m.n3-1)
	return row*m.n3 + a, row*m.n3 + b + 1
}

// computed is the computed combo that grid combo u is one of the users
// of (users' inverse): its row, and the comp length of its HMA3 length's p.
func (m *aliasMap) computed(u int) int {
	if m.same {
		return u
	}
	row, col := u/m.n3, u%m.n3
	return row*m.c3 + (m.s+col)/2 - m.s/2
}

// skipped reports whether every combo computed combo r stands for is done
// (skip); such a combo is not computed. nil skip skips nothing.
func (m *aliasMap) skipped(r int, skip func(int) bool) bool {
	if skip == nil {
		return false
	}
	lo, hi := m.users(r)
	for u := lo; u < hi; u++ {
		if !skip(u) {
			return false
		}
	}
	return true
}
