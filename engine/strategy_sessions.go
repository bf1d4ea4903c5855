package engine

// CompareMetrics is the parity report of test against ref from their
// metrics alone (trade counts and returns per combo; no flips, no
// indicator errors), its collapse reasons naming the sides refLabel and
// testLabel ("" = fp64 and fp32): what a sessions diff reports of a
// strategy study whose positions cannot be recomputed (the dataset is
// gone, the modes differ). Each row of a strategy grid (ref.Grid) carries
// its label (ComboParity.Name), as compareStrategy's rows do, so that the
// reasons name its parameters. No divergence is known, so the families
// with memory are judged by Part 1's limits, not as sensitive.
func CompareMetrics(ref, test *Run, tol float64, refLabel, testLabel string) *Parity {
	p := newParity(ref, test, tol)
	if ref.Grid.Strategy != nil {
		for k := range p.Combos {
			p.Combos[k].Name = ref.Grid.Label(p.Combos[k].Index)
		}
	}
	p.setIndicatorErrors(nil)
	p.finishSides(nil, refLabel, testLabel)
	return p
}
