package sessions_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"sweepbench/engine"
	"sweepbench/engine/suite"
	"sweepbench/sessions"
	"sweepbench/sessions/sessionstest"
)

// TestSuiteOf: the sessions of a suite are found by its id, the newest
// of each dataset, a removed one reads as missing; Aggregate gives, per
// combo, the median and the minimum Sharpe over the datasets the store
// has and the number in profit, checked against a computation of its own
// from each dataset's report.
func TestSuiteOf(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, "")
	const id = "abc123def456"
	heads := []int{1500, 2500, 3500}
	reps := make([]*engine.Report, len(heads))
	ids := make([]int64, len(heads))
	run := func(d int) {
		st := newStudy(t, btcusdt(t, heads[d]), "10:30:10", "12:36:12")
		st.Spec.Suite = suite.SuiteRef{ID: id, D: d + 1, N: len(heads)}.String()
		reps[d], ids[d] = runSaved(t, s, st, origin(heads[d]), "")
	}
	for d := range heads {
		run(d)
	}
	runSaved(t, s, newStudy(t, btcusdt(t, 1000), "10:30:10", "12:36:12"), origin(1000), "") // no suite
	run(1)                                                                                  // dataset 2 again: the newest counts

	su, err := s.SuiteOf(ctx, suite.SuiteRef{ID: id, D: 1, N: 3})
	if err != nil {
		t.Fatal(err)
	}
	for d, ss := range su.Members {
		if ss == nil || ss.ID != ids[d] {
			t.Fatalf("dataset %d: session %v, want %d", d+1, ss, ids[d])
		}
	}
	check := func(agg *suite.Aggregate, ds []int) {
		t.Helper()
		sessionstest.CheckAggregate(t, agg, reps, ds)
	}
	agg, err := s.Aggregate(ctx, su)
	if err != nil {
		t.Fatal(err)
	}
	check(agg, []int{0, 1, 2})

	if err := s.Delete(ctx, ids[2], false); err != nil {
		t.Fatal(err)
	}
	su, err = s.SuiteOf(ctx, suite.SuiteRef{ID: id, D: 1, N: 3})
	if err != nil {
		t.Fatal(err)
	}
	if m := su.Missing(); !slices.Equal(m, []int{3}) || su.Present() != 2 {
		t.Fatalf("missing %v, present %d", m, su.Present())
	}
	agg, err = s.Aggregate(ctx, su)
	if err != nil {
		t.Fatal(err)
	}
	check(agg, []int{0, 1})

	none, err := s.SuiteOf(ctx, suite.SuiteRef{ID: "000000000000", D: 1, N: 2})
	if err != nil || none.Present() != 0 {
		t.Fatalf("an unknown suite: %v, %v", none, err)
	}
	if _, err := s.Aggregate(ctx, none); !errors.Is(err, sessions.ErrNoSuiteData) {
		t.Fatalf("the aggregate of no session: %v", err)
	}
}

// TestSuiteOfRuns: two runs of one suite (the same id: the same spec and
// datasets, run again or merged from shards) are told apart by their run:
// each ref finds its own run's sessions, never the other's, whichever was
// saved last; refs saved before runs were recorded find only those.
func TestSuiteOfRuns(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, "")
	const id = "abc123def456"
	save := func(run string, d int) int64 {
		st := newStudy(t, btcusdt(t, 1500+1000*d), "10:30:10", "12:36:12")
		st.Spec.Suite = suite.SuiteRef{ID: id, D: d + 1, N: 2, Run: run}.String()
		_, sid := runSaved(t, s, st, origin(1500+1000*d), "")
		return sid
	}
	old := []int64{save("", 0), save("", 1)}
	a := []int64{save("r0000000a", 0), save("r0000000a", 1)}
	b := []int64{save("r0000000b", 0)} // the second run, only its first dataset so far
	for _, tc := range []struct {
		run  string
		want []int64 // 0: none
	}{{"r0000000a", a}, {"r0000000b", []int64{b[0], 0}}, {"", old}} {
		su, err := s.SuiteOf(ctx, suite.SuiteRef{ID: id, D: 1, N: 2, Run: tc.run})
		if err != nil {
			t.Fatal(err)
		}
		for d, ss := range su.Members {
			got := int64(0)
			if ss != nil {
				got = ss.ID
			}
			if got != tc.want[d] {
				t.Errorf("run %q, dataset %d: session %d, want %d", tc.run, d+1, got, tc.want[d])
			}
		}
	}
}
