package common

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"

	"sweepbench/engine"
	"sweepbench/engine/robust"
)

// Parity columns the panes offer next to the SPEC metrics.
const (
	ColDn    = "dn"      // trades32 - trades64
	ColDPnL  = "dpnl_pp" // 100*(total_return32 - total_return64), pp
	ColFlips = "flips"   // bars where the held positions differ
)

// Columns lists every value a combo has, SPEC metrics first.
func Columns() []string {
	return append(append([]string(nil), engine.MetricNames...), ColDn, ColDPnL, ColFlips)
}

// IsParityColumn reports whether name is one of the parity columns.
func IsParityColumn(name string) bool {
	return name == ColDn || name == ColDPnL || name == ColFlips
}

// NoteLines splits a study's or a report's note (engine.JoinNote parts)
// into the lines a pane shows. What auto picked and which backends are
// unavailable depend on the machine: deterministic (tests) leaves them
// out, and the form lists unavailable backends on lines of their own.
func NoteLines(note string, deterministic bool) []string {
	var out []string
	for _, part := range strings.Split(note, "; ") {
		switch {
		case part == "":
		case strings.Contains(part, "unavailable here"):
		case deterministic && strings.HasPrefix(part, "auto:"):
		default:
			out = append(out, Clean(part))
		}
	}
	return out
}

// Results is a read-only view of a report for the panes: lookups by combo
// index, nothing computed.
type Results struct {
	Report   *engine.Report
	Grid     engine.Grid
	R64, R32 *engine.Run
	Err      error // why the study stopped early, if it did
	// Asked are the precisions the study asked for: a lane among them
	// with no run at all never started (the study stopped before it).
	Asked []engine.Precision
	// Objective is what "best" means for the study (the report's: its
	// metric and constraints; the zero value ranks by Sharpe).
	Objective engine.Objective
	// Robust is the study's robustness summary (Report.Robustness, read
	// once), nil when it computed none; RobustErr says why it could not
	// be read.
	Robust    *robust.Summary
	RobustErr error
	parity    map[int]*engine.ComboParity
}

// NewResults indexes rep for the panes.
func NewResults(rep *engine.Report, err error) *Results {
	r := &Results{Report: rep, Grid: rep.Grid, R64: rep.Run(engine.FP64), R32: rep.Run(engine.FP32), Err: err,
		Objective: rep.Objective}
	if len(rep.Robustness) > 0 {
		var sm robust.Summary
		if r.RobustErr = json.Unmarshal(rep.Robustness, &sm); r.RobustErr == nil {
			r.Robust = &sm
		}
	}
	if rep.Parity != nil {
		r.parity = make(map[int]*engine.ComboParity, len(rep.Parity.Combos))
		for i := range rep.Parity.Combos {
			c := &rep.Parity.Combos[i]
			r.parity[c.Index] = c
		}
	}
	return r
}

// Complete reports whether every run completed.
func (r *Results) Complete() bool { return r.Report.Complete() }

// Run returns the run of precision p, or nil.
func (r *Results) Run(p engine.Precision) *engine.Run {
	if p == engine.FP32 {
		return r.R32
	}
	return r.R64
}

// Primary is the run the tables list: fp64 when it ran, else fp32.
func (r *Results) Primary() *engine.Run {
	if r.R64 != nil {
		return r.R64
	}
	return r.R32
}

// Combo returns combo idx's result in precision p, or nil.
func (r *Results) Combo(idx int, p engine.Precision) *engine.ComboResult {
	run := r.Run(p)
	if run == nil {
		return nil
	}
	return run.Lookup(idx)
}

// Parity returns combo idx's parity row, or nil.
func (r *Results) Parity(idx int) *engine.ComboParity {
	return r.parity[idx]
}

// Value returns column name of combo idx in precision p (parity columns
// ignore p); ok is false when the combo or the column has no value.
func (r *Results) Value(idx int, name string, p engine.Precision) (float64, bool) {
	if IsParityColumn(name) {
		c := r.Parity(idx)
		if c == nil {
			return 0, false
		}
		switch name {
		case ColDn:
			return float64(c.Dn), true
		case ColDPnL:
			return c.DPnLpp, true
		default:
			return float64(c.Flips), true
		}
	}
	c := r.Combo(idx, p)
	if c == nil {
		return 0, false
	}
	return c.Metrics.Value(name)
}

// Better reports whether value a of column name is better than b: lower is
// better for max_drawdown, larger magnitude is "better" (worth a look) for
// the parity columns, higher for everything else. NaN is never better.
func Better(name string, a, b float64) bool {
	if math.IsNaN(a) {
		return false
	}
	if math.IsNaN(b) {
		return true
	}
	switch {
	case name == "max_drawdown":
		return a < b
	case IsParityColumn(name):
		return math.Abs(a) > math.Abs(b)
	}
	return a > b
}

// Top returns the best combo among idxs in precision p by the study's
// objective and its constraints (engine.Objective.Ranks, the order of
// run's top lists: only a combo that meets the constraints), or -1 when
// none of them does.
func (r *Results) Top(p engine.Precision, idxs []int) int {
	o := r.Objective
	var best *engine.ComboResult
	for _, i := range idxs {
		c := r.Combo(i, p)
		if c == nil || !o.Selectable(c) {
			continue
		}
		if best == nil || o.Ranks(c, best) {
			best = c
		}
	}
	if best == nil {
		return -1
	}
	return best.Index
}

// Indexes lists the combo indexes of the primary run, in grid order.
func (r *Results) Indexes() []int {
	run := r.Primary()
	if run == nil {
		return nil
	}
	out := make([]int, len(run.Results))
	for i := range run.Results {
		out[i] = run.Results[i].Index
	}
	return out
}

// Missing says why combo idx has no result in precision p although the
// study asked for that precision ("fp32 not computed (run cancelled)"), or
// "" when it has one or p was not asked for.
func (r *Results) Missing(idx int, p engine.Precision) string {
	run := r.Run(p)
	if run == nil {
		if stopped := r.stopped(p); stopped != nil {
			return p.String() + " not computed (" + StopReason(stopped) + ")"
		}
		return ""
	}
	if run.Lookup(idx) != nil {
		return ""
	}
	return p.String() + " not computed (" + StopReason(run) + ")"
}

// NeverRan says why the study asked for precision p but has no run of it
// ("cancelled during fp64"), or "" when p ran or was not asked for.
func (r *Results) NeverRan(p engine.Precision) string {
	run := r.stopped(p)
	if run == nil || run.Status == StatusRunning {
		return ""
	}
	when := "during " + run.Precision.String()
	if run.Precision == p {
		when = "before it started"
	}
	if run.Status == engine.StatusFailed {
		return "failed " + when
	}
	return "cancelled " + when
}

// stopped is the run that ended the study before lane p (asked for, with
// no run) started; nil when p ran or was not asked for.
func (r *Results) stopped(p engine.Precision) *engine.Run {
	if r.Run(p) != nil || !slices.Contains(r.Asked, p) {
		return nil
	}
	if r.Running() {
		// The results so far: the lane has not streamed a combo yet.
		return &engine.Run{Precision: p, Status: StatusRunning}
	}
	for _, run := range r.Report.Runs {
		if !run.Complete() {
			return run
		}
	}
	// The lanes before it completed: the lane itself stopped as it began.
	st := engine.StatusCancelled
	if r.Err != nil && !errors.Is(r.Err, context.Canceled) {
		st = engine.StatusFailed
	}
	return &engine.Run{Precision: p, Status: st}
}

// StatusRunning is the status of a run in a snapshot of a study that
// computes (the results so far): its other combos are still to come.
const StatusRunning engine.Status = "running"

// Running reports whether r is a snapshot of a study that computes.
func (r *Results) Running() bool {
	for _, run := range r.Report.Runs {
		if run.Status == StatusRunning {
			return true
		}
	}
	return false
}

// StopReason says why run holds fewer combos than its grid: "run
// cancelled", "run failed", "still computing" or "run incomplete".
func StopReason(run *engine.Run) string {
	switch run.Status {
	case engine.StatusCancelled:
		return "run cancelled"
	case engine.StatusFailed:
		return "run failed"
	case StatusRunning:
		return "still computing"
	}
	return "run incomplete"
}

// Partial lists the runs that hold fewer combos than the grid, as
// "fp32: 8,224 computed", and why they stopped ("" when every run is whole).
func (r *Results) Partial() (parts []string, why string) {
	for _, run := range []*engine.Run{r.R64, r.R32} {
		if run == nil || len(run.Results) >= r.Grid.Len() {
			continue
		}
		parts = append(parts, run.Precision.String()+": "+Thousands(len(run.Results))+" computed")
		if why == "" {
			why = StopReason(run)
		}
	}
	return parts, why
}
