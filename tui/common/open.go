package common

import (
	"context"

	"sweepbench/engine"
	"sweepbench/sessions"
)

// OpenSession reads saved session id for the results screen, as the
// OpenedMsg intent carries it: a large grid (PagedGrid) as its summary
// (the results screen pages the rest from st), a small one with every
// result, and its study rebuilt (sessions.Rebuild: its dataset loaded
// again by load, refused when its bars changed; Why says why Study is
// nil). Every screen that opens a session goes through it.
func OpenSession(ctx context.Context, st *sessions.Store, load sessions.Loader, reg *engine.Registry, id int64) (OpenedMsg, error) {
	ss, err := st.Get(ctx, id)
	if err != nil {
		return OpenedMsg{}, err
	}
	var rep *engine.Report
	if PagedGrid(ss.Grid) {
		rep, err = st.OpenSummary(ctx, id, engine.SummaryOptions{})
	} else {
		rep, err = st.Open(ctx, id)
	}
	if err != nil {
		return OpenedMsg{}, err
	}
	s, why := sessions.Rebuild(ctx, ss, reg, "", load)
	if why != nil {
		s = nil
	}
	return OpenedMsg{Session: ss, Report: rep, Study: s, Why: why}, nil
}
