package sessions

import (
	"context"

	"sweepbench/engine"
)

// SaveReport saves rep, a report of study st computed elsewhere (joined
// from shards by engine.MergeParts), as a session: what sessions.RunStudy
// saves of a study it runs, its results, final state and parity report,
// with st's description (its Spec, dataset, grid and parameters). It
// returns the session's id (0 when nothing was recorded).
func (s *Store) SaveReport(ctx context.Context, st *engine.Study, rep *engine.Report) (int64, error) {
	w, err := s.Begin(ctx, st)
	if err != nil {
		return 0, err
	}
	const chunk = 1 << 14
	for _, run := range rep.Runs {
		for lo := 0; lo < len(run.Results); lo += chunk {
			if err := w.Save(run.Precision, run.Results[lo:min(lo+chunk, len(run.Results))]); err != nil {
				_ = w.Finish(rep, err)
				return w.ID(), err
			}
		}
	}
	return w.ID(), w.Finish(rep, nil)
}
