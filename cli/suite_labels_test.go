package cli

import (
	"context"
	"path/filepath"
	"testing"

	"sweepbench/engine"
	"sweepbench/engine/suite"
	"sweepbench/sessions"
	"sweepbench/sessions/sessionstest"
)

// TestSuiteLabelsAsTheWorkbench: `run --data A --data B` labels its
// sessions with suite.SuiteID of its Spec, the id the workbench gives the
// same study typed into its form (tui's TestSuiteRunFromTheForm: the
// form's smallFlags, DefaultSpec with these four settings and
// the objective sharpe), and saves
// each dataset's results as the study of that dataset run on its own;
// the workbench's test checks its sessions against the same computation.
func TestSuiteLabelsAsTheWorkbench(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "s.db")
	datasets := []string{"embedded:filusdt-1m", "embedded:btcusdt-1m"}
	if _, stderr, err := execute(t, "run", "--data", datasets[0], "--data", datasets[1], "--head", "5000",
		"--hma", "10:30:10", "--hma3", "12:36:12", "--backend", "reference", "-q", "--db", db); err != "" {
		t.Fatalf("%s\n%s", err, stderr)
	}
	spec := engine.DefaultSpec()
	spec.Head, spec.HMA, spec.HMA3, spec.Backend = 5000, "10:30:10", "12:36:12", "reference"
	spec.Objective = "sharpe" // --objective's default, the form's too
	id := suite.SuiteID(spec, datasets)
	st, err := sessions.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	list, err := st.List(ctx, sessions.ListOptions{})
	if err != nil || len(list) != 2 {
		t.Fatalf("%d sessions (%v), want 2", len(list), err)
	}
	sessionstest.CheckSuiteSessions(t, ctx, st, list, spec, datasets, id, backends())
}
