package report

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"sweepbench/engine"
	"sweepbench/engine/robust"
	"sweepbench/sessions"
)

// Options say how a session is read for its figures.
type Options struct {
	// Cells caps a heatmap's cells along each axis (a larger grid's cells
	// are blocks of combos, drawn by their mean); 0 = DefaultCells.
	Cells int
	// Registry resolves the session's backend when its dataset is loaded
	// again for the charts of one combo (sessions.Rebuild); nil leaves
	// those charts out with the reason.
	Registry *engine.Registry
	// Load loads the session's dataset again (nil: sessions.LoadSpec).
	Load sessions.Loader
}

// DefaultCells is the heatmaps' default cap of cells along each axis: 128
// x 128 cells draw as 16,384 rectangles, about 1.5 MB of SVG a heatmap.
const DefaultCells = 128

// Source is a saved session as the figures read it. Its parts that cost
// memory or time are read when a figure first needs them: the parity
// report's row per combo (Parity), the dataset (Study).
type Source struct {
	ID      int64
	Session *sessions.Session
	// Report is the session's report with each run summarised
	// (sessions.Store.OpenSummary: the top lists, the heatmaps capped at
	// Options.Cells, the parity report's counts, worst flips and indicator
	// errors, not its row per combo).
	Report *engine.Report
	// Robust is the saved robustness summary; nil when the study had no
	// --blocks (RobustErr says when it is there but unreadable).
	Robust    *robust.Summary
	RobustErr error

	store *sessions.Store
	opt   Options

	parityOnce sync.Once
	parity     *engine.Parity
	parityErr  error

	studyOnce sync.Once
	study     *engine.Study
	studyErr  error
}

// Open reads session id of st for its figures (st stays open while the
// Source is used). Errors: the store's (an unknown id names it).
func Open(ctx context.Context, st *sessions.Store, id int64, opt Options) (*Source, error) {
	if opt.Cells <= 0 {
		opt.Cells = DefaultCells
	}
	ss, err := st.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	rep, err := st.OpenSummary(ctx, id, engine.SummaryOptions{MaxRows: opt.Cells, MaxCols: opt.Cells})
	if err != nil {
		return nil, err
	}
	s := &Source{ID: id, Session: ss, Report: rep, store: st, opt: opt}
	if len(rep.Robustness) > 0 {
		var sm robust.Summary
		if err := json.Unmarshal(rep.Robustness, &sm); err != nil {
			s.RobustErr = fmt.Errorf("session %d: its saved robustness summary does not read: %w", id, err)
		} else {
			s.Robust = &sm
		}
	}
	return s, nil
}

// Parity is the session's parity report with its row per combo (read
// from the store once, on first use: sessions.Store.Open), nil when the
// session has none (one precision, or not finished).
func (s *Source) Parity(ctx context.Context) (*engine.Parity, error) {
	if s.Report.Parity == nil {
		return nil, nil
	}
	if s.store == nil {
		// A report built in memory holds its parity report whole.
		return s.Report.Parity, nil
	}
	s.parityOnce.Do(func() {
		rep, err := s.store.Open(ctx, s.ID)
		if err != nil {
			s.parityErr = err
			return
		}
		s.parity = rep.Parity
	})
	return s.parity, s.parityErr
}

// Study is the session's study built again on its dataset loaded again
// (sessions.Rebuild, once, on first use): what the charts of one combo
// recompute it on. Errors name the session and why (no registry, the
// dataset gone or changed).
func (s *Source) Study(ctx context.Context) (*engine.Study, error) {
	s.studyOnce.Do(func() {
		if s.opt.Registry == nil {
			s.studyErr = fmt.Errorf("session %d: no backend registry to build its study again", s.ID)
			return
		}
		s.study, s.studyErr = sessions.Rebuild(ctx, s.Session, s.opt.Registry, "", s.opt.Load)
	})
	return s.study, s.studyErr
}

// Run is the summarised run of precision p, nil when the session has none.
func (s *Source) Run(p engine.Precision) *engine.Run { return s.Report.Run(p) }

// Objective is the study's objective: what "best" means for the selected
// combo, with its constraints (the report's, as run ranked it).
func (s *Source) Objective() engine.Objective { return s.Report.Objective }

// Selected is the best combo of the session by its objective, constraints
// applied: the fp64 run's, else the first run's; ok is false when no
// combo meets them.
func (s *Source) Selected() (engine.ComboResult, bool) {
	run := s.Run(engine.FP64)
	if run == nil && len(s.Report.Runs) > 0 {
		run = s.Report.Runs[0]
	}
	if run == nil {
		return engine.ComboResult{}, false
	}
	var best []engine.ComboResult
	if run.Summary != nil {
		best = run.Summary.Best
	} else {
		// A report built in memory (engine.RunStudy without summaries):
		// the run's own results, ranked as a summary's Best is.
		best = engine.TopBy(run, s.Objective(), 1)
	}
	if len(best) == 0 {
		return engine.ComboResult{}, false
	}
	// Best lists the combos that meet the constraints first.
	return best[0], s.Objective().Selectable(&best[0])
}

// eachResult calls f with every computed combo of the session's run of
// precision p, a batch at a time: the run's own results when it holds
// them all (a report built in memory), else read from the store
// (sessions.RunReader.Scan: memory for a batch, not the grid). fig names
// the figure that asks, for the errors.
func (s *Source) eachResult(ctx context.Context, fig string, p engine.Precision, f func([]engine.ComboResult) error) error {
	run := s.Run(p)
	if run == nil {
		return s.unavailable(fig, "has no %s run (its precisions: %s)", p, s.precisions())
	}
	if !run.Kept && (len(run.Results) > 0 || s.store == nil) {
		return f(run.Results)
	}
	if s.store == nil {
		return s.unavailable(fig, "holds only the best combos of its %s run, and no store to read the others from", p)
	}
	rr, err := s.store.OpenRunReader(ctx, s.ID, p)
	if err != nil {
		return err
	}
	return rr.Scan(ctx, f)
}
