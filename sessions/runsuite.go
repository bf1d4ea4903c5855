package sessions

import (
	"context"
	"fmt"

	"sweepbench/engine"
	"sweepbench/engine/suite"
)

// Running a suite: the one path under `run --data A --data B` and the
// workbench's run of several datasets. Each dataset is an ordinary study
// (RunStudy), run one after the other, saved as a session of its own whose
// Spec.Suite is "ID D/N" (suite.SuiteID, suite.SuiteRef), its reference
// lane streamed into the suite's suite.Aggregator.

// SuiteOptions are a front end's parts of a suite's run; every callback is
// optional but Build.
type SuiteOptions struct {
	// Build builds dataset d's study from its spec (Data and Suite set):
	// the CLI loads it as run does, the workbench checks the dataset is
	// allowed first.
	Build func(ctx context.Context, d int, spec engine.Spec) (*engine.Study, error)
	// Options are dataset d's study options (Keep, Discard, Progress,
	// Summary, a Sink of the front end's own, seeing every chunk after the
	// aggregator).
	Options func(d int, st *engine.Study) engine.StudyOptions
	// Record is given to each dataset's RunStudy.
	Record RecordOptions
	// Starting is told of dataset d (from 0) of n before it is built.
	Starting func(d, n int, dataset string)
	// Built is told of dataset d's study before it runs.
	Built func(d int, st *engine.Study)
	// Ran is told of dataset d's report once its study ends, whether or
	// not it completed (err says why not), before the suite goes on.
	Ran func(d int, st *engine.Study, rep *engine.Report, rec Recording, err error)
}

// SuiteRun is what a suite's run produced: the reports of the datasets
// that completed, in order, the sessions saved whole, and the aggregate
// (nil unless every dataset completed).
type SuiteRun struct {
	ID        string           // suite.SuiteID
	Run       string           // this run of it (suite.NewSuiteRun; its sessions' SuiteRef.Run)
	Lane      engine.Precision // the aggregate's lane (suite.ReferenceLane)
	Reports   []*engine.Report
	Sessions  []int64 // the sessions saved whole, in dataset order
	Aggregate *suite.Aggregate
}

// SuiteError is the dataset a suite stopped on: its study could not be
// built (Report nil), or it failed or was cancelled (Report what it
// computed, nil when nothing ran).
type SuiteError struct {
	D       int // from 0
	Dataset string
	Report  *engine.Report
	Err     error
}

func (e *SuiteError) Error() string { return fmt.Sprintf("dataset %s: %v", e.Dataset, e.Err) }
func (e *SuiteError) Unwrap() error { return e.Err }

// RunSuite runs spec on every dataset, one after the other (saved in s
// unless s is nil), and returns what completed. An error other than the
// spec's own (Parse) is a *SuiteError naming the dataset: the suite stops
// there, what completed before it saved and in the returned SuiteRun.
func RunSuite(ctx context.Context, s *Store, spec engine.Spec, datasets []string, opt SuiteOptions) (*SuiteRun, error) {
	set, err := spec.Parse()
	if err != nil {
		return nil, err
	}
	id, run := suite.SuiteID(spec, datasets), suite.NewSuiteRun()
	names := make([]string, len(datasets))
	copy(names, datasets)
	lane := suite.ReferenceLane(set.Precisions)
	agg := suite.NewAggregator(set.Grid, names, set.Objective, lane)
	res := &SuiteRun{ID: id, Run: run, Lane: lane}
	for d, path := range datasets {
		sp := spec
		sp.Data, sp.Suite = path, suite.SuiteRef{ID: id, D: d + 1, N: len(datasets), Run: run}.String()
		if opt.Starting != nil {
			opt.Starting(d, len(datasets), path)
		}
		st, err := opt.Build(ctx, d, sp)
		if err != nil {
			return res, &SuiteError{D: d, Dataset: path, Err: err}
		}
		agg.Name(d, st.Dataset.Info.Name)
		if opt.Built != nil {
			opt.Built(d, st)
		}
		var so engine.StudyOptions
		if opt.Options != nil {
			so = opt.Options(d, st)
		}
		dd, own := d, so.Sink
		so.Sink = func(p engine.Precision, rs []engine.ComboResult) error {
			agg.Add(dd, p, rs)
			if own != nil {
				return own(p, rs)
			}
			return nil
		}
		rep, rec, runErr := RunStudy(ctx, s, st, so, opt.Record)
		if rep != nil && opt.Ran != nil {
			opt.Ran(d, st, rep, rec, runErr)
		}
		if rep == nil || runErr != nil {
			return res, &SuiteError{D: d, Dataset: path, Report: rep, Err: runErr}
		}
		if rec.ID != 0 && rec.Err == nil {
			res.Sessions = append(res.Sessions, rec.ID)
		}
		res.Reports = append(res.Reports, rep)
	}
	res.Aggregate = agg.Aggregate()
	return res, nil
}
