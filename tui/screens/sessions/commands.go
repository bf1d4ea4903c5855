package sessions

import (
	"context"
	"fmt"

	tea "github.com/charmbracelet/bubbletea"

	"sweepbench/engine"
	store "sweepbench/sessions"
	"sweepbench/tui/common"
)

// The store's answers, tagged for the sessions screen (common.Tag); gen
// is the request they answer.
type (
	listedMsg struct {
		gen  int
		list []store.Session
		err  error
	}
	openedMsg struct {
		gen   int
		id    int64
		rep   *engine.Report
		ss    *store.Session
		study *engine.Study // nil when the dataset could not be loaded again
		why   error         // why study is nil
		err   error
	}
	diffMsg struct {
		gen int
		d   *store.Diff
		err error
	}
	deletedMsg struct {
		id  int64
		err error
	}
	resumeReadyMsg struct {
		gen   int
		id    int64
		study *engine.Study
		note  string
		err   error
	}
)

// sessionStudy rebuilds the study of a saved session (sessions.Rebuild:
// its Spec, its dataset loaded again and refused when its bars changed,
// auto when its backend cannot run here; the note says so).
func sessionStudy(ctx context.Context, ss *store.Session, load store.Loader, reg *engine.Registry) (*engine.Study, string, error) {
	s, err := store.Rebuild(ctx, ss, reg, "", load)
	if err != nil {
		return nil, "", err
	}
	return s, s.Note, nil
}

func listCmd(gen int, st *store.Store) tea.Cmd {
	return common.Guard(func() tea.Msg {
		list, err := st.List(context.Background(), store.ListOptions{})
		return listedMsg{gen, list, err}
	}, func(err error) tea.Msg { return listedMsg{gen: gen, err: err} })
}

// openCmd reads session id for the results screen (common.OpenSession).
func openCmd(gen int, st *store.Store, load store.Loader, reg *engine.Registry, id int64) tea.Cmd {
	return common.Guard(func() tea.Msg {
		o, err := common.OpenSession(context.Background(), st, load, reg, id)
		if err != nil {
			return openedMsg{gen: gen, id: id, err: err}
		}
		return openedMsg{gen: gen, id: id, rep: o.Report, ss: o.Session, study: o.Study, why: o.Why}
	}, func(err error) tea.Msg { return openedMsg{gen: gen, id: id, err: err} })
}

func diffCmd(gen int, st *store.Store, load store.Loader, a, b store.RunRef) tea.Cmd {
	return common.Guard(func() tea.Msg {
		d, err := st.Diff(context.Background(), a, b, load)
		return diffMsg{gen, d, err}
	}, func(err error) tea.Msg { return diffMsg{gen: gen, err: err} })
}

func deleteCmd(st *store.Store, id int64) tea.Cmd {
	return common.Guard(func() tea.Msg {
		return deletedMsg{id, st.Delete(context.Background(), id, false)}
	}, func(err error) tea.Msg { return deletedMsg{id, err} })
}

func resumeReadyCmd(gen int, st *store.Store, load store.Loader, reg *engine.Registry, id int64) tea.Cmd {
	return common.Guard(func() tea.Msg {
		ctx := context.Background()
		ss, err := st.Get(ctx, id)
		if err != nil {
			return resumeReadyMsg{gen: gen, id: id, err: err}
		}
		if ss.Status == engine.StatusComplete {
			return resumeReadyMsg{gen: gen, id: id, err: fmt.Errorf("session %d is %w", id, store.ErrComplete)}
		}
		s, note, err := sessionStudy(ctx, ss, load, reg)
		if err != nil {
			err = fmt.Errorf("session %d cannot be resumed: %w", id, err)
		}
		return resumeReadyMsg{gen: gen, id: id, study: s, note: note, err: err}
	}, func(err error) tea.Msg { return resumeReadyMsg{gen: gen, id: id, err: err} })
}
