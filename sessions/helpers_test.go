package sessions_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/reference"
	"sweepbench/sessions"
)

var (
	btcOnce sync.Once
	btc     *data.Dataset
	btcErr  error
)

// btcusdt returns the embedded BTC/USDT minute bars trimmed to n, as
// `run --head n` trims them.
func btcusdt(t testing.TB, n int) *data.Dataset {
	t.Helper()
	btcOnce.Do(func() { btc, btcErr = data.Open("embedded:btcusdt-1m", data.Options{}) })
	if btcErr != nil {
		t.Fatal(btcErr)
	}
	out := &data.Dataset{Info: btc.Info, Bars: btc.Bars.Slice(0, n)}
	out.Info.Bars = n
	out.Info.Last = out.Bars.Last()
	out.Info.Name = fmt.Sprintf("%s[:%d]", btc.Info.Name, n)
	return out
}

func origin(n int) testOrigin { return testOrigin{Data: "embedded:btcusdt-1m", Head: n} }

// newStudy is a reference-backend study of ds over hma x hma3.
func newStudy(t testing.TB, ds *data.Dataset, hma, hma3 string, precs ...engine.Precision) *engine.Study {
	t.Helper()
	h, err := engine.ParseRange("--hma", hma)
	if err != nil {
		t.Fatal(err)
	}
	h3, err := engine.ParseRange("--hma3", hma3)
	if err != nil {
		t.Fatal(err)
	}
	if len(precs) == 0 {
		precs = []engine.Precision{engine.FP64, engine.FP32}
	}
	st := &engine.Study{Dataset: ds, Grid: engine.Grid{HMA: h, HMA3: h3}, Precisions: precs, Backend: reference.New(),
		Params: engine.Params{Fee: engine.DefaultFee, Mode: engine.LongShort, Source: engine.SourceClose,
			BarsPerYear: engine.BarsPerYear(ds.Info.MedianSpacing)}}
	if err := st.Validate(); err != nil {
		t.Fatal(err)
	}
	return st
}

func openStore(t testing.TB, path string) *sessions.Store {
	t.Helper()
	if path == "" {
		path = filepath.Join(t.TempDir(), "sessions.db")
	}
	s, err := sessions.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// runSaved runs st with a Writer as its sink and finishes the session.
func runSaved(t testing.TB, s *sessions.Store, st *engine.Study, o testOrigin, note string) (*engine.Report, int64) {
	t.Helper()
	ctx := context.Background()
	w, err := begin(ctx, s, st, o, note)
	if err != nil {
		t.Fatal(err)
	}
	rep, runErr := engine.RunStudy(ctx, st, engine.StudyOptions{Sink: w.Sink(func(err error) { t.Errorf("save: %v", err) })})
	if runErr != nil {
		t.Fatal(runErr)
	}
	rep.Note = note
	if err := w.Finish(rep, runErr); err != nil {
		t.Fatal(err)
	}
	return rep, w.ID()
}

// testOrigin is how a test study's dataset was loaded (its Spec's Data and
// Head): tests build studies directly, not through engine.Spec.Study.
type testOrigin struct {
	Data string
	Head int
}

// begin records st as loaded from o, with note, as Begin does for a study
// built from a Spec.
func begin(ctx context.Context, s *sessions.Store, st *engine.Study, o testOrigin, note string) (*sessions.Writer, error) {
	st.Spec.Data, st.Spec.Head, st.Note = o.Data, o.Head, note
	return s.Begin(ctx, st)
}
