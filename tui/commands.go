package tui

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"sweepbench/engine"
	"sweepbench/engine/data"
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
		rep *engine.Report
		err error
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

func inspectCmd(gen int, s *engine.Study, idx int) tea.Cmd {
	c := s.Grid.At(idx)
	return guard(func() tea.Msg {
		ins := &common.Inspection{Index: idx, Combo: c}
		for _, p := range s.Precisions {
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

// runner is one RunStudy in its goroutine: progress arrives on a bounded
// channel (the engine never blocks on it and drops events when it is full),
// the report on done.
type runner struct {
	gen      int
	cancel   context.CancelFunc
	progress chan engine.Progress
	done     chan doneMsg
	last     time.Time
}

func startRunner(parent context.Context, gen int, s *engine.Study) *runner {
	ctx, cancel := context.WithCancel(parent)
	r := &runner{gen: gen, cancel: cancel, progress: make(chan engine.Progress, 64), done: make(chan doneMsg, 1)}
	go func() {
		var rep *engine.Report
		var err error
		defer func() {
			if x := recover(); x != nil {
				err = fmt.Errorf("internal error in the sweep: %v", x)
			}
			r.done <- doneMsg{gen: gen, rep: rep, err: err}
		}()
		rep, err = engine.RunStudy(ctx, s, engine.StudyOptions{Progress: r.progress})
	}()
	return r
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
		if err := grid.Validate(0); err != nil {
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
	s = &engine.Study{Dataset: ds, Grid: grid, Params: params, Precisions: precs, WMA: wma, Backend: be, Tolerance: tol}
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
