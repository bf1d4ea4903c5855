package tui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/engine/robust"
	"sweepbench/sessions"
	"sweepbench/tui/common"
	"sweepbench/tui/components/form"
)

// Every engine call the workbench makes is here, each in a tea.Cmd (run
// off the UI goroutine) with its panics turned into errors.

// progressEvery bounds the UI's progress updates (<= 20 per second).
const progressEvery = 50 * time.Millisecond

type (
	loadedMsg struct {
		gen  int
		spec string
		ds   *data.Dataset
		err  error
	}
	estimateTickMsg struct{ gen int }
	estimateMsg     struct {
		gen int
		est engine.Estimate
		err error
	}
	progressMsg struct {
		gen int
		ps  []engine.Progress
	}
	doneMsg struct {
		gen int
		ps  []engine.Progress
		outcome
	}
	inspectTickMsg struct{ gen int }
	inspectMsg     struct {
		gen int
		ins *common.Inspection
	}
)

// guard turns a panic in f into an error message built by onPanic.
func guard(f func() tea.Msg, onPanic func(error) tea.Msg) tea.Cmd {
	return func() (msg tea.Msg) {
		defer func() {
			if r := recover(); r != nil {
				msg = onPanic(fmt.Errorf("internal error: %v", r))
			}
		}()
		return f()
	}
}

func loadCmd(gen int, name string, f engine.Spec) tea.Cmd {
	return guard(func() tea.Msg {
		f.Data = name
		ds, err := f.Open()
		return loadedMsg{gen, name, ds, err}
	}, func(err error) tea.Msg { return loadedMsg{gen, name, nil, err} })
}

func estimateCmd(gen int, s *engine.Study) tea.Cmd {
	return guard(func() tea.Msg {
		e, err := engine.EstimateStudy(context.Background(), s)
		return estimateMsg{gen, e, err}
	}, func(err error) tea.Msg { return estimateMsg{gen: gen, err: err} })
}

// inspectCmd recomputes combo idx of s in each of its precisions but the
// ones in missing (a run that never computed it: the panes say so rather
// than show numbers the run did not produce).
func inspectCmd(gen int, s *engine.Study, idx int, missing map[engine.Precision]string) tea.Cmd {
	c := s.Grid.At(idx)
	return guard(func() tea.Msg {
		ins := &common.Inspection{Index: idx, Combo: c, Missing: missing}
		for _, p := range s.Precisions {
			if missing[p] != "" {
				continue
			}
			d, err := engine.InspectCombo(context.Background(), &s.Dataset.Bars, c, s.Params, p, s.WMA)
			if err != nil {
				ins.Err = err
				break
			}
			if p == engine.FP32 {
				ins.D32 = d
			} else {
				ins.D64 = d
			}
		}
		return inspectMsg{gen, ins}
	}, func(err error) tea.Msg { return inspectMsg{gen, &common.Inspection{Index: idx, Combo: c, Err: err}} })
}

// outcome is what a run's work produced: the report (nil when it failed
// before anything ran), why it stopped early, and what became of saving it.
type outcome struct {
	rep   *engine.Report
	err   error
	saved string // "session 3" when it was saved
	warn  string // why it was not (fully) saved
	info  string // what resuming did
}

// work is what a runner runs in its goroutine: a study, saved or not, or
// a resumed session.
type work func(ctx context.Context, progress chan<- engine.Progress) outcome

// runner is one study (or resume) in its goroutine: progress arrives on a
// bounded channel (the engine never blocks on it and drops events when it
// is full), the outcome on done.
type runner struct {
	gen      int
	cancel   context.CancelFunc
	progress chan engine.Progress
	done     chan doneMsg
	finished chan struct{} // closed when the goroutine has returned
	last     time.Time
}

func startRunner(parent context.Context, gen int, w work) *runner {
	ctx, cancel := context.WithCancel(parent)
	r := &runner{gen: gen, cancel: cancel, progress: make(chan engine.Progress, 64), done: make(chan doneMsg, 1),
		finished: make(chan struct{})}
	go func() {
		var out outcome
		defer close(r.finished)
		defer func() {
			if x := recover(); x != nil {
				out.err = fmt.Errorf("internal error in the sweep: %v", x)
			}
			r.done <- doneMsg{gen: gen, outcome: out}
		}()
		out = w(ctx, r.progress)
	}()
	return r
}

// wait waits up to d for the runner's goroutine to return (it saves the
// final state of a session before it does).
func (r *runner) wait(d time.Duration) {
	if r == nil || r.finished == nil {
		return
	}
	select {
	case <-r.finished:
	case <-time.After(d):
	}
}

// studyWork runs s as `sweepbench run` does (sessions.RunStudy): saved in
// st while it computes unless st is nil. A database that cannot be used is
// a warning: the study is still computed and shown.
func studyWork(s *engine.Study, st *sessions.Store, storeErr error, save bool) work {
	return func(ctx context.Context, progress chan<- engine.Progress) (out outcome) {
		if save && st == nil && storeErr != nil {
			out.warn = fmt.Sprintf("this run is not saved: %v; it is still computed and shown", storeErr)
		}
		var rec sessions.Recording
		out.rep, rec, out.err = sessions.RunStudy(ctx, st, s, engine.StudyOptions{Progress: progress}, sessions.RecordOptions{})
		if out.rep != nil && out.rep.Blocks != nil && out.err == nil {
			// The robustness statistics (--blocks, the form's blocks), as
			// run computes them, on the GPU that computed the blocks when
			// it can.
			select {
			case progress <- engine.Progress{Backend: s.Backend.Name(), Total: s.Grid.Len(), Phase: engine.PhaseRobustness}:
			default:
			}
			if js, err := analyse(ctx, s, out.rep); err != nil {
				out.warn = fmt.Sprintf("robustness: %v", err)
			} else {
				out.rep.Robustness = js
				if st != nil && rec.ID != 0 {
					_ = st.SetRobustness(ctx, rec.ID, js) // the session still shows the study; only show lacks the summary
				}
			}
		}
		switch {
		case rec.Err != nil && rec.Err.Stage == sessions.SaveBegin:
			out.warn = fmt.Sprintf("this run is not saved: %v; it is still computed and shown", rec.Err.Err)
		case rec.Err != nil && rec.Err.Stage == sessions.SaveSave:
			out.warn = fmt.Sprintf("saving stopped: %v; the run went on unsaved", rec.Err.Err)
		case rec.Err != nil:
			out.warn = fmt.Sprintf("session %d was not finished in the database: %v", rec.ID, rec.Err.Err)
		case rec.ID != 0:
			out.saved = fmt.Sprintf("session %d", rec.ID)
		}
		return out
	}
}

// analyse computes the robustness summary of s's report rep as run does
// (robust.OptionsFor of its Spec, the stitched curve from its bars, PBO on
// the GPU that computed the blocks when it can), as JSON.
func analyse(ctx context.Context, s *engine.Study, rep *engine.Report) (json.RawMessage, error) {
	opt, err := robust.OptionsFor(s.Spec) // checked when the study was built
	if err != nil {
		return nil, err
	}
	opt.Bars = &s.Dataset.Bars
	if dev, ok := s.Backend.(robust.PBODevice); ok && s.Backend.Name() == rep.Run(rep.BlocksOf).Backend {
		opt.Device = dev
	}
	r, err := robust.Analyse(ctx, rep, opt)
	if err != nil {
		return nil, err
	}
	return json.Marshal(r.Summary())
}

// resumeWork computes what session id is missing (sessions.Store.Resume)
// and returns the whole session's report.
func resumeWork(st *sessions.Store, id int64, s *engine.Study) work {
	return func(ctx context.Context, progress chan<- engine.Progress) (out outcome) {
		rep, lanes, err := st.Resume(ctx, id, s, sessions.ResumeOptions{Progress: progress})
		out.rep, out.err = rep, err
		if rep != nil {
			out.saved = fmt.Sprintf("session %d", id)
		}
		var parts []string
		for _, l := range lanes {
			if l.Complete {
				parts = append(parts, fmt.Sprintf("%s complete already", l.Precision))
				continue
			}
			parts = append(parts, fmt.Sprintf("%s: %s saved, %s computed now", l.Precision,
				common.Thousands(l.Saved), common.Thousands(l.Computed)))
		}
		if len(parts) > 0 && err == nil {
			out.info = "resumed " + out.saved + ": " + strings.Join(parts, "; ")
		}
		return out
	}
}

// next is the re-armed command: it waits for the next event, then gathers
// what else arrives until progressEvery has passed since the last update,
// and returns the latest event of each lane (or the done message).
func (r *runner) next() tea.Cmd {
	return func() tea.Msg {
		var lanes []engine.Progress
		add := func(p engine.Progress) {
			for i := range lanes {
				if lanes[i].Precision == p.Precision {
					lanes[i] = p
					return
				}
			}
			lanes = append(lanes, p)
		}
		finish := func(d doneMsg) tea.Msg {
			for {
				select {
				case p := <-r.progress:
					add(p)
				default:
					d.ps = lanes
					return d
				}
			}
		}
		select {
		case p := <-r.progress:
			add(p)
		case d := <-r.done:
			return finish(d)
		}
		timer := time.NewTimer(max(time.Until(r.last.Add(progressEvery)), 0))
		defer timer.Stop()
		for {
			select {
			case p := <-r.progress:
				add(p)
			case d := <-r.done:
				return finish(d)
			case <-timer.C:
				r.last = time.Now()
				return progressMsg{r.gen, lanes}
			}
		}
	}
}

// spec is the engine.Spec the form describes: the form's fields bound to
// it (text parsed as a flag parser would, a bad number is a FieldError on
// its row), the rest from the command line. bad holds those parse errors.
func (m *Model) spec() (spec engine.Spec, bad map[string]error) {
	v := m.form.Values()
	bad = map[string]error{}
	spec = m.cfg.Flags.Spec
	spec.Data = m.rawSpec
	spec.HMA, spec.HMA3 = v[form.HMA], v[form.HMA3]
	spec.Mode, spec.Source, spec.Timeframe = v[form.Mode], v[form.Source], v[form.Timeframe]
	spec.Backend, spec.Precision, spec.WMA = v[form.Backend], v[form.Precision], v[form.WMA]
	number := func(key string, dst *float64) {
		f, err := strconv.ParseFloat(strings.TrimSpace(v[key]), 64)
		if err != nil {
			bad[key] = &engine.FieldError{Field: key, Value: v[key], Err: errors.New("not a number")}
			return
		}
		*dst = f
	}
	number(form.Fee, &spec.Fee)
	number(form.Borderline, &spec.Borderline)
	spec.BarsPerYear = 0
	if strings.TrimSpace(v[form.BarsPerYear]) != "" {
		number(form.BarsPerYear, &spec.BarsPerYear)
	}
	spec.TZ, spec.LEANAsset = strings.TrimSpace(v[form.TZ]), v[form.LEANAsset]
	if spec.Borderline == 0 && bad[form.Borderline] == nil {
		bad[form.Borderline] = &engine.FieldError{Field: form.Borderline, Value: v[form.Borderline], Err: errors.New("want a positive margin, e.g. 1e-5")}
	}
	count := func(key string, dst *int, want string) {
		*dst = 0
		if c := strings.TrimSpace(v[key]); c != "" {
			n, err := strconv.Atoi(c) // decimal digits, as the flags read them
			if err != nil {
				bad[key] = &engine.FieldError{Field: key, Value: c, Err: errors.New(want)}
			}
			*dst = n
		}
	}
	count(form.Head, &spec.Head, "want a positive bar count or 0 for all")
	// The window, the objective and its constraints, robustness: checked
	// by spec.Parse, spec.Derive and robust.OptionsFor, as run's flags.
	spec.From, spec.To, spec.WF = strings.TrimSpace(v[form.From]), strings.TrimSpace(v[form.To]), strings.TrimSpace(v[form.WF])
	spec.Objective = v[form.Objective]
	count(form.Blocks, &spec.Blocks, fmt.Sprintf("want a whole number: 0 (none) or 2 to %d blocks of bar returns", engine.MaxBlocks))
	count(form.MinTrades, &spec.MinTrades, "want a whole number of trades, 0 for none")
	spec.MaxDrawdown = 0
	if strings.TrimSpace(v[form.MaxDrawdown]) != "" {
		number(form.MaxDrawdown, &spec.MaxDrawdown)
	}
	return spec, bad
}

// buildStudy makes the engine study the form describes through
// engine.Spec.Study, as `sweepbench run` does from its flags, on the loaded
// dataset derived as the form says. The engine's errors are sorted by
// their field (typed *engine.FieldError): per form row, else general.
func (m *Model) buildStudy() (s *engine.Study, perField map[string]error, general error) {
	spec, perField := m.spec()
	var generals []error
	place := func(err error) {
		fes := engine.FieldErrors(err)
		if len(fes) == 0 {
			generals = append(generals, err)
			return
		}
		for _, fe := range fes {
			if m.form.Has(fe.Field) {
				if perField[fe.Field] == nil {
					perField[fe.Field] = fe
				}
				continue
			}
			generals = append(generals, fe)
		}
	}
	if _, err := spec.Parse(); err != nil {
		place(err)
	}
	if _, err := robust.OptionsFor(spec); err != nil {
		place(err)
	}
	if perField[form.Backend] == nil {
		if _, _, err := m.ctx.Registry.Lookup(spec.Backend); err != nil {
			place(err)
		}
	}
	if perField[form.Timeframe] == nil && perField[form.Head] == nil {
		m.derive(spec)
	}
	if m.deriveErr != nil {
		place(m.deriveErr)
	}
	if len(generals) == 0 && m.ctx.Raw == nil {
		generals = append(generals, errors.New("no dataset yet: choose one in the Dataset pane (enter loads it)"))
	}
	if len(perField) > 0 || len(generals) > 0 {
		return nil, perField, errors.Join(generals...)
	}
	s, err := spec.Study(m.ctx.Dataset, m.ctx.Registry)
	if err != nil {
		place(err)
		return nil, perField, errors.Join(generals...)
	}
	return s, perField, nil
}

// derive sets ctx.Dataset to the loaded bars derived as spec says
// (engine.Spec.Derive: resampled, trimmed to the first Head bars), keeping
// the last result while the inputs are unchanged.
func (m *Model) derive(spec engine.Spec) {
	raw := m.ctx.Raw
	if raw == nil {
		m.ctx.Dataset, m.deriveErr = nil, nil
		return
	}
	key := fmt.Sprintf("%p|%s|%d|%s|%s|%s", raw, spec.Timeframe, spec.Head, spec.From, spec.To, spec.TZ)
	if key == m.deriveKey {
		return
	}
	m.deriveKey = key
	m.ctx.Dataset, m.deriveErr = spec.Derive(raw)
}
