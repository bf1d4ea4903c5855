package robust

import (
	"cmp"
	"context"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// pboTile is the number of combos a worker tabulates at once: with the
// Sharpe kernels' 2 fields and S = 16, 2 x 2 x 256 x 32 x 8 B = 256 KiB of
// tables, an L2's worth, reused by all 12,870 splits.
const pboTile = 32

// boundMargin widens the Sharpe key bounds (relative) beyond anything
// rounding can do to a key: a one-pass variance that the zero floor lets
// through is off by at most ~4e-16 / 1e-10 relative.
const boundMargin = 1e-5

// pboPlan is what both passes share.
type pboPlan struct {
	bs         *BlockStats
	obj        Objective
	sets       []Mask
	fields     []field // the key's fields, in keyFields order (the Sharpe kernels: Sum, SumSq)
	lowBlocks  int     // h = S/2: blocks 0..h-1 make the low half
	highBlocks int
	tiles      int
	// order visits the sets grouped by their low half, so that a low-half
	// row stays in L1 while the high-half rows stream from L2.
	order []int32
	// perm maps a tile position to its combo: tile t holds combos
	// perm[t*pboTile : (t+1)*pboTile]. The identity, except for the Sharpe
	// kernels, which sort the combos by their key's upper bound, best
	// first, so that pass 1 meets the likely winners early.
	perm []int32
	sel  []bool // selectable, by tile position (nil: all)

	// The Sharpe kernels run when the objective is the Sharpe ratio and
	// every combo has the same bars per block (as the blocks of one study
	// always do); nLo/nHi are the bar counts of each half's subsets, summed
	// as the tables sum. tileUB/tileLB bound the (sign-adjusted) keys of a
	// tile's combos over any S/2 blocks.
	sharpe         bool
	sign           float64 // +1 maximise, -1 minimise
	nLo, nHi       []float64
	tileUB, tileLB []float64
	// floorFree marks the tiles none of whose combos can reach the
	// zero-variance floor over any S/2 blocks: their kernel skips the test.
	floorFree []bool
}

func newPBOPlan(bs *BlockStats, obj Objective, sel []bool, sets []Mask, workers int) *pboPlan {
	h := bs.Blocks / 2
	p := &pboPlan{
		bs: bs, obj: obj, sets: sets, fields: obj.Metric.keyFields(),
		lowBlocks: h, highBlocks: bs.Blocks - h,
		tiles: (bs.Combos + pboTile - 1) / pboTile,
		sign:  1,
	}
	if obj.Minimise {
		p.sign = -1
	}
	p.order = make([]int32, len(sets))
	for k := range p.order {
		p.order[k] = int32(k)
	}
	low := func(k int32) Mask { return sets[k] & AllBlocks(h) }
	slices.SortStableFunc(p.order, func(a, b int32) int { return cmp.Compare(low(a), low(b)) })
	p.perm = make([]int32, bs.Combos)
	for c := range p.perm {
		p.perm[c] = int32(c)
	}
	if obj.Metric == MetricSharpe && uniformBars(bs) {
		p.sharpe = true
		p.fields = []field{fSum, fSumSq}
		p.nLo = subsetSums(bs.Bars[:bs.Blocks], 0, h)
		p.nHi = subsetSums(bs.Bars[:bs.Blocks], h, bs.Blocks-h)
		lb, ub, floorFree := sharpeKeyBounds(bs, p.sign, p.workers(workers))
		slices.SortStableFunc(p.perm, func(a, b int32) int { return cmp.Compare(ub[b], ub[a]) })
		p.tileUB = make([]float64, p.tiles)
		p.tileLB = make([]float64, p.tiles)
		p.floorFree = make([]bool, p.tiles)
		for t := range p.tiles {
			tile := p.perm[t*pboTile : min((t+1)*pboTile, bs.Combos)]
			p.tileUB[t], p.tileLB[t], p.floorFree[t] = ub[tile[0]], math.Inf(1), true
			for _, c := range tile {
				p.tileLB[t] = math.Min(p.tileLB[t], lb[c])
				p.floorFree[t] = p.floorFree[t] && floorFree[c]
			}
		}
	}
	if sel != nil {
		p.sel = make([]bool, bs.Combos)
		for i, c := range p.perm {
			p.sel[i] = sel[c]
		}
	}
	return p
}

// uniformBars reports whether every combo has combo 0's bar count in every
// block.
func uniformBars(bs *BlockStats) bool {
	s := bs.Blocks
	for i := s; i < len(bs.Bars); i++ {
		if bs.Bars[i] != bs.Bars[i%s] {
			return false
		}
	}
	return true
}

// subsetSums returns, for every subset m of the nb blocks from first, the
// sum of their counts as float64, added as fill adds the tables.
func subsetSums(bars []int32, first, nb int) []float64 {
	out := make([]float64, 1<<nb)
	for m := 1; m < 1<<nb; m++ {
		top := bits.Len32(uint32(m)) - 1
		out[m] = out[m&^(1<<top)] + float64(bars[first+top])
	}
	return out
}

// sharpeKeyBounds bounds, per combo, its sign-adjusted Sharpe key s|s|/d
// over any S/2 of the blocks (uniform bar counts). With s_b the block sums
// (times sign), n_b the bar counts, W_b = q_b - s_b^2/n_b >= 0 the blocks'
// own squared deviations: over a set X, s <= P, the sum of the S/2 largest
// positive s_b, -s <= Q, the same for the negative ones; and by
// Cauchy-Schwarz, (sum s_b)^2 <= n sum s_b^2/n_b, so d = n q - s^2 >=
// n sum_X W_b >= nmin * Wmin (the S/2 smallest counts and W_b). Hence
// -Q^2/(nmin Wmin) <= key <= P^2/(nmin Wmin), and 0 (the zero-variance
// key) lies in between; W_b is lowered and the bounds widened by
// boundMargin against rounding. A zero Wmin gives infinite bounds (no
// pruning for that combo).
//
// floorFree[c] reports that combo c's variance cannot reach the zero floor
// (sharpeFrac) over any S/2 blocks: nmin Wmin > 2 varFloor nmax Qmax, with
// nmax and Qmax the S/2 largest counts and sums of squares (n q <= nmax
// Qmax), twice the floor leaving room for the rounding of d.
func sharpeKeyBounds(bs *BlockStats, sign float64, workers int) (lb, ub []float64, floorFree []bool) {
	s, h := bs.Blocks, bs.Blocks/2
	ns := make([]float64, s)
	for b := range ns {
		ns[b] = float64(bs.Bars[b])
	}
	slices.Sort(ns)
	var nmin, nmax float64
	for k := range h {
		nmin += ns[k]
		nmax += ns[s-1-k]
	}
	lb, ub, floorFree = make([]float64, bs.Combos), make([]float64, bs.Combos), make([]bool, bs.Combos)
	var wg sync.WaitGroup
	chunk := (bs.Combos + workers - 1) / workers
	for c0 := 0; c0 < bs.Combos; c0 += chunk {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sums := make([]float64, s)
			ws := make([]float64, s)
			qs := make([]float64, s)
			for c := c0; c < min(c0+chunk, bs.Combos); c++ {
				for b := range s {
					i := c*s + b
					sb := sign * bs.Sum[i]
					sums[b] = sb
					ws[b] = math.Max(0, bs.SumSq[i]-sb*sb/float64(bs.Bars[i])-1e-14*bs.SumSq[i])
					qs[b] = bs.SumSq[i]
				}
				slices.Sort(sums)
				slices.Sort(ws)
				slices.Sort(qs)
				var pos, neg, wmin, qmax float64
				for k := range h {
					pos += math.Max(0, sums[s-1-k])
					neg += math.Max(0, -sums[k])
					wmin += ws[k]
					qmax += qs[s-1-k]
				}
				den := nmin * wmin
				ub[c] = bound(pos, den) * (1 + boundMargin)
				lb[c] = -bound(neg, den) * (1 + boundMargin)
				floorFree[c] = den > 2*varFloor*nmax*qmax
			}
		}()
	}
	wg.Wait()
	return lb, ub, floorFree
}

// bound is x^2/den for x > 0 (+Inf when den is 0), 0 otherwise.
func bound(x, den float64) float64 {
	switch {
	case !(x > 0):
		return 0
	case !(den > 0):
		return math.Inf(1)
	}
	return x * x / den
}

// tileTables holds, for one tile, the subset sums of each key field:
// lo[f][m*pboTile + j] is field f of the tile's combo j summed over the
// blocks of low-half mask m (ascending, from 0), hi likewise over high-half
// mask m (bit i = block h+i).
type tileTables struct {
	tile, c0, width int
	lo, hi          [maxKeyFields][]float64
	gather          []float64 // [b*pboTile + j]: one field of combo j, block b
	keys            [pboTile]float64
}

func (p *pboPlan) newTables() *tileTables {
	t := &tileTables{gather: make([]float64, p.bs.Blocks*pboTile)}
	for f := range p.fields {
		t.lo[f] = make([]float64, (1<<p.lowBlocks)*pboTile)
		t.hi[f] = make([]float64, (1<<p.highBlocks)*pboTile)
	}
	return t
}

// fill tabulates tile number tile: gathers each field's blocks for the
// tile's combos, then builds each half's subset sums, row m from row
// m-without-its-highest-block plus that block (so each row is the blocks'
// sum in ascending order from 0, as Union adds them).
func (p *pboPlan) fill(t *tileTables, tile int) {
	bs, s := p.bs, p.bs.Blocks
	t.tile, t.c0 = tile, tile*pboTile
	t.width = min(pboTile, bs.Combos-t.c0)
	w := t.width
	for fi, f := range p.fields {
		fl, in := bs.fieldSlice(f)
		g := t.gather
		sign := 1.0
		if p.sharpe && f == fSum {
			sign = p.sign // the Sharpe kernels read sign-adjusted sums
		}
		for j := range w {
			base := int(p.perm[t.c0+j]) * s
			for b := range s {
				if fl != nil {
					g[b*pboTile+j] = sign * fl[base+b]
				} else {
					g[b*pboTile+j] = float64(in[base+b])
				}
			}
		}
		for half, tab := range [2][]float64{t.lo[fi], t.hi[fi]} {
			first, nb := 0, p.lowBlocks
			if half == 1 {
				first, nb = p.lowBlocks, p.highBlocks
			}
			clear(tab[:w])
			for m := 1; m < 1<<nb; m++ {
				top := bits.Len32(uint32(m)) - 1 // highest block of m
				prev := tab[(m&^(1<<top))*pboTile:][:w]
				row := tab[m*pboTile:][:w]
				x := g[(first+top)*pboTile:][:w]
				for j := range row {
					row[j] = prev[j] + x[j]
				}
			}
		}
	}
}

// rows returns field f's low and high rows for set m.
func (p *pboPlan) rows(t *tileTables, f int, m Mask) ([]float64, []float64) {
	lm := int(m & Mask(1<<p.lowBlocks-1))
	hm := int(m >> uint(p.lowBlocks))
	return t.lo[f][lm*pboTile:][:t.width], t.hi[f][hm*pboTile:][:t.width]
}

// barsOver is the bar count of set m (the Sharpe kernels' shared n).
func (p *pboPlan) barsOver(m Mask) float64 {
	return p.nLo[m&Mask(1<<p.lowBlocks-1)] + p.nHi[m>>uint(p.lowBlocks)]
}

// keysFor writes the tile's keys for block set m into t.keys[:t.width]
// (every metric; the Sharpe kernels do not use it).
func (p *pboPlan) keysFor(t *tileTables, m Mask) []float64 {
	keys := t.keys[:t.width]
	switch p.obj.Metric {
	case MetricTotalReturn, MetricTotalTrades:
		a0, b0 := p.rows(t, 0, m)
		for j := range keys {
			keys[j] = a0[j] + b0[j]
		}
	case MetricCAGR, MetricMean, MetricWinRate:
		a0, b0 := p.rows(t, 0, m)
		a1, b1 := p.rows(t, 1, m)
		for j := range keys {
			keys[j] = keyRatio(a0[j]+b0[j], a1[j]+b1[j])
		}
	case MetricSharpe:
		a0, b0 := p.rows(t, 0, m)
		a1, b1 := p.rows(t, 1, m)
		a2, b2 := p.rows(t, 2, m)
		for j := range keys {
			keys[j] = keySharpe(a0[j]+b0[j], a1[j]+b1[j], a2[j]+b2[j])
		}
	case MetricSortino:
		a0, b0 := p.rows(t, 0, m)
		a1, b1 := p.rows(t, 1, m)
		a2, b2 := p.rows(t, 2, m)
		for j := range keys {
			keys[j] = keySortino(a0[j]+b0[j], a1[j]+b1[j], a2[j]+b2[j])
		}
	}
	if p.obj.Minimise {
		for j := range keys {
			keys[j] = -keys[j]
		}
	}
	return keys
}

// workers resolves the worker count.
func (p *pboPlan) workers(n int) int {
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	return max(1, min(n, p.tiles))
}

// forTiles runs body(w, tables) over every tile on workers goroutines,
// each with its own tables, tiles in ascending order (the Sharpe kernels'
// best bounds first); it stops early when ctx is done.
func (p *pboPlan) forTiles(ctx context.Context, workers int, body func(w int, t *tileTables)) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := p.newTables()
			for ctx.Err() == nil {
				tile := int(next.Add(1) - 1)
				if tile >= p.tiles {
					return
				}
				p.fill(t, tile)
				body(w, t)
			}
		}()
	}
	wg.Wait()
	return ctx.Err()
}

// bestPerSet is pass 1: for every set, the selectable combo with the
// largest key over it (ties: the lowest combo index).
func (p *pboPlan) bestPerSet(ctx context.Context, workers int) ([]int32, error) {
	workers = p.workers(workers)
	nsets := len(p.sets)
	// Each worker's best per set: its key (for the Sharpe key also as the
	// fraction num/den it compares by cross-multiplying, as the device does)
	// and its combo.
	bestKey := make([][]float64, workers)
	bestNum := make([][]float64, workers)
	bestDen := make([][]float64, workers)
	bestIdx := make([][]int32, workers)
	for w := range bestKey {
		bestKey[w] = make([]float64, nsets)
		bestNum[w] = make([]float64, nsets)
		bestDen[w] = make([]float64, nsets)
		bestIdx[w] = make([]int32, nsets)
		for k := range bestIdx[w] {
			bestKey[w][k], bestNum[w][k], bestDen[w][k], bestIdx[w][k] = math.Inf(-1), 0, 1, -1
		}
	}
	better := p.betterBest
	err := p.forTiles(ctx, workers, func(w int, t *tileTables) {
		bk, bn, bd, bi := bestKey[w], bestNum[w], bestDen[w], bestIdx[w]
		var sel []bool
		if p.sel != nil {
			sel = p.sel[t.c0 : t.c0+t.width]
		}
		for _, k := range p.order {
			var best, num, den float64
			at := -1
			if p.sharpe {
				// Every key of the tile is <= its bound: below this
				// worker's best so far (<= the overall best), none can
				// win or tie.
				if bi[k] >= 0 && p.tileUB[t.tile] < bk[k] {
					continue
				}
				num, den, at = p.bestSharpe(t, p.sets[k], sel)
				best = num / den
			} else {
				best, at = maxKey(p.keysFor(t, p.sets[k]), sel)
			}
			if at < 0 {
				continue
			}
			c := p.perm[t.c0+at]
			if better(best, num, den, c, bk[k], bn[k], bd[k], bi[k]) {
				bk[k], bn[k], bd[k], bi[k] = best, num, den, c
			}
		}
	})
	if err != nil {
		return nil, err
	}
	key, num, den, idx := bestKey[0], bestNum[0], bestDen[0], bestIdx[0]
	for w := 1; w < workers; w++ {
		for k := range nsets {
			if better(bestKey[w][k], bestNum[w][k], bestDen[w][k], bestIdx[w][k], key[k], num[k], den[k], idx[k]) {
				key[k], num[k], den[k], idx[k] = bestKey[w][k], bestNum[w][k], bestDen[w][k], bestIdx[w][k]
			}
		}
	}
	return idx, nil
}

// betterBest reports whether pass 1's candidate a (key ka, fraction
// na/da, combo ca) beats b: no combo (-1) never does and anything beats
// it; the Sharpe key compared as fractions, any other as keys; ties to the
// lower combo. Tiles arrive in any order and are merged in any order: the
// result does not depend on scheduling. (A worker that met no tile of a
// set still holds its starting entry, -Inf, 0/1 and combo -1: it must
// lose to every real one, a negative Sharpe ratio's fraction included.)
func (p *pboPlan) betterBest(ka, na, da float64, ca int32, kb, nb, db float64, cb int32) bool {
	switch {
	case ca < 0:
		return false
	case cb < 0:
		return true
	case p.sharpe:
		x, y := float64(na*db), float64(nb*da)
		return x > y || x == y && ca < cb
	}
	return ka > kb || ka == kb && ca < cb
}

// rankPerSet is pass 2: for every set k, how many combos' keys over it are
// below the key of combo chosen[k] over it, and how many equal it (that
// combo included).
func (p *pboPlan) rankPerSet(ctx context.Context, chosen []int32, workers int) ([]int32, []int32, error) {
	workers = p.workers(workers)
	nsets := len(p.sets)
	// What each set compares with, computed through Union: the same sums
	// as the tables hold, so the chosen combo equals itself.
	type threshold struct{ key, num, d float64 }
	thr := make([]threshold, nsets)
	for k, m := range p.sets {
		u := p.bs.Union(int(chosen[k]), m)
		if p.sharpe {
			thr[k].num, thr[k].d = sharpeFrac(float64(p.sign*u.Sum), u.SumSq, float64(u.Bars))
			thr[k].key = thr[k].num / thr[k].d
		} else {
			thr[k].key = p.obj.key(u)
		}
	}
	less := make([][]int32, workers)
	equal := make([][]int32, workers)
	for w := range less {
		less[w] = make([]int32, nsets)
		equal[w] = make([]int32, nsets)
	}
	err := p.forTiles(ctx, workers, func(w int, t *tileTables) {
		lw, ew := less[w], equal[w]
		for _, k := range p.order {
			th := &thr[k]
			var lt, eq int32
			switch {
			case !p.sharpe:
				lt, eq = countKeys(p.keysFor(t, p.sets[k]), th.key)
			case p.tileUB[t.tile]*(1+1e-12) < th.key-math.Abs(th.key)*1e-12:
				lt = int32(t.width) // every key of the tile is below
			case p.tileLB[t.tile]*(1+1e-12) > th.key+math.Abs(th.key)*1e-12:
				// every key of the tile is above
			default:
				lt, eq = p.countSharpe(t, p.sets[k], th.num, th.d)
			}
			lw[k] += lt
			ew[k] += eq
		}
	})
	if err != nil {
		return nil, nil, err
	}
	for w := 1; w < workers; w++ {
		for k := range nsets {
			less[0][k] += less[w][k]
			equal[0][k] += equal[w][k]
		}
	}
	return less[0], equal[0], nil
}

// maxKey is the index of the largest key among the selectable ones (sel
// nil: all; ties: the first) and that key; -1 when none is selectable.
func maxKey(keys []float64, sel []bool) (float64, int) {
	best, at := math.Inf(-1), -1
	for j, v := range keys {
		if (sel == nil || sel[j]) && (at < 0 || v > best) {
			best, at = v, j
		}
	}
	return best, at
}

// countKeys counts the keys below th and equal to it.
func countKeys(keys []float64, th float64) (lt, eq int32) {
	var le int32
	for _, v := range keys {
		lt += b2i(v < th)
		le += b2i(v <= th)
	}
	return lt, le - lt
}

// bestSharpe is pass 1's kernel for the Sharpe key: the tile's best
// selectable combo over set m and its key (sign-adjusted: larger is better;
// the key s|s|/d is odd in the union's sum s, so minimising negates s).
// The tables hold sign-adjusted sums. Keys are compared as fractions
// (sharpeFrac), num*dBest > numBest*d, so no
// combo costs a division; the winner's key is its num/d, what keySharpe
// gives. Equal keys go to the lower combo index (the tile is in bound
// order, not index order).
func (p *pboPlan) bestSharpe(t *tileTables, m Mask, sel []bool) (num, den float64, at int) {
	sa, sb := p.rows(t, 0, m)
	qa, qb := p.rows(t, 1, m)
	n := p.barsOver(m)
	combo := p.perm[t.c0 : t.c0+t.width]
	nb, db := math.Inf(-1), 1.0 // any finite key beats -Inf/1 (so combo[at] is read only when at >= 0)
	at = -1
	for j := range sa {
		num, d := sharpeFrac(sa[j]+sb[j], qa[j]+qb[j], n)
		x, y := float64(num*db), float64(nb*d)
		if (x > y || x == y && combo[j] < combo[at]) && (sel == nil || sel[j]) {
			nb, db, at = num, d, j
		}
	}
	return nb, db, at
}

// countSharpe is pass 2's kernel for the Sharpe key: how many of the
// tile's combos have a (sign-adjusted) key over set m below the chosen
// combo's, given as the fraction numSel/dSel (sharpeFrac of its sums over
// m), and how many equal to it; compared as num*dSel < numSel*d, exact in
// real arithmetic and, for equal sums (the chosen combo itself, a
// duplicate), exactly equal in floating point too.
func (p *pboPlan) countSharpe(t *tileTables, m Mask, numSel, dSel float64) (lt, eq int32) {
	sa, sb := p.rows(t, 0, m)
	qa, qb := p.rows(t, 1, m)
	n := p.barsOver(m)
	var le int32
	if p.floorFree[t.tile] {
		// sharpeFrac without the floor test, which cannot fire here, and
		// without |s|: against a threshold >= 0 a negative sum is below;
		// against one < 0 only a negative sum can be, comparing s^2 d*
		// with |num*| d. (The same products as num*dSel vs numSel*d; they
		// differ only for a nonzero s whose square underflows to 0.)
		if numSel >= 0 {
			for j := range sa {
				s := sa[j] + sb[j]
				ss := float64(s * s)
				d := float64(n*(qa[j]+qb[j])) - ss
				a, c := float64(ss*dSel), float64(numSel*d)
				neg := b2i(s < 0)
				lt += neg | b2i(a < c)
				le += neg | b2i(a <= c)
			}
			return lt, le - lt
		}
		an := -numSel
		for j := range sa {
			s := sa[j] + sb[j]
			ss := float64(s * s)
			d := float64(n*(qa[j]+qb[j])) - ss
			a, c := float64(ss*dSel), float64(an*d)
			neg := b2i(s < 0)
			lt += neg & b2i(a > c)
			le += neg & b2i(a >= c)
		}
		return lt, le - lt
	}
	for j := range sa {
		num, d := sharpeFrac(sa[j]+sb[j], qa[j]+qb[j], n)
		x, y := float64(num*dSel), float64(numSel*d)
		lt += b2i(x < y)
		le += b2i(x <= y)
	}
	return lt, le - lt
}

func b2i(b bool) int32 {
	if b {
		return 1
	}
	return 0
}
