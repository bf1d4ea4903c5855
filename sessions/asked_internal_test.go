package sessions

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"sweepbench/engine"
	"sweepbench/reference"
)

// TestAskedSpec: a session keeps its backend and bars per year as the user
// gave them (auto, 0 = derived) beside the ones used; Rebuild's study
// runs with the used ones and carries the asked ones in its Spec (what
// the TUI's form edits). A session saved before schema v10 reads its bars
// per year as 0 when it is what the data derive, else as given.
func TestAskedSpec(t *testing.T) {
	ctx := context.Background()
	s, err := Open(filepath.Join(t.TempDir(), "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	reg := &engine.Registry{}
	reg.Register(reference.New())
	spec := engine.DefaultSpec()
	spec.Data, spec.Head, spec.HMA, spec.HMA3, spec.Precision = "embedded:btcusdt-1m", 3000, "10:30:10", "12:36:12", "fp64"
	st, err := spec.Build(reg)
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.Begin(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := engine.RunStudy(ctx, st, engine.StudyOptions{Sink: w.Save})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Finish(rep, nil); err != nil {
		t.Fatal(err)
	}
	const minuteBarsPerYear = 365 * 24 * 60
	check := func(what string, used, asked float64, backend string) {
		t.Helper()
		ss, err := s.Get(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		if ss.Spec.BarsPerYear != used || ss.Spec.Backend != "reference" || ss.Asked.BarsPerYear != asked || ss.Asked.Backend != backend ||
			ss.Asked.HMA != spec.HMA || ss.Asked.Head != spec.Head || ss.Asked.Data != spec.Data {
			t.Fatalf("%s: spec %+v, asked %+v", what, ss.Spec, ss.Asked)
		}
		re, err := Rebuild(ctx, ss, reg, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		if re.Params.BarsPerYear != used || re.Backend.Name() != "reference" || !reflect.DeepEqual(re.Spec, ss.Asked) {
			t.Fatalf("%s: rebuilt with %g bars/year on %s, spec %+v", what, re.Params.BarsPerYear, re.Backend.Name(), re.Spec)
		}
	}
	check("saved", minuteBarsPerYear, 0, "auto")
	if _, err := s.db.Exec(`UPDATE studies SET asked_backend = NULL, asked_bars_per_year = NULL`); err != nil {
		t.Fatal(err)
	}
	check("before v10, derived", minuteBarsPerYear, 0, "reference")
	if _, err := s.db.Exec(`UPDATE studies SET bars_per_year = 98280`); err != nil {
		t.Fatal(err)
	}
	check("before v10, given", 98280, 98280, "reference")
}
