package engine

import "context"

// CompareRunsSides is CompareRuns with the two sides named refLabel and
// testLabel in the collapse reasons ("" = fp64 and fp32, as CompareRuns):
// what a sessions diff of a strategy study calls "A" and "B", as the hull
// diff's ParityInput.RefLabel and TestLabel do. The report is CompareRuns'
// finished again under those names: its totals and reasons recomputed
// from its Combos and its listed flips (the worst MaxFlipsListed, all
// finishSides reads), so every figure but the reasons' wording is
// CompareRuns'.
func CompareRunsSides(ctx context.Context, job *Job, ref, test *Run, tol float64, progress func(done int), refLabel, testLabel string) (*Parity, error) {
	p, err := CompareRuns(ctx, job, ref, test, tol, progress)
	if err != nil || (refLabel == "" && testLabel == "") {
		return p, err
	}
	p.TotalTrades64, p.TotalTrades32, p.ShiftedTrades, p.CombosDiffering = 0, 0, 0, 0
	p.FlipCount, p.NonBorderlineFlips, p.Reasons = 0, 0, nil
	p.finishSides(append([]Flip(nil), p.Flips...), refLabel, testLabel)
	return p, nil
}
