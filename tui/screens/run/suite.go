package run

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	tea "github.com/charmbracelet/bubbletea"

	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/engine/suite"
	"sweepbench/sessions"
	"sweepbench/tui/common"
)

// A suite (the form's data field naming several datasets) runs as `run
// --data A --data B` does, through sessions.RunSuite: each dataset after
// the other, saved as a session of its own labelled with the suite. The
// screen says which dataset computes and how far the suite is; cancel
// stops the suite, what completed saved; the results open on the last
// dataset that ran, with the suite's dataset line ([ ] and a at once).
//
// A suite needs the sessions database: the results screen reads its
// other datasets from there. Without one (--no-save, or a database that
// cannot be opened) it is refused with a message saying so.

// suiteState is where a suite's run stands, written by its goroutine and
// read by the screen at each progress message.
type suiteState struct {
	mu      sync.Mutex
	id      string
	n       int
	d       int           // the dataset computing, from 0
	name    string        // its spec
	study   *engine.Study // its study, nil until built
	stream  *stream       // its results so far
	last    *engine.Study // the study of the last dataset that ran
	lastID  int64         // its session
	saved   []int64
	partial int64 // the session of the dataset the suite stopped on, saved as far as it got; 0 none
	current int   // the d the screen shows (the screen's own: not under mu)
}

// fraction is how far the suite is, 0 to 1, lane is how far the dataset
// computing is.
func (s *suiteState) fraction(lane float64) float64 {
	d, _, _, _ := s.at()
	if d != s.current {
		lane = 0 // the lanes on screen are still the dataset before's
	}
	return (float64(d) + lane) / float64(max(s.n, 1))
}

func (s *suiteState) at() (d int, name string, st *engine.Study, str *stream) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.d, s.name, s.study, s.stream
}

// ErrSuiteNeedsStore refuses a suite run without a sessions database.
var ErrSuiteNeedsStore = errors.New("a suite (several datasets) needs the sessions database: each dataset is saved as a session and the results read the others from it; run without --no-save, or one dataset at a time")

// StartSuite runs s (the form's study of datasets[0]) on every dataset,
// one after the other, once checked as Start checks a study (the first
// dataset's preflight stands for each); while a study computes it is
// queued to start when that one ends, as Start queues a study.
func (m *Model) StartSuite(s *engine.Study, datasets []string) tea.Cmd {
	if m.cfg.NoSave || m.cfg.Store == nil {
		err := ErrSuiteNeedsStore
		if !m.cfg.NoSave && m.cfg.StoreErr != nil {
			err = fmt.Errorf("%w (the database: %v)", err, m.cfg.StoreErr)
		}
		m.host.Do(common.ErrMsg{Err: err})
		return nil
	}
	return m.preflight(s, datasets)
}

// suiteWork runs spec over datasets (sessions.RunSuite), each study built
// as run builds it (engine.Spec.BuildContext, a dataset the workbench may
// not read refused) and run with the workbench's options.
func suiteWork(spec engine.Spec, datasets []string, st *sessions.Store, cx *common.Context, su *suiteState) work {
	reg, allowed := cx.Registry, cx.DataAllowed
	return func(ctx context.Context, progress chan<- engine.Progress, _ *stream) (out outcome) {
		var warns []string
		var lastRep *engine.Report
		res, err := sessions.RunSuite(ctx, st, spec, datasets, sessions.SuiteOptions{
			Starting: func(d, _ int, path string) {
				su.mu.Lock()
				su.d, su.name, su.study, su.stream = d, path, nil, nil
				su.mu.Unlock()
			},
			Build: func(ctx context.Context, _ int, sp engine.Spec) (*engine.Study, error) {
				if allowed != nil {
					if err := allowed(sp.Data); err != nil {
						return nil, err
					}
				}
				return sp.BuildContext(ctx, reg)
			},
			Options: func(d int, s *engine.Study) engine.StudyOptions {
				str := newStream(streamCap)
				su.mu.Lock()
				su.study, su.stream = s, str
				su.mu.Unlock()
				// The screen turns to this dataset's study at this mark, in
				// the lanes' own order: every event before it is the dataset
				// before's (it blocks, as no event after it may pass it).
				select {
				case progress <- datasetMark(d):
				case <-ctx.Done():
				}
				// Each lane preparing (never blocks).
				for _, p := range s.Precisions {
					select {
					case progress <- engine.Progress{Backend: s.Backend.Name(), Precision: p, Total: s.Grid.Len(), Phase: engine.PhasePrepare}:
					default:
					}
				}
				return studyOptions(s, progress, str.add)
			},
			Record: recordOptions(progress),
			Ran: func(d int, s *engine.Study, rep *engine.Report, rec sessions.Recording, runErr error) {
				if w := robustnessWarning(rec, runErr); w != "" {
					warns = append(warns, fmt.Sprintf("dataset %s: %s", data.Sanitize(s.Spec.Data), w))
				}
				var o outcome
				if w := recorded(rec, &o); w != "" {
					warns = append(warns, fmt.Sprintf("dataset %s: %s", data.Sanitize(s.Spec.Data), w))
				}
				if o.id != 0 && runErr != nil {
					su.mu.Lock()
					su.partial = o.id // saved as far as it got (cancelled): resumable
					su.mu.Unlock()
				}
				if lastRep != nil && runErr != nil && combos(rep) == 0 {
					return // cancelled before a combo of it completed: the results show the dataset before
				}
				lastRep = rep
				su.mu.Lock()
				su.last, su.lastID = s, o.id
				if o.id != 0 && runErr == nil {
					su.saved = append(su.saved, o.id)
				}
				su.mu.Unlock()
			},
		})
		out.rep, out.warn = lastRep, strings.Join(warns, "; ")
		su.mu.Lock()
		out.study, out.id = su.last, su.lastID
		saved, partial := append([]int64(nil), su.saved...), su.partial
		su.mu.Unlock()
		var se *sessions.SuiteError
		switch {
		case errors.As(err, &se) && errors.Is(se.Err, context.Canceled):
			out.err = se.Err // the results say it was cancelled
			done := 0
			if res != nil {
				done = len(res.Reports)
			}
			out.info = fmt.Sprintf("the suite was cancelled on dataset %d of %d (%s): %d complete", se.D+1, len(datasets), data.Sanitize(se.Dataset), done)
		case err != nil:
			out.err = err // names the dataset
		}
		if len(saved) > 0 || partial != 0 {
			out.saved = fmt.Sprintf("suite %s: %s", suite.SuiteID(spec, datasets), sessions.IDList(saved))
			if len(saved) == 0 {
				out.saved = fmt.Sprintf("suite %s: none whole", suite.SuiteID(spec, datasets))
			}
			if partial != 0 {
				out.saved += fmt.Sprintf(" (session %d saved as far as it got: R in the sessions browser resumes it)", partial)
			}
		}
		return out
	}
}

// suiteLines are the lines over the lanes while a suite runs: the
// dataset computing and how far the suite is.
func (m *Model) suiteLines() []string {
	if m.run == nil || m.run.suite == nil {
		return nil
	}
	su := m.run.suite
	d, name, _, _ := su.at()
	t := m.ctx.Theme
	return []string{
		t.Truncate(fmt.Sprintf("dataset %d of %d: %s", d+1, su.n, data.Sanitize(name)), m.w),
		t.Subtle.Render(t.Truncate(fmt.Sprintf("suite %s: %.0f%% of the %d datasets; esc cancels (the datasets complete stay saved)",
			su.id, 100*su.fraction(m.view.Fraction()), su.n), m.w)),
	}
}

// phaseDataset is the phase of the mark a suite puts among its lanes'
// events when dataset Done (from 0) starts: the runner drops the events
// gathered before it, the screen turns to that dataset at it.
const phaseDataset engine.Phase = "dataset"

func datasetMark(d int) engine.Progress { return engine.Progress{Phase: phaseDataset, Done: d} }

// lanes are the lanes' events of ps, the screen turned to the next
// dataset of a suite first where ps holds its mark.
func (m *Model) lanes(ps []engine.Progress) []engine.Progress {
	out := ps[:0:0]
	for _, p := range ps {
		if p.Phase == phaseDataset {
			m.suiteProgress()
			continue
		}
		out = append(out, p)
	}
	return out
}

// suiteProgress follows the suite to its next dataset: the lanes start
// again and the results so far are the new dataset's.
func (m *Model) suiteProgress() {
	su := m.run.suite
	if su == nil {
		return
	}
	d, _, st, str := su.at()
	if st == nil || d == su.current && m.state.Study == st {
		return
	}
	su.current = d
	m.state.Study = st
	m.run.stream = str
	m.view.Next(st)
}

// combos counts the combos rep's runs completed.
func combos(rep *engine.Report) int {
	n := 0
	for _, r := range rep.Runs {
		n += r.Count()
	}
	return n
}
