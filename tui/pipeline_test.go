package tui

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/muesli/termenv"

	"sweepbench/conformance"
	"sweepbench/engine"
	"sweepbench/reference"
	"sweepbench/tui/common"
)

// TestFormBuildsTheCLIStudy is defect 4 of the pipeline issue: the
// workbench never added the fee note and its studies had no fallback. The
// form's study and the one `run` builds from the same inputs (Spec.Load
// then Spec.Study) are the same study: grid, parameters, precisions, WMA,
// borderline, backend, fallback and note.
func TestFormBuildsTheCLIStudy(t *testing.T) {
	reg := testRegistry()
	reg.Register(conformance.FP32Only(reference.New()))
	for _, c := range []struct {
		name string
		edit func(*engine.Spec)
		note string // in the study's note
	}{
		{"defaults", func(*engine.Spec) {}, ""},
		{"a fee that looks like a percentage", func(s *engine.Spec) { s.Fee = 0.02 }, "fee 0.02 is 2% per side"},
		{"an fp32-only backend", func(s *engine.Spec) { s.Backend = "fp32only" }, "fp32only has no fp64: the fp64 lane runs on reference"},
		{"prefix, long-only, hl2, 5m", func(s *engine.Spec) {
			s.WMA, s.Mode, s.Source, s.Timeframe, s.Head, s.Borderline = "prefix", "long-only", "hl2", "5m", 900, 2e-5
		}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := smallFlags()
			c.edit(&f.Spec)
			ds, err := f.Spec.Load()
			if err != nil {
				t.Fatal(err)
			}
			want, err := f.Spec.Study(ds, reg)
			if err != nil {
				t.Fatal(err)
			}
			m := newModel(context.Background(), Config{Registry: reg, Flags: f}, termenv.Ascii, true, true)
			d := &driver{t: t, m: m}
			d.run(m.Init())
			got, perField, general := m.setup.Build()
			if got == nil {
				t.Fatalf("the form built no study: %v %v", perField, general)
			}
			if got.Grid != want.Grid || got.Params != want.Params || got.WMA != want.WMA || got.Tolerance != want.Tolerance ||
				len(got.Precisions) != len(want.Precisions) || got.Dataset.Info.SHA256 != want.Dataset.Info.SHA256 ||
				got.Dataset.Bars.Len() != want.Dataset.Bars.Len() {
				t.Errorf("form study %+v\nCLI study  %+v", got, want)
			}
			if got.Backend.Name() != want.Backend.Name() || got.Fallback == nil || got.Fallback.Name() != "reference" {
				t.Errorf("backend %s fallback %v, want %s and the reference", got.Backend.Name(), got.Fallback, want.Backend.Name())
			}
			if got.Note != want.Note {
				t.Errorf("form note %q, CLI note %q", got.Note, want.Note)
			}
			if c.note != "" && !strings.Contains(got.Note, c.note) {
				t.Errorf("note %q lacks %q", got.Note, c.note)
			}
			if got.Spec.HMA != f.HMA || got.Spec.Fee != f.Fee || got.Spec.Data != f.Data || got.Spec.Head != f.Head {
				t.Errorf("the study's spec %+v is not the form's %+v", got.Spec, f.Spec)
			}
		})
	}
}

// TestFormMarksFieldErrors: the engine's typed errors land on their rows
// (no error text is parsed), every bad field at once.
func TestFormMarksFieldErrors(t *testing.T) {
	f := smallFlags()
	f.HMA3, f.HMA = "5:10", "10:x"
	m := newModel(context.Background(), Config{Registry: testRegistry(), Flags: f}, termenv.Ascii, true, true)
	d := &driver{t: t, m: m}
	d.run(m.Init())
	s, perField, _ := m.setup.Build()
	if s != nil {
		t.Fatal("a study from a form with errors")
	}
	var fe *engine.FieldError
	if err := perField["hma3"]; !errors.As(err, &fe) || fe.Field != "hma3" || m.setup.Form().Describe(err) != `HMA3 range 5:10: length 5 is below the minimum 6 (HMA3 needs floor(floor(L/2)/3) >= 1)` {
		t.Errorf("hma3: %v (%q)", err, m.setup.Form().Describe(err))
	}
	if err := perField["hma"]; !errors.As(err, &fe) || m.setup.Form().Describe(err) != `HMA range 10:x: "x" is not an integer (want start:stop:step, e.g. 20:200:20; start:stop means step 1)` {
		t.Errorf("hma: %v (%q)", err, m.setup.Form().Describe(err))
	}
}

// TestNotesShown: the study's notes reach the user in the workbench as they
// do in `run`: on the form before the run (a fee that looks like a
// percentage), and in the parity pane with the results.
func TestNotesShown(t *testing.T) {
	f := smallFlags()
	f.Fee = 0.02
	d := newDriver(t, f, 120, 40)
	const note = "fee 0.02 is 2% per side: fees are fractions"
	if v := d.m.View(); !strings.Contains(v, note) {
		t.Fatalf("the form does not show %q:\n%s", note, v)
	}
	d.key("enter")
	if d.m.screen != common.ResultsScreen {
		t.Fatalf("screen %d after enter (err %q)", d.m.screen, d.m.status.LastErr)
	}
	if sum := strings.Join(d.m.results.Parity().Summary(), " "); !strings.Contains(sum, "note: "+note) {
		t.Errorf("the parity pane's summary does not show the note:\n%s", sum)
	}
}

// TestAliasesShown: a study whose HMA3 range has step 1 says in the parity
// pane how many combos were computed with their twin (hma3 12:17 has p 6,
// 6, 7, 7, 8, 8: 3 of each HMA length's 6 combos, 9 of 18).
func TestAliasesShown(t *testing.T) {
	f := smallFlags()
	f.HMA3 = "12:17"
	d := newDriver(t, f, 120, 40)
	d.key("enter")
	if d.m.screen != common.ResultsScreen {
		t.Fatalf("screen %d after enter (err %q)", d.m.screen, d.m.status.LastErr)
	}
	const want = "aliases: 9 of 18 combos computed with their hma3 twin"
	if sum := strings.Join(d.m.results.Parity().Summary(), " "); !strings.Contains(sum, want) {
		t.Errorf("the parity pane's summary does not say %q:\n%s", want, sum)
	}
}

// TestRobustnessInParityPane: `tui --blocks 8` computes the robustness
// statistics with each study, as run does, and the Parity pane shows the
// section in brief: PBO over C(8,4) = 70 splits, the DSR, the plateau.
func TestRobustnessInParityPane(t *testing.T) {
	f := smallFlags()
	f.Blocks = 8
	d := newDriver(t, f, 120, 40)
	d.key("enter")
	r := d.m.state.Results
	if r == nil || len(r.Report.Robustness) == 0 {
		t.Fatalf("no robustness after the study (last error %q, warning %q)", d.m.status.LastErr, d.m.status.Warn)
	}
	sum := strings.Join(d.m.results.Parity().Summary(), " ") // the pane wraps: words, not lines
	for _, want := range []string{"robustness (8 blocks, max sharpe): PBO ", "over 70 splits", "; DSR ", "; plateau best "} {
		if !strings.Contains(sum, want) {
			t.Errorf("the Parity pane lacks %q:\n%s", want, sum)
		}
	}
}
