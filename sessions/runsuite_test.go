package sessions_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"sweepbench/engine"
	"sweepbench/engine/suite"
	"sweepbench/reference"
	"sweepbench/sessions"
)

// TestRunSuiteStopsOnADataset: a dataset that cannot be built stops the
// suite with a *SuiteError naming it; the datasets before it are run,
// saved as sessions labelled "ID D/N" and returned, the aggregate is not
// (the suite is not whole), and the callbacks are told of each in order.
func TestRunSuiteStopsOnADataset(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, filepath.Join(t.TempDir(), "s.db"))
	reg := &engine.Registry{}
	reg.Register(reference.New())
	spec := engine.DefaultSpec()
	spec.Head, spec.HMA, spec.HMA3, spec.Backend = 1000, "10:20:10", "12:24:12", "reference"
	missing := filepath.Join(t.TempDir(), "missing.csv")
	datasets := []string{"embedded:btcusdt-1m", "embedded:filusdt-1m", missing}
	var starting, ran []int
	run, err := sessions.RunSuite(ctx, st, spec, datasets, sessions.SuiteOptions{
		Build: func(ctx context.Context, _ int, sp engine.Spec) (*engine.Study, error) {
			return sp.BuildContext(ctx, reg)
		},
		Starting: func(d, n int, _ string) { starting = append(starting, d) },
		Ran: func(d int, _ *engine.Study, rep *engine.Report, _ sessions.Recording, err error) {
			if rep == nil || err != nil {
				t.Errorf("dataset %d: report %v, err %v", d, rep != nil, err)
			}
			ran = append(ran, d)
		},
	})
	var se *sessions.SuiteError
	if !errors.As(err, &se) || se.D != 2 || se.Dataset != missing || se.Report != nil || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("err %v (%#v), want dataset 3's, not found", err, se)
	}
	if len(starting) != 3 || len(ran) != 2 || ran[1] != 1 {
		t.Fatalf("starting %v, ran %v", starting, ran)
	}
	id := suite.SuiteID(spec, datasets)
	if run == nil || run.ID != id || len(run.Run) != 9 || len(run.Reports) != 2 || len(run.Sessions) != 2 || run.Aggregate != nil {
		t.Fatalf("run %+v", run)
	}
	for d, sid := range run.Sessions {
		ss, err := st.Get(ctx, sid)
		if err != nil {
			t.Fatal(err)
		}
		want := suite.SuiteRef{ID: id, D: d + 1, N: 3, Run: run.Run}.String()
		if ss.Spec.Suite != want || ss.Spec.Data != datasets[d] || ss.Status != engine.StatusComplete {
			t.Fatalf("session %d: suite %q data %q status %v; want %q %q complete", sid, ss.Spec.Suite, ss.Spec.Data, ss.Status, want, datasets[d])
		}
	}
}
