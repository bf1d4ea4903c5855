// Package sessionstest holds the checks that the suite tests of several
// packages (the command line's, the store's, the workbench's) make alike:
// a suite's saved sessions against the studies run on their own, and a
// suite's aggregate against a computation of its own. Tests only.
package sessionstest

import (
	"context"
	"math"
	"slices"
	"testing"

	"sweepbench/engine"
	"sweepbench/engine/suite"
	"sweepbench/sessions"
)

// CheckAggregate compares g with a computation of its own from the reports
// of datasets ds (reps[d] is dataset d's): per combo, the median and the
// minimum of the fp64 Sharpe over those datasets (median of an even count:
// the mean of the middle two; 1e-12 absolute) and the number whose total
// return is above 0.
func CheckAggregate(t testing.TB, g *suite.Aggregate, reps []*engine.Report, ds []int) {
	t.Helper()
	if g == nil || len(g.Datasets) != len(ds) {
		t.Fatalf("aggregate %v, want one over %d datasets", g, len(ds))
	}
	for i := range g.Grid.Len() {
		var vals []float64
		profit := 0
		for _, d := range ds {
			c := reps[d].Run(engine.FP64).Lookup(i)
			vals = append(vals, c.Metrics.Sharpe)
			if c.TotalReturn > 0 {
				profit++
			}
		}
		slices.Sort(vals)
		med := vals[len(vals)/2]
		if len(vals)%2 == 0 {
			med = (vals[len(vals)/2-1] + vals[len(vals)/2]) / 2
		}
		if math.Abs(g.Median[i]-med) > 1e-12 || g.Worst[i] != vals[0] || g.Profitable[i] != profit {
			t.Fatalf("combo %d: median %v worst %v in profit %d; want %v %v %d", i, g.Median[i], g.Worst[i], g.Profitable[i], med, vals[0], profit)
		}
	}
}

// CheckSuiteSessions checks that every session of list is one dataset of
// suite id over datasets (its Spec.Suite "id D/N ...", N = len(datasets),
// its data datasets[D-1]) and that its saved fp64 and fp32 results (Sharpe,
// total return, trades) equal, combo by combo, those of that dataset's
// study built from spec with reg and run on its own (engine.RunStudy).
func CheckSuiteSessions(t testing.TB, ctx context.Context, st *sessions.Store, list []sessions.Session, spec engine.Spec,
	datasets []string, id string, reg *engine.Registry) {
	t.Helper()
	for _, ss := range list {
		ref, ok, err := suite.ParseSuiteRef(ss.Spec.Suite)
		if err != nil || !ok || ref.ID != id || ref.N != len(datasets) || ss.Spec.Data != datasets[ref.D-1] {
			t.Fatalf("session %d: suite %q, data %q; want %s of %s", ss.ID, ss.Spec.Suite, ss.Spec.Data, id, datasets)
		}
		sp := spec
		sp.Data, sp.Suite = ss.Spec.Data, ss.Spec.Suite
		s, err := sp.Build(reg)
		if err != nil {
			t.Fatal(err)
		}
		want, err := engine.RunStudy(ctx, s, engine.StudyOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := st.Open(ctx, ss.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []engine.Precision{engine.FP64, engine.FP32} {
			for i := range s.Grid.Len() {
				w, g := want.Run(p).Lookup(i), got.Run(p).Lookup(i)
				if g == nil || w.Metrics.Sharpe != g.Metrics.Sharpe || w.TotalReturn != g.TotalReturn || w.Metrics.TotalTrades != g.Metrics.TotalTrades {
					t.Fatalf("dataset %d %s combo %d: saved %+v, want %+v", ref.D, p, i, g, w)
				}
			}
		}
	}
}
