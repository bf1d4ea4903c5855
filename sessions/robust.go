package sessions

import (
	"context"
	"encoding/json"
	"errors"

	"sweepbench/engine"
	"sweepbench/engine/robust"
)

// Robustness on the run path: a study with per-block statistics
// (Study.Blocks, `--blocks`) has its robustness statistics (engine/robust:
// PBO, the DSR, the plateau, the walk-forward) computed here, by RunStudy
// beside the rest of the study once the lane with the block statistics is
// done (engine.StudyOptions.AfterBlocks), or by AnalyseReport for a report
// computed elsewhere (merged from shards). Their summary goes into the
// report (Report.Robustness: the table, the JSON report, Parquet's
// metadata) and the saved session (SetRobustness). No front end wires
// AfterBlocks or calls engine/robust's analysis itself: each phrases
// Recording.Robustness (or AnalyseReport's error) its own way.

// robustRun is one study's robustness statistics, computed beside it.
type robustRun struct {
	rob *robust.Robustness
	err error
}

// after is the AfterBlocks of st's study: it tells started (when set),
// analyses the early report, then calls next (the caller's own
// AfterBlocks, when set).
func (r *robustRun) after(ctx context.Context, st *engine.Study, started func(*engine.Study), next func(*engine.Report)) func(*engine.Report) {
	return func(rep *engine.Report) {
		if started != nil {
			started(st)
		}
		r.rob, r.err = robust.AnalyseStudy(ctx, st, rep)
		if next != nil {
			next(rep)
		}
	}
}

// keep puts the statistics' summary in rep (a report with per-block
// statistics; nothing is done without them) and in session id of s when
// there is one. Errors: why the statistics are not in rep (the analysis
// failed), or a *SaveError (SaveFinish) when they are in rep but not in
// the session.
func (r *robustRun) keep(ctx context.Context, s *Store, id int64, rep *engine.Report) error {
	if rep == nil || rep.Blocks == nil {
		return nil
	}
	err := r.err
	if err == nil && r.rob == nil {
		err = errors.New("internal error: the robustness statistics were not computed")
	}
	var js []byte
	if err == nil {
		js, err = json.Marshal(r.rob.Summary())
	}
	if err != nil {
		return err
	}
	rep.Robustness = js
	if s != nil && id != 0 {
		if err := s.SetRobustness(ctx, id, js); err != nil {
			return &SaveError{Stage: SaveFinish, ID: id, Err: err}
		}
	}
	return nil
}

// AnalyseReport computes the robustness statistics of rep, a report of st
// computed elsewhere (joined from shards by engine.MergeParts) and saved
// as session id of s (s nil or id 0: not saved), as RunStudy computes
// those of a study it runs: their summary goes into rep.Robustness and the
// session. Nothing is done when rep has no per-block statistics. Errors:
// robust.AnalyseStudy's (the statistics are not in rep), or a *SaveError
// (SaveFinish) when they are in rep but could not be saved.
func AnalyseReport(ctx context.Context, s *Store, id int64, st *engine.Study, rep *engine.Report) error {
	if rep == nil || rep.Blocks == nil {
		return nil
	}
	r := &robustRun{}
	r.rob, r.err = robust.AnalyseStudy(ctx, st, rep)
	return r.keep(ctx, s, id, rep)
}
