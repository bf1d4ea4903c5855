package sessions

import (
	"context"
	"errors"
	"fmt"

	"sweepbench/engine"
	"sweepbench/engine/suite"
)

// Suites in the store: each dataset of a suite (suite.Suite, run by
// `run --data A --data B` or merged from shards) is saved as a session of
// its own whose Spec.Suite is "ID D/N" (suite.SuiteRef). SuiteOf finds
// the sessions of one suite again, and Aggregate computes the suite's
// cross-dataset figures from their saved runs with the engine's
// Aggregator, as the CLI's suite report does while it runs.

// Suite is the sessions of one suite found in the store.
type Suite struct {
	ID string
	// Run is the run of the suite (suite.SuiteRef.Run; "" for sessions
	// saved before runs were recorded).
	Run string
	// Members[d] is the session of dataset d+1 in that run, nil when the
	// store has none (removed, or not saved); len(Members) is the suite's
	// number of datasets.
	Members []*Session
}

// Missing lists the places (from 1) of the datasets the store has no
// session of.
func (su *Suite) Missing() []int {
	var out []int
	for d, ss := range su.Members {
		if ss == nil {
			out = append(out, d+1)
		}
	}
	return out
}

// Present counts the datasets the store has a session of.
func (su *Suite) Present() int { return len(su.Members) - len(su.Missing()) }

// SuiteOf reads the sessions of one run of suite ref.ID (ref is the
// Spec.Suite of one of them, which gives the number of datasets and the
// run): for each dataset the session of that run (the newest, should a
// run have saved two); for a ref saved before runs were recorded (no Run),
// the newest of the sessions that have none. Errors: the store's (*DBError); a session
// of the suite whose Spec.Suite does not parse, or that counts another
// number of datasets, is an error naming it.
func (s *Store) SuiteOf(ctx context.Context, ref suite.SuiteRef) (*Suite, error) {
	list, err := s.List(ctx, ListOptions{Suite: ref.ID})
	if err != nil {
		return nil, err
	}
	su := &Suite{ID: ref.ID, Run: ref.Run, Members: make([]*Session, ref.N)}
	for i := range list { // newest first
		ss := &list[i]
		r, ok, err := suite.ParseSuiteRef(ss.Spec.Suite)
		switch {
		case err != nil:
			return nil, fmt.Errorf("session %d: %w", ss.ID, err)
		case !ok || r.ID != ref.ID || r.Run != ref.Run:
			continue // another suite, or another run of it
		case r.N != ref.N:
			return nil, fmt.Errorf("session %d: suite %s counts %d datasets, not %d", ss.ID, ref.ID, r.N, ref.N)
		}
		if su.Members[r.D-1] == nil {
			su.Members[r.D-1] = ss
		}
	}
	return su, nil
}

// ErrNoSuiteData: no dataset of the suite has a session with a run to
// aggregate.
var ErrNoSuiteData = errors.New("no dataset of the suite has a saved run")

// Aggregate computes the suite's cross-dataset figures (suite.Aggregate:
// per combo of the grid, the median and the worst of the objective over
// the datasets and the number in profit) from the reference lane
// (suite.ReferenceLane: fp64, else the one precision) of each session the
// store has, read a batch at a time (memory: 8 bytes a combo a dataset and
// one batch). Datasets with no session are left out: Aggregate.Datasets
// names the ones counted, in suite order. The objective and the grid are
// the first member's (a suite's sessions share them). A combo a run did
// not compute (cancelled) counts as NaN on that dataset. Errors:
// ErrNoSuiteData, a run that cannot be read (OpenRunReader's errors,
// naming the session).
func (s *Store) Aggregate(ctx context.Context, su *Suite) (*suite.Aggregate, error) {
	var first *Session
	var names []string
	var members []*Session
	for _, ss := range su.Members {
		if ss == nil {
			continue
		}
		if first == nil {
			first = ss
		}
		names = append(names, ss.Dataset.Name)
		members = append(members, ss)
	}
	if first == nil {
		return nil, fmt.Errorf("suite %s: %w", su.ID, ErrNoSuiteData)
	}
	set, err := first.Spec.Parse()
	if err != nil {
		return nil, fmt.Errorf("session %d: %w", first.ID, err)
	}
	lane := suite.ReferenceLane(first.Precisions)
	agg := suite.NewAggregator(first.Grid, names, set.Objective, lane)
	for d, ss := range members {
		if !sameGrid(ss.Grid, first.Grid) {
			if ss.Grid.Strategy == nil && first.Grid.Strategy == nil {
				return nil, fmt.Errorf("session %d: grid hma %s x hma3 %s, not the suite's hma %s x hma3 %s",
					ss.ID, ss.Grid.HMA, ss.Grid.HMA3, first.Grid.HMA, first.Grid.HMA3)
			}
			return nil, fmt.Errorf("session %d: grid %s, not the suite's %s", ss.ID, GridName(ss.Grid), GridName(first.Grid))
		}
		if ss.Run(lane) == nil {
			continue // not started: every combo NaN
		}
		rr, err := s.OpenRunReader(ctx, ss.ID, lane)
		if err != nil {
			return nil, err
		}
		if err := rr.Scan(ctx, func(rs []engine.ComboResult) error { agg.Add(d, lane, rs); return nil }); err != nil {
			return nil, err
		}
	}
	return agg.Aggregate(), nil
}
