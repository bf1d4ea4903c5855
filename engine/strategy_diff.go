package engine

import "context"

// CompareRunsSides is CompareRuns with the two sides named refLabel and
// testLabel in the collapse reasons ("" = fp64 and fp32, as CompareRuns):
// what a sessions diff of a strategy study calls "A" and "B", as the hull
// diff's ParityInput.RefLabel and TestLabel do. For a hull grid it is
// CompareRuns (whose labels the hull diff sets through Compare).
func CompareRunsSides(ctx context.Context, job *Job, ref, test *Run, tol float64, progress func(done int), refLabel, testLabel string) (*Parity, error) {
	if job.Grid.Strategy != nil {
		return compareStrategy(ctx, job, ref, test, tol, progress, refLabel, testLabel, true)
	}
	return CompareRuns(ctx, job, ref, test, tol, progress)
}
