package run

import (
	"context"
	"fmt"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"sweepbench/engine"
	"sweepbench/sessions"
	"sweepbench/tui/common"
)

// progressEvery bounds the UI's progress updates (<= 20 per second).
const progressEvery = 50 * time.Millisecond

// The runner's answers, tagged for the run screen (common.Tag).
type (
	// ProgressMsg is the latest event of each lane since the last one.
	ProgressMsg struct {
		gen int
		ps  []engine.Progress
	}
	doneMsg struct {
		gen int
		ps  []engine.Progress
		outcome
	}
)

// outcome is what a run's work produced: the report (nil when it failed
// before anything ran), why it stopped early, and what became of saving it.
type outcome struct {
	rep   *engine.Report
	err   error
	saved string // "session 3" when it was saved
	id    int64  // the session it was saved as (0: not saved, or not whole)
	warn  string // why it was not (fully) saved
	info  string // what resuming did
	// study is the study rep is of when it is not the one the run
	// started with (a suite's last dataset).
	study *engine.Study
}

// work is what a runner runs in its goroutine: a study, saved or not, or
// a resumed session.
type work func(ctx context.Context, progress chan<- engine.Progress, str *stream) outcome

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
	stream   *stream       // the combos computed so far (the results so far)
	places   chan PlaceMsg // the study's place in Config.Gate's queue; nil without a gate
	suite    *suiteState   // where a suite stands; nil for one study
}

func startRunner(parent context.Context, gen int, w work) *runner {
	ctx, cancel := context.WithCancel(parent)
	r := &runner{gen: gen, cancel: cancel, progress: make(chan engine.Progress, 64), done: make(chan doneMsg, 1),
		finished: make(chan struct{}), stream: newStream(streamCap)}
	go func() {
		var out outcome
		defer close(r.finished)
		defer func() {
			if x := recover(); x != nil {
				out.err = fmt.Errorf("internal error in the sweep: %v", x)
			}
			r.done <- doneMsg{gen: gen, outcome: out}
		}()
		out = w(ctx, r.progress, r.stream)
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
	return func(ctx context.Context, progress chan<- engine.Progress, str *stream) (out outcome) {
		if save && st == nil && storeErr != nil {
			out.warn = fmt.Sprintf("this run is not saved: %v; it is still computed and shown", storeErr)
		}
		opt := studyOptions(s, progress, str.add)
		var rec sessions.Recording
		out.rep, rec, out.err = sessions.RunStudy(ctx, st, s, opt, recordOptions(progress))
		if w := robustnessWarning(rec, out.err); w != "" {
			out.warn = w
		}
		if w := recorded(rec, &out); w != "" {
			out.warn = w
		}
		return out
	}
}

// studyOptions are the options the workbench runs a study with.
//
// A grid above common.PagedAbove keeps no result in memory: each run keeps
// its best (engine.DefaultKeep by the objective) and its summary (top
// lists and heatmaps, engine.SummaryOptions' defaults), and the results
// screen pages the rest from the saved session (common.Results, paged).
// Below it every result is kept: they take less than a summary.
func studyOptions(s *engine.Study, progress chan<- engine.Progress, sink func(engine.Precision, []engine.ComboResult) error) engine.StudyOptions {
	opt := engine.StudyOptions{Progress: progress, Sink: sink}
	if common.PagedGrid(s.Grid) {
		opt.Discard, opt.Summary = true, &engine.SummaryOptions{}
	}
	return opt
}

// recordOptions are the options the workbench saves a study with. The
// robustness statistics (--blocks, the form's blocks) are the run path's,
// as run computes them (sessions.RunStudy: beside the rest of the study
// once the lane with the block statistics is done, on the GPU that
// computed them when it can); the progress view is told when they start.
func recordOptions(progress chan<- engine.Progress) sessions.RecordOptions {
	return sessions.RecordOptions{Robustness: func(s *engine.Study) {
		select {
		case progress <- engine.Progress{Backend: s.Backend.Name(), Total: s.Grid.Len(), Phase: engine.PhaseRobustness}:
		default:
		}
	}}
}

// robustnessWarning is the warning when the robustness statistics of a
// study that ended without runErr could not be computed (rec.Robustness).
func robustnessWarning(rec sessions.Recording, runErr error) string {
	if rec.Robustness == nil || runErr != nil {
		return ""
	}
	return fmt.Sprintf("robustness: %v", rec.Robustness)
}

// recorded says what became of saving a study: the session it was saved
// as in out (saved, id), or a warning why it was not (fully) saved.
func recorded(rec sessions.Recording, out *outcome) string {
	switch {
	case rec.Err != nil && rec.Err.Stage == sessions.SaveBegin:
		return fmt.Sprintf("this run is not saved: %v; it is still computed and shown", rec.Err.Err)
	case rec.Err != nil && rec.Err.Stage == sessions.SaveSave:
		return fmt.Sprintf("saving stopped: %v; the run went on unsaved", rec.Err.Err)
	case rec.Err != nil:
		return fmt.Sprintf("session %d was not finished in the database: %v", rec.ID, rec.Err.Err)
	case rec.ID != 0:
		out.saved, out.id = fmt.Sprintf("session %d", rec.ID), rec.ID
	}
	return ""
}

// resumeWork computes what session id is missing (sessions.Store.Resume)
// and returns the whole session's report.
func resumeWork(st *sessions.Store, id int64, s *engine.Study) work {
	return func(ctx context.Context, progress chan<- engine.Progress, _ *stream) (out outcome) {
		rep, lanes, err := st.Resume(ctx, id, s, sessions.ResumeOptions{Progress: progress})
		out.rep, out.err = rep, err
		if rep != nil {
			out.saved, out.id = fmt.Sprintf("session %d", id), id
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
			if p.Phase == phaseDataset {
				lanes = append(lanes[:0], p) // the events before are the dataset before's
				return
			}
			for i := range lanes {
				if lanes[i].Precision == p.Precision && lanes[i].Phase != phaseDataset {
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
		case pl := <-r.places:
			return pl
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
				return ProgressMsg{r.gen, lanes}
			}
		}
	}
}
