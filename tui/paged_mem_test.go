package tui

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/sessions"
	"sweepbench/tui/common"
)

// fastBackend fills every combo's metrics from its index (distinct,
// full-width values) without backtesting: synthetic saved sessions of
// millions of combos in seconds.
type fastBackend struct{}

var _ engine.Backend = fastBackend{}

func (fastBackend) Name() string                      { return "fast" }
func (fastBackend) Available() error                  { return nil }
func (fastBackend) Devices() ([]engine.Device, error) { return []engine.Device{{Name: "fast"}}, nil }
func (fastBackend) Prepare(context.Context, *engine.Job) (engine.Kernel, error) {
	return fastKernel{}, nil
}

type fastKernel struct{}

func (fastKernel) Lanes() int     { return 2 }
func (fastKernel) ChunkSize() int { return 4096 }
func (fastKernel) Device() string { return "fast" }
func (fastKernel) Close() error   { return nil }
func (fastKernel) Compute(ctx context.Context, lane, first int, out []engine.Metrics) error {
	for i := range out {
		x := uint64(first+i) * 0x9e3779b97f4a7c15
		u := float64(x>>11) / (1 << 53)
		out[i] = engine.Metrics{TotalReturn: u - 0.5, CAGR: 2*u - 1, Sharpe: 4*u - 2, Sortino: 5 * u, MaxDrawdown: u / 2,
			Calmar: 3 * u, WinRate: u, TotalTrades: int(x >> 54), VaR95: -u / 100, CVaR95: -u / 50, Omega: 1 + u,
			LongBars: int(x >> 52), ShortBars: int(x >> 53), FlatBars: 7}
	}
	return ctx.Err()
}

// savedSynthetic saves a synthetic fp64 session of hma x hma3 (fastBackend,
// the first 2,000 embedded BTC/USDT bars) in st, as `run` saves one.
func savedSynthetic(t testing.TB, st *sessions.Store, hma, hma3 string) {
	t.Helper()
	ds, err := data.Open("embedded:btcusdt-1m", data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ds.Bars = ds.Bars.Slice(0, 2000)
	ds.Info.Bars = 2000
	h, err := engine.ParseRange("--hma", hma)
	if err != nil {
		t.Fatal(err)
	}
	h3, err := engine.ParseRange("--hma3", hma3)
	if err != nil {
		t.Fatal(err)
	}
	s := &engine.Study{Dataset: ds, Grid: engine.Grid{HMA: h, HMA3: h3}, Precisions: []engine.Precision{engine.FP64},
		Backend: fastBackend{}, Params: engine.Params{Fee: engine.DefaultFee, Mode: engine.LongShort, Source: engine.SourceClose,
			BarsPerYear: engine.BarsPerYear(ds.Info.MedianSpacing)}}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	_, rec, err := sessions.RunStudy(context.Background(), st, s, engine.StudyOptions{Discard: true}, sessions.RecordOptions{})
	if err != nil || rec.Err != nil {
		t.Fatal(err, rec.Err)
	}
}

// liveHeap is the heap in use after a collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// heldBytes opens session 1 of st in a workbench, as a user does (the
// sessions browser, enter), reads a page the summary does not keep (the
// worst 1,000 by Sharpe, filtered) and the heatmap's window, and returns
// the heap the workbench holds then above what it held before opening,
// and the time the opening took.
//
// With paged false the session opens with every result (the path below
// common.PagedAbove), for comparison: no page is read then.
func heldBytes(t *testing.T, st *sessions.Store, paged bool) (uint64, time.Duration) {
	t.Helper()
	if !paged {
		old := common.PagedAbove
		common.PagedAbove = 1 << 30
		defer func() { common.PagedAbove = old }()
	}
	d := newStoreDriver(t, storeConfig(smallFlags(), st), 160, 50)
	d.global("S")
	base := liveHeap()
	t0 := time.Now()
	d.key("enter")
	took := time.Since(t0)
	r := d.m.state.Results
	if !paged && r != nil && !r.Paged() {
		_ = d.m.View()
		held := liveHeap() - base
		runtime.KeepAlive(d)
		return held, took
	}
	if r == nil || !r.Paged() || r.Pager(engine.FP64) == nil {
		t.Fatalf("the session is not shown paged (err %q)", d.m.status.LastErr)
	}
	d.key("s", "s", "/", "total_trades>=100", "enter")
	if n := len(listed(d)); n != common.PageRows {
		t.Fatalf("the filtered page lists %d combos, want %d", n, common.PageRows)
	}
	_ = d.m.View()
	held := liveHeap() - base
	runtime.KeepAlive(d)
	return held, took
}

// TestPagedMemoryFlat: the workbench showing a saved session of 10^6
// combos holds about what it holds for one of 10^5 (its summary, capped
// at 256 x 256 heatmap cells, a page of 1,000 results and a window),
// not ten times as much; Store.Open of the larger one alone holds ~136
// MB. Synthetic sessions (fastBackend), fp64 only. Figures in
// docs/PERFORMANCE.md (go test ./tui -run TestPagedMemoryFlat -v).
func TestPagedMemoryFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("saves 1.1 million synthetic combos")
	}
	var held [2]uint64
	for k, c := range []struct{ hma, hma3 string }{{"10:259:1", "12:411:1"}, {"10:1009:1", "12:1011:1"}} {
		st := tempStore(t)
		savedSynthetic(t, st, c.hma, c.hma3)
		h, took := heldBytes(t, st, true)
		held[k] = h
		t.Logf("hma %s x hma3 %s: the workbench holds %s more once the session is open (opened in %v)",
			c.hma, c.hma3, mb(h), took.Round(time.Millisecond))
		if testing.Verbose() {
			h, took := heldBytes(t, st, false)
			t.Logf("  the same with every result (Store.Open): %s (opened in %v)", mb(h), took.Round(time.Millisecond))
		}
	}
	if held[1] > held[0]*3/2 || held[1] > 64<<20 {
		t.Fatalf("held %s at 10^5 combos, %s at 10^6: not flat", mb(held[0]), mb(held[1]))
	}
}

func mb(b uint64) string { return fmt.Sprintf("%.1f MB", float64(b)/1e6) }
