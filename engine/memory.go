package engine

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"unsafe"

	"sweepbench/engine/memlimit"
	"sweepbench/engine/text"
)

// MemoryForecast is what a study will hold in host memory at its peak on
// the CPU path: the indicator series of every unique length in each
// precision (built up front, SPEC "Indicators"; per tile when the study
// runs in tiles), kept for the parity report, and every combo's result of
// each precision (Report.Runs). A GPU backend holds the series on the
// device and uploads the bars, so for it the series figure is an upper
// bound of the host's share.
type MemoryForecast struct {
	Series  int64 // bytes of indicator series, all precisions (the largest tile's)
	Results int64 // bytes of per-combo results, all precisions
	// Tiles is how many tiles the study runs in (1: untiled), so that its
	// series fit the series budget (SeriesBudgetEnv; see "Tiles" in
	// tile.go); SeriesAll is what the series of the whole grid would take.
	Tiles     int
	SeriesAll int64
}

// Total is Series + Results, bytes.
func (m MemoryForecast) Total() int64 { return m.Series + m.Results }

// ForecastMemory forecasts s's peak host memory with every result kept:
// ForecastMemoryWith(s, false).
func ForecastMemory(s *Study) MemoryForecast { return ForecastMemoryWith(s, false) }

// ForecastMemoryWith forecasts s's peak host memory: per precision, (unique
// HMA lengths + unique HMA3 series, one per p = floor(L/2): Grid.Distinct)
// x bars series values of 8 (fp64) or 4 (fp32) bytes, plus the bar
// returns, of the largest tile when the study runs in tiles; plus the
// per-combo results (resultsForecast).
func ForecastMemoryWith(s *Study, discard bool) MemoryForecast {
	var m MemoryForecast
	if s.Dataset == nil {
		return m
	}
	m.Results = resultsForecast(s, discard)
	per := seriesBytes(s.Dataset.Bars.Len(), s.Precisions)
	m.SeriesAll = gridSeries(s.Grid) * per
	m.Series, m.Tiles = m.SeriesAll, 1
	if ts, _, err := s.tiles(discard); err == nil && len(ts) > 1 {
		m.Series, m.Tiles = 0, len(ts)
		for _, t := range ts {
			m.Series = max(m.Series, gridSeries(t.Grid)*per)
		}
	}
	return m
}

// resultsForecast is the per-combo results part of s's forecast: per
// precision the grid's combos x the size of one ComboResult, or, when
// results are not kept (discard: StudyOptions.Discard), 12 bytes per combo
// (trades and total return) when both precisions run; plus, when both
// run, one ComboParity per combo (the parity report's per-combo rows);
// plus the per-block statistics when the study asks for them (44 bytes a
// combo and block, 16 a combo).
func resultsForecast(s *Study, discard bool) int64 {
	var r int64
	combos := int64(s.Grid.Len())
	both := slices.Contains(s.Precisions, FP64) && slices.Contains(s.Precisions, FP32)
	for range s.Precisions {
		switch {
		case !discard:
			r += combos * int64(unsafe.Sizeof(ComboResult{}))
		case both:
			r += combos * 12
		}
	}
	if both {
		r += combos * int64(unsafe.Sizeof(ComboParity{}))
	}
	if s.Blocks > 0 {
		// Per-block statistics (BlockStats): 7 fields of 4 or 8 bytes a
		// combo and block, 2 of 8 a combo.
		r += combos * (int64(s.Blocks)*(4+4*8+4+4) + 16)
		if discard {
			r += combos * 20 // the lane's trades, returns and drawdowns kept for the constraints
		}
	}
	return r
}

// MemoryError refuses a study whose forecast does not fit in the memory
// available (ForecastMemory against memlimit.SystemMemoryLimit: the least of
// MemAvailable, RLIMIT_AS and the cgroup limits), before anything is
// allocated; the message says which limit bound it.
type MemoryError struct {
	Need      MemoryForecast
	Available int64                // bytes
	Limit     memlimit.MemoryLimit // what bounds Available (its Describe is said)
}

func (e *MemoryError) Error() string {
	series := text.Bytes(e.Need.Series)
	if e.Need.Tiles > 1 {
		series += fmt.Sprintf(" a tile, in %d tiles", e.Need.Tiles)
	}
	bound := ""
	if d := e.Limit.Describe(); d != "" {
		bound = ", bound by " + d
	}
	return fmt.Sprintf("the study needs about %s of memory (indicator series %s, per-combo results %s) and %s is available%s: "+
		"use fewer or shorter lengths, fewer bars, or one precision", text.Bytes(e.Need.Total()), series, text.Bytes(e.Need.Results), text.Bytes(e.Available), bound)
}

// memoryLimit is what a new allocation can have and what bounds it
// (memlimit.SystemMemoryLimit). It is a variable so that tests can fix it.
var memoryLimit = memlimit.SystemMemoryLimit

// availableMemory is memoryLimit's bytes; 0 when nothing is known (then
// nothing is refused).
func availableMemory() int64 { return memoryLimit().Available }

// checkMemory returns a *MemoryError when s's forecast exceeds the memory
// available: its per-combo results alone, or with the series of its
// largest tile (when the series budget is the system's, one tile that
// cannot hold one combo's series is that too); the series budget's own
// error (TileBudgetError, a malformed SeriesBudgetEnv) when it is the
// user's.
func checkMemory(s *Study, discard bool) error { return checkMemoryWith(s, discard, memoryLimit()) }

// CheckMemory is checkMemory under the limit it reads, returned with the
// error: the memory check before a study (package preflight) does what
// RunStudy's does.
func CheckMemory(s *Study, discard bool) (memlimit.MemoryLimit, error) {
	lim := memoryLimit()
	return lim, checkMemoryWith(s, discard, lim)
}

// checkMemoryWith is checkMemory under limit lim.
func checkMemoryWith(s *Study, discard bool, lim memlimit.MemoryLimit) error {
	have := lim.Available
	need := func() error { return &MemoryError{Need: ForecastMemoryWith(s, discard), Available: have, Limit: lim} }
	if have > 0 && resultsForecast(s, discard) > have {
		return need()
	}
	if _, _, err := s.tiles(discard); err != nil {
		var tb *TileBudgetError
		if _, set := os.LookupEnv(SeriesBudgetEnv); errors.As(err, &tb) && !set && have > 0 {
			return need()
		}
		return err
	}
	if have > 0 && ForecastMemoryWith(s, discard).Total() > have {
		return need()
	}
	return nil
}

// Size says how big s is in words: "1,199,000 combos in 2 precisions".
func (s *Study) Size() string {
	p := "precisions"
	if len(s.Precisions) == 1 {
		p = "precision"
	}
	return fmt.Sprintf("%s in %d %s", text.Plural(s.Grid.Len(), "combo"), len(s.Precisions), p)
}

// TileGrids is the grid of each tile s runs in (one when it is not tiled),
// as RunStudy cuts it, for the estimate of package preflight.
func (s *Study) TileGrids(discard bool) ([]Grid, error) {
	ts, _, err := s.tiles(discard)
	if err != nil {
		return nil, err
	}
	gs := make([]Grid, len(ts))
	for i, t := range ts {
		gs[i] = t.Grid
	}
	return gs, nil
}
