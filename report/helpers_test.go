package report

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"sweepbench/engine"
	"sweepbench/reference"
	"sweepbench/sessions"
)

// The test sessions: saved by the one run path (sessions.RunStudy, which
// computes and saves the robustness statistics beside the study as for
// `sweepbench run`) with the reference backend on the embedded BTC/USDT minute
// bars, once per test binary.
var (
	fixtureOnce sync.Once
	fixtureDB   string
	fixtureErr  error
	// robustID: both precisions, --blocks 8 --wf anchored, max drawdown
	// 0.3 (some cells constrained out); plainID: fp64 only, no blocks.
	robustID, plainID int64
)

func registry() *engine.Registry {
	r := &engine.Registry{}
	r.Register(reference.New())
	return r
}

// robustSpec is the study of robustID: `sweepbench run --head 20000 --hma
// 10:100:10 --hma3 12:120:12 --blocks 8 --wf anchored --max-drawdown 0.3
// --backend reference`.
func robustSpec() engine.Spec {
	s := engine.DefaultSpec()
	s.Data, s.Head, s.HMA, s.HMA3 = "embedded:btcusdt-1m", 20000, "10:100:10", "12:120:12"
	s.Backend, s.Blocks, s.WF, s.MaxDrawdown = "reference", 8, "anchored", 0.3
	return s
}

func saveStudy(ctx context.Context, st *sessions.Store, spec engine.Spec) (int64, error) {
	ds, err := spec.LoadContext(ctx)
	if err != nil {
		return 0, err
	}
	s, err := spec.Study(ds, registry())
	if err != nil {
		return 0, err
	}
	var saveErr error // the robustness summary's, which rec.Err does not record
	_, rec, err := sessions.RunStudy(ctx, st, s, engine.StudyOptions{}, sessions.RecordOptions{
		SaveError: func(e *sessions.SaveError) { saveErr = e },
	})
	if err == nil && rec.Err != nil { // a *SaveError: nil is no error
		err = rec.Err
	}
	if err == nil {
		err = errors.Join(rec.Robustness, saveErr)
	}
	if err != nil {
		return 0, err
	}
	return rec.ID, nil
}

// fixture returns the test database (in a directory removed by TestMain).
func fixture(t testing.TB) string {
	t.Helper()
	fixtureOnce.Do(func() {
		dir, err := os.MkdirTemp("", "report-test-")
		if err != nil {
			fixtureErr = err
			return
		}
		fixtureDB = filepath.Join(dir, "sessions.db")
		st, err := sessions.Open(fixtureDB)
		if err != nil {
			fixtureErr = err
			return
		}
		defer st.Close()
		ctx := context.Background()
		if robustID, fixtureErr = saveStudy(ctx, st, robustSpec()); fixtureErr != nil {
			return
		}
		plain := robustSpec()
		plain.Blocks, plain.WF, plain.MaxDrawdown, plain.Precision = 0, "", 0, "fp64"
		plainID, fixtureErr = saveStudy(ctx, st, plain)
	})
	if fixtureErr != nil {
		t.Fatal(fixtureErr)
	}
	return fixtureDB
}

func TestMain(m *testing.M) {
	code := m.Run()
	if fixtureDB != "" {
		os.RemoveAll(filepath.Dir(fixtureDB))
	}
	os.Exit(code)
}

// robustSource and plainSource open the fixture's sessions.
func robustSource(t testing.TB) *Source { fixture(t); return openSource(t, robustID) }
func plainSource(t testing.TB) *Source  { fixture(t); return openSource(t, plainID) }

// openSource opens session id of the fixture for its figures.
func openSource(t testing.TB, id int64) *Source {
	t.Helper()
	st, err := sessions.OpenReadOnly(fixture(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	src, err := Open(context.Background(), st, id, Options{Registry: registry()})
	if err != nil {
		t.Fatal(err)
	}
	return src
}
