// Package tuitest holds what the workbench's package tests share: a host
// that records what a screen asks of the root, the context the root
// builds (plain ASCII theme, default keys, deterministic), and a small
// real study to show.
package tuitest

import (
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/muesli/termenv"

	"sweepbench/engine"
	"sweepbench/reference"
	"sweepbench/tui/common"
	"sweepbench/tui/keys"
	"sweepbench/tui/theme"
)

// Host records the intents a screen hands the root (common.Host) and
// keeps the status line its messages change, as the root does.
type Host struct {
	ID      common.ScreenID
	Intents []tea.Msg
	St      common.Status
}

// Do applies a status message to St and records any other message as an
// intent.
func (h *Host) Do(m tea.Msg) tea.Cmd {
	if !h.St.Apply(m) {
		h.Intents = append(h.Intents, m)
	}
	return nil
}
func (h *Host) Screen() common.ScreenID { return h.ID }
func (h *Host) Running() bool           { return false }
func (h *Host) Status() common.Status   { return h.St }

// Context is the shared context the root builds, over reg, without
// colour (theme.New(termenv.Ascii, true)) and deterministic.
func Context(reg *engine.Registry) *common.Context {
	return &common.Context{Theme: theme.New(termenv.Ascii, true), Keys: keys.Default(), Registry: reg, Deterministic: true}
}

// SmallSpec is the small study the tests show: the first 2,000 bars of
// embedded BTC/USDT 1m, hma 10:30:10 x hma3 12:36:12 (9 combos), both
// precisions, on the reference backend.
func SmallSpec() engine.Spec {
	spec := engine.DefaultSpec()
	spec.Data, spec.Head, spec.HMA, spec.HMA3, spec.Backend = "embedded:btcusdt-1m", 2000, "10:30:10", "12:36:12", "reference"
	return spec
}

// SmallStudy builds SmallSpec on a registry of the reference backend
// alone and runs it: the registry, the study and its report.
func SmallStudy(t *testing.T) (*engine.Registry, *engine.Study, *engine.Report) {
	t.Helper()
	reg := &engine.Registry{}
	reg.Register(reference.New())
	st, err := SmallSpec().Build(reg)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := engine.RunStudy(t.Context(), st, engine.StudyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return reg, st, rep
}
