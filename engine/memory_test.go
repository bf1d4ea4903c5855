package engine

import (
	"context"
	"errors"
	"strings"
	"testing"
	"unsafe"

	"sweepbench/engine/memlimit"
)

// TestForecastMemory: by hand, 6 combos (2 x 3 lengths) on the fake
// study's bars in fp64 and fp32: (2 HMA series + 2 HMA3 series, hma3 6 and
// 7 sharing p = 3, + the returns) x bars x (8+4) bytes, and 6 results of
// 216 bytes (index, two lengths and 24 eight-byte metrics) per precision,
// plus 6 parity rows.
func TestForecastMemory(t *testing.T) {
	if got := unsafe.Sizeof(ComboResult{}); got != 216 {
		t.Fatalf("ComboResult is %d bytes, the forecast below assumes 216", got)
	}
	s := fakeStudy(nil)
	s.Grid = Grid{HMA: Range{2, 3, 1}, HMA3: Range{6, 8, 1}}
	n := int64(s.Dataset.Bars.Len())
	m := ForecastMemory(s)
	cp := int64(unsafe.Sizeof(ComboParity{}))
	if m.Series != 5*n*12 || m.Results != 2*6*216+6*cp {
		t.Errorf("forecast %+v, want series %d, results %d", m, 5*n*12, 2*6*216+6*cp)
	}
	// Results not kept: 12 bytes a combo a lane, and the parity rows.
	if d := ForecastMemoryWith(s, true); d.Series != m.Series || d.Results != 2*6*12+6*cp {
		t.Errorf("forecast without the results %+v, want series %d, results %d", d, m.Series, 2*6*12+6*cp)
	}
	// Per-block statistics: 44 bytes a combo and block, 16 a combo.
	s.Blocks = 16
	if d := ForecastMemoryWith(s, true); d.Results != 2*6*12+6*cp+6*(16*44+16)+6*20 {
		t.Errorf("with 16 blocks: results %d, want %d", d.Results, 2*6*12+6*cp+6*(16*44+16)+6*20)
	}
	s.Blocks = 0
	// One precision, results not kept: nothing per combo.
	s.Precisions = []Precision{FP32}
	if d := ForecastMemoryWith(s, true); d.Results != 0 || d.Series != 5*n*4 {
		t.Errorf("fp32 only, without the results: %+v, want series %d and no results", d, 5*n*4)
	}
}

// TestRunStudyRefusesWhatCannotFit: a study whose per-combo results exceed
// the memory available is refused before anything runs, with the numbers;
// one whose series alone do not fit runs in tiles (SeriesBudgetEnv: the
// series of a tile fit half of what the results leave); one that fits
// runs whole.
func TestRunStudyRefusesWhatCannotFit(t *testing.T) {
	defer func(f func() memlimit.MemoryLimit) { memoryLimit = f }(memoryLimit)
	ran := false
	b := &fakeBackend{lanes: 1, chunk: 10, compute: func(ctx context.Context, lane, first int, out []Metrics) error {
		ran = true
		fillIndex(first, out)
		return nil
	}}
	s := fakeStudy(b)
	m := ForecastMemory(s)
	memoryLimit = func() memlimit.MemoryLimit {
		return memlimit.MemoryLimit{Available: m.Results - 1, Kind: memlimit.LimitMemAvailable}
	}
	_, err := RunStudy(context.Background(), s, StudyOptions{})
	var me *MemoryError
	if !errors.As(err, &me) || ran || me.Available != m.Results-1 || !strings.Contains(err.Error(), "is available, bound by the memory the system has available (MemAvailable): use fewer or shorter lengths") {
		t.Fatalf("err %v, computed %v: want a MemoryError before anything runs", err, ran)
	}
	// The series of 3 of the grid's 6 lengths and the returns (4 series)
	// fit beside the results: tiles of at most 4 series.
	per := m.SeriesAll / 6
	memoryLimit = func() memlimit.MemoryLimit {
		return memlimit.MemoryLimit{Available: m.Results + 2*4*per, Kind: memlimit.LimitMemAvailable}
	}
	if f := ForecastMemory(s); f.Tiles < 2 || f.Series > 4*per {
		t.Fatalf("forecast %+v: want tiles of at most %d bytes of series", f, 4*per)
	}
	rep, err := RunStudy(context.Background(), s, StudyOptions{})
	if err != nil || !ran || !strings.Contains(rep.Note, "tiles of the grid") || rep.Run(FP64).Count() != s.Grid.Len() {
		t.Fatalf("a study whose series do not fit: err %v, computed %v, note %q", err, ran, rep.Note)
	}
	memoryLimit = func() memlimit.MemoryLimit {
		return memlimit.MemoryLimit{Available: m.Results + 2*m.SeriesAll, Kind: memlimit.LimitMemAvailable}
	}
	if rep, err := RunStudy(context.Background(), s, StudyOptions{}); err != nil || strings.Contains(rep.Note, "tiles") {
		t.Fatalf("a study that fits: err %v, note %q", err, rep.Note)
	}
}

// TestMemoryErrorSaysTheBound: a study refused under an address-space
// limit says so, with the limit and what is mapped.
func TestMemoryErrorSaysTheBound(t *testing.T) {
	defer func(f func() memlimit.MemoryLimit) { memoryLimit = f }(memoryLimit)
	s := fakeStudy(&fakeBackend{lanes: 1, chunk: 10})
	need := ForecastMemory(s).Results
	lim := memlimit.MemoryLimit{Available: need - 1, Kind: memlimit.LimitAddressSpace, Limit: need + 3<<20, Used: 3<<20 + 1}
	memoryLimit = func() memlimit.MemoryLimit { return lim }
	_, err := RunStudy(context.Background(), s, StudyOptions{})
	var me *MemoryError
	if !errors.As(err, &me) || me.Limit != lim {
		t.Fatalf("err %v: want a MemoryError with the limit", err)
	}
	if want := "is available, bound by the address-space limit (ulimit -v: "; !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "MiB of it mapped already): use fewer") {
		t.Fatalf("err %q: want it to name the address-space limit", err)
	}
}
