package common

import (
	"context"

	"sweepbench/engine"
	"sweepbench/sessions"
)

// OpenSession reads saved session id for the results screen, as the
// sessions browser opens one, the results screen steps to another dataset
// of a suite and the Slurm screen opens a merge's: as its summary when its
// grid is paged (PagedGrid), else with every result, and its study built again (sessions.Rebuild:
// its dataset loaded again with load; a study that cannot be built leaves
// Study nil and Why saying why, the panes then show no charts). Errors
// are the store's (sessions.ErrNotFound wrapped for a session removed).
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
