package tui

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"sweepbench/engine"
	"sweepbench/engine/data"
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

func loadCmd(gen int, spec string, f Flags) tea.Cmd {
	return guard(func() tea.Msg {
		opt := data.Options{TimeColumn: f.TimeColumn}
		if f.TZ != "" {
			loc, err := time.LoadLocation(f.TZ)
			if err != nil {
				return loadedMsg{gen, spec, nil, fmt.Errorf("--tz %q: %v", f.TZ, err)}
			}
			opt.Location = loc
		}
		ds, err := data.Open(spec, opt)
		return loadedMsg{gen, spec, ds, err}
	}, func(err error) tea.Msg { return loadedMsg{gen, spec, nil, err} })
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

// studyWork runs s as `sweepbench run` does: saved through the store's
// Writer and its Sink when save is set, with the final status and the
// parity report recorded by Finish. A database that cannot be used is a
// warning: the study is still computed and shown.
func studyWork(s *engine.Study, st *sessions.Store, storeErr error, save bool, o sessions.Origin, note string) work {
	return func(ctx context.Context, progress chan<- engine.Progress) (out outcome) {
		opt := engine.StudyOptions{Progress: progress}
		var (
			w       *sessions.Writer
			mu      sync.Mutex
			sinkErr error
		)
		if save {
			switch {
			case st != nil:
				var err error
				if w, err = st.Begin(ctx, s, o, note); err != nil {
					out.warn = fmt.Sprintf("this run is not saved: %v; it is still computed and shown", err)
					w = nil
				}
			case storeErr != nil:
				out.warn = fmt.Sprintf("this run is not saved: %v; it is still computed and shown", storeErr)
			}
		}
		if w != nil {
			opt.Sink = w.Sink(func(err error) {
				mu.Lock()
				sinkErr = err
				mu.Unlock()
			})
		}
		out.rep, out.err = engine.RunStudy(ctx, s, opt)
		if w == nil {
			return out
		}
		ferr := w.Finish(out.rep, out.err)
		mu.Lock()
		defer mu.Unlock()
		switch {
		case sinkErr != nil:
			out.warn = fmt.Sprintf("saving stopped: %v; the run went on unsaved", sinkErr)
		case ferr != nil:
			out.warn = fmt.Sprintf("session %d was not finished in the database: %v", w.ID(), ferr)
		default:
			out.saved = fmt.Sprintf("session %d", w.ID())
		}
		return out
	}
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

// buildStudy makes the engine study from the form's values and the loaded
// dataset, as `sweepbench run` does from its flags, and collects the
// engine's errors: per field where the error is the field's, else for the
// whole study.
func (m *Model) buildStudy() (s *engine.Study, note string, perField map[string]error, general error) {
	v := m.form.Values()
	perField = map[string]error{}
	hma, err := engine.ParseRange("--hma", v[form.HMA])
	if err != nil {
		perField[form.HMA] = err
	}
	hma3, err := engine.ParseRange("--hma3", v[form.HMA3])
	if err != nil {
		perField[form.HMA3] = err
	}
	fee, err := strconv.ParseFloat(v[form.Fee], 64)
	if err != nil {
		perField[form.Fee] = fmt.Errorf("--fee %q: not a number; want a fraction per side, e.g. 0.00045", v[form.Fee])
	}
	mode, err := engine.ParseMode(v[form.Mode])
	if err != nil {
		perField[form.Mode] = err
	}
	src, err := engine.ParseSource(v[form.Source])
	if err != nil {
		perField[form.Source] = err
	}
	precs, err := engine.ParsePrecisions(v[form.Precision])
	if err != nil {
		perField[form.Precision] = err
	}
	wma, err := engine.ParseFormulation(v[form.WMA])
	if err != nil {
		perField[form.WMA] = err
	}
	tol, err := strconv.ParseFloat(v[form.Borderline], 64)
	if err != nil || !(tol > 0) {
		perField[form.Borderline] = fmt.Errorf("--borderline %q: want a positive margin, e.g. 1e-5", v[form.Borderline])
	}
	head := 0
	if s := v[form.Head]; s != "" {
		head, err = strconv.Atoi(s)
		if err != nil || head < 0 {
			perField[form.Head] = fmt.Errorf("--head %q: want a positive bar count or 0 for all", s)
		}
	}
	tf, err := data.ParseTimeframe(v[form.Timeframe])
	if err != nil {
		perField[form.Timeframe] = fmt.Errorf("--timeframe: %w", err)
	}
	be, note, err := m.ctx.Registry.Lookup(v[form.Backend])
	if err != nil {
		perField[form.Backend] = err
	}
	grid := engine.Grid{HMA: hma, HMA3: hma3}
	if perField[form.HMA] == nil && perField[form.HMA3] == nil {
		// A length below the minimum belongs to its field (marked there
		// like a parse error); the rest (too many combos) to the grid.
		switch err := grid.Validate(0); {
		case err == nil:
		case strings.HasPrefix(err.Error(), "--hma3 "):
			perField[form.HMA3] = err
		case strings.HasPrefix(err.Error(), "--hma "):
			perField[form.HMA] = err
		default:
			general = err
		}
	}
	if perField[form.Timeframe] == nil && perField[form.Head] == nil {
		m.derive(tf, v[form.Timeframe], head)
	}
	if m.deriveErr != nil {
		perField[form.Timeframe] = m.deriveErr
	}
	if general == nil && m.ctx.Raw == nil {
		general = errors.New("no dataset yet: choose one in the Dataset pane (enter loads it)")
	}
	if len(perField) > 0 || general != nil {
		return nil, "", perField, general
	}
	ds := m.ctx.Dataset
	bpy := m.cfg.Flags.BarsPerYear
	if bpy == 0 {
		bpy = engine.BarsPerYear(ds.Info.MedianSpacing)
	}
	params := engine.Params{Fee: fee, Mode: mode, Source: src, BarsPerYear: bpy}
	if err := params.Validate(); err != nil {
		if strings.HasPrefix(err.Error(), "--fee") {
			perField[form.Fee] = err
		} else {
			general = err
		}
		return nil, "", perField, general
	}
	s = &engine.Study{Dataset: ds, Grid: grid, Params: params, Precisions: precs, WMA: wma, Backend: be, Tolerance: tol,
		Fallback: m.ctx.Registry.Reference()}
	if err := s.Validate(); err != nil {
		return nil, "", perField, err
	}
	return s, note, perField, nil
}

// derive sets ctx.Dataset to the loaded bars resampled to tf and trimmed to
// the first head bars (as `run --timeframe --head` does), keeping the last
// result while the inputs are unchanged.
func (m *Model) derive(tf time.Duration, tfName string, head int) {
	raw := m.ctx.Raw
	if raw == nil {
		m.ctx.Dataset, m.deriveErr = nil, nil
		return
	}
	key := fmt.Sprintf("%p|%d|%d", raw, tf, head)
	if key == m.deriveKey {
		return
	}
	m.deriveKey = key
	ds := raw
	if tf > 0 {
		r, err := raw.Resample(tf)
		if err != nil {
			m.ctx.Dataset, m.deriveErr = nil, fmt.Errorf("--timeframe %s: %w", tfName, err)
			return
		}
		ds = r
	}
	ds = ds.Head(head)
	m.ctx.Dataset, m.deriveErr = ds, nil
}
