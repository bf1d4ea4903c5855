package engine

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestGridDistinct: the distinct grid and the alias count of grids worked
// by hand (p = floor(L/2) of each HMA3 length).
func TestGridDistinct(t *testing.T) {
	cases := []struct {
		name    string
		hma     Range
		hma3    Range
		want3   Range // the distinct grid's HMA3 range
		aliases int
	}{
		// p 3,3,4,4,5,5: 3 distinct of 6, 3 aliases per HMA length.
		{"6:11 even start, odd end", Range{10, 30, 10}, Range{6, 11, 1}, Range{6, 10, 2}, 9},
		// p 3,4,4,5,5,6: 4 distinct (6, 8, 10, 12: 6 and 12 stand for 7 and 12), 2 aliases.
		{"7:12 odd start, even end", Range{10, 30, 10}, Range{7, 12, 1}, Range{6, 12, 2}, 6},
		// p 3,4,4,5,5: 3 distinct of 5.
		{"7:11 odd start, odd end", Range{20, 20, 1}, Range{7, 11, 1}, Range{6, 10, 2}, 2},
		// p 3,3,4,4,5: 3 distinct of 5.
		{"6:10 even start, even end", Range{2, 3, 1}, Range{6, 10, 1}, Range{6, 10, 2}, 4},
		{"6:7 two values, one p", Range{2, 4, 1}, Range{6, 7, 1}, Range{6, 6, 2}, 3},
		{"7:8 two values, two p", Range{2, 4, 1}, Range{7, 8, 1}, Range{7, 8, 1}, 0},
		{"one value", Range{2, 4, 1}, Range{9, 9, 1}, Range{9, 9, 1}, 0},
		{"even step", Range{2, 4, 1}, Range{6, 30, 2}, Range{6, 30, 2}, 0},
		{"odd step 3", Range{2, 4, 1}, Range{7, 31, 3}, Range{7, 31, 3}, 0},
		// The benchmark grid: p 5..24, 20 distinct of 40 per HMA length, 31 of them.
		{"10:49 benchmark", Range{10, 40, 1}, Range{10, 49, 1}, Range{10, 48, 2}, 620},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := Grid{HMA: c.hma, HMA3: c.hma3}
			d := g.Distinct()
			if d.HMA != g.HMA || d.HMA3 != c.want3 || g.Aliases() != c.aliases || d.Len() != g.Len()-c.aliases {
				t.Fatalf("Distinct %v x %v (%d combos), aliases %d; want hma3 %v, %d aliases", d.HMA, d.HMA3, d.Len(), g.Aliases(), c.want3, c.aliases)
			}
			// Valid on exactly the bars the grid needs, whatever its lengths.
			n := BarsNeeded(Combo{HMA: g.HMA.Last(), HMA3: g.HMA3.Last()})
			if err := g.Validate(n); err != nil {
				t.Fatal(err)
			}
			if err := d.Validate(n); err != nil {
				t.Errorf("the distinct grid does not fit the bars the grid fits: %v", err)
			}
			if d.HMA3.Start < g.HMA3.Start-1 || d.HMA3.Last() > g.HMA3.Last() {
				t.Errorf("distinct lengths %v outside [%d, %d]", d.HMA3, g.HMA3.Start-1, g.HMA3.Last())
			}
		})
	}
	if HMA3Twin(6) != 7 || HMA3Twin(7) != 6 || HMA3Twin(48) != 49 {
		t.Errorf("HMA3Twin(6, 7, 48) = %d, %d, %d", HMA3Twin(6), HMA3Twin(7), HMA3Twin(48))
	}
}

// TestAliasMapUsers: the combos each computed combo stands for tile the
// grid in order, each with the computed combo's HMA length, p and warm-up.
func TestAliasMapUsers(t *testing.T) {
	for _, g := range []Grid{
		{HMA: Range{2, 5, 1}, HMA3: Range{6, 11, 1}},
		{HMA: Range{2, 5, 1}, HMA3: Range{7, 12, 1}},
		{HMA: Range{3, 9, 3}, HMA3: Range{7, 7, 1}},
		{HMA: Range{3, 9, 3}, HMA3: Range{8, 9, 1}},
		{HMA: Range{3, 9, 3}, HMA3: Range{6, 20, 2}},
	} {
		m := newAliasMap(g, true)
		next := 0
		for r := range m.comp.Len() {
			lo, hi := m.users(r)
			if lo != next || hi <= lo || hi-lo > 2 {
				t.Fatalf("%v: computed combo %d stands for [%d, %d), want from %d, one or two", g, r, lo, hi, next)
			}
			c := m.comp.At(r)
			for u := lo; u < hi; u++ {
				gc := g.At(u)
				if gc.HMA != c.HMA || gc.HMA3/2 != c.HMA3/2 || ComboWarmup(gc) != ComboWarmup(c) {
					t.Errorf("%v: combo %d %+v stands for %d %+v", g, r, c, u, gc)
				}
			}
			next = hi
		}
		if next != g.Len() {
			t.Errorf("%v: computed combos stand for %d combos of %d", g, next, g.Len())
		}
		if off := newAliasMap(g, false); !off.same || off.comp != g {
			t.Errorf("%v: with merging off the kernel gets %v", g, off.comp)
		}
	}
}

// aliasFake is a fake backend that computes, for each combo of the job it
// was given, metrics naming its HMA length and p (TotalReturn = HMA,
// Sharpe = p + HMA/1000), and counts what it was asked.
type aliasFake struct {
	lanes, chunk int
	mu           sync.Mutex
	grid         Grid  // the job's grid at Prepare
	asked        []int // every combo index Compute was given
}

func (f *aliasFake) Name() string               { return "aliasfake" }
func (f *aliasFake) Available() error           { return nil }
func (f *aliasFake) Devices() ([]Device, error) { return nil, nil }
func (f *aliasFake) Prepare(_ context.Context, job *Job) (Kernel, error) {
	f.grid = job.Grid
	return &aliasFakeKernel{f, job.Grid}, nil
}

type aliasFakeKernel struct {
	f *aliasFake
	g Grid
}

func (k *aliasFakeKernel) Lanes() int     { return k.f.lanes }
func (k *aliasFakeKernel) ChunkSize() int { return k.f.chunk }
func (k *aliasFakeKernel) Device() string { return "fake" }
func (k *aliasFakeKernel) Close() error   { return nil }
func (k *aliasFakeKernel) Compute(_ context.Context, _, first int, out []Metrics) error {
	k.f.mu.Lock()
	defer k.f.mu.Unlock()
	for i := range out {
		out[i] = comboMetrics(k.g.At(first + i))
		k.f.asked = append(k.f.asked, first+i)
	}
	return nil
}

func comboMetrics(c Combo) Metrics {
	return Metrics{TotalReturn: float64(c.HMA), Sharpe: float64(c.HMA3/2) + float64(c.HMA)/1000}
}

// TestSweepAliasesFake: on an HMA3 range of step 1 the kernel is prepared
// on the distinct grid and asked for each of its combos once (none of
// those whose every alias is done); every requested combo not done comes
// back once, under its own index and lengths, with the metrics of its
// HMA length and p, to Results and to the Sink; progress counts the
// grid's combos. Chunked and one chunk per lane, kept and discarded.
func TestSweepAliasesFake(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 13))
	job := &Job{Bars: closeBars(randomWalk(rng, 100, 100, 0.01)),
		Grid: Grid{HMA: Range{2, 6, 1}, HMA3: Range{7, 16, 1}}, Params: Params{Fee: DefaultFee, BarsPerYear: 525600}}
	g := job.Grid // 5 x 10 = 50 combos, p 3..8: 6 distinct per HMA length, 30 computed
	d := g.Distinct()
	if g.Len() != 50 || d.Len() != 30 {
		t.Fatalf("grid %d, distinct %d combos", g.Len(), d.Len())
	}
	skips := map[string]func(int) bool{
		"none": nil,
		// 0 is hma3 7 (alone with p 3); 1, 2 are 8, 9 (p 4): one of the
		// pair, then both; 13 is (3, 10), twin of 14 (3, 11).
		"some": func(i int) bool { return i == 0 || i == 1 || i == 2 || i == 13 || i >= 45 },
	}
	for _, layout := range []struct{ lanes, chunk int }{{2, 4}, {1, 1}, {2, 15}, {3, 7}} {
		for sname, skip := range skips {
			for _, discard := range []bool{false, true} {
				f := &aliasFake{lanes: layout.lanes, chunk: layout.chunk}
				prog := make(chan Progress, 1000)
				var sunk []ComboResult
				run, err := Sweep(context.Background(), f, job, SweepOptions{Skip: skip, Progress: prog, Every: time.Nanosecond,
					Discard: discard, Sink: func(rs []ComboResult) error { sunk = append(sunk, rs...); return nil }})
				if err != nil || run.Status != StatusComplete {
					t.Fatalf("%v %s: err %v status %s", layout, sname, err, run.Status)
				}
				if f.grid != d {
					t.Fatalf("kernel prepared on %v, want the distinct grid %v", f.grid, d)
				}
				var wantAsked, want []int
				for r := range d.Len() {
					c := d.At(r)
					lo := g.Index((c.HMA - 2), max(c.HMA3-7, 0))
					hi := g.Index(c.HMA-2, min(c.HMA3-7+1, 9)) + 1
					all := true
					for u := lo; u < hi; u++ {
						if skip == nil || !skip(u) {
							all = false
							want = append(want, u)
						}
					}
					if !all {
						wantAsked = append(wantAsked, r)
					}
				}
				if asked := slices.Sorted(slices.Values(f.asked)); !slices.Equal(asked, wantAsked) {
					t.Errorf("%v %s: kernel asked for %v, want %v", layout, sname, asked, wantAsked)
				}
				slices.SortFunc(sunk, func(a, b ComboResult) int { return a.Index - b.Index })
				check := func(what string, rs []ComboResult) {
					if !slices.Equal(indices(rs), want) {
						t.Fatalf("%v %s: %s %v, want %v", layout, sname, what, indices(rs), want)
					}
					for _, r := range rs {
						if r.Combo != g.At(r.Index) || r.Metrics != comboMetrics(r.Combo) {
							t.Fatalf("%v %s: %s combo %d is %+v, want %+v with %+v", layout, sname, what, r.Index, r, g.At(r.Index), comboMetrics(g.At(r.Index)))
						}
					}
				}
				check("sink", sunk)
				if discard {
					if len(run.Results) != 0 {
						t.Errorf("%v %s: Discard kept %d results", layout, sname, len(run.Results))
					}
				} else {
					check("results", run.Results)
				}
				close(prog)
				var last Progress
				for p := range prog {
					if p.Total != 50 || p.Done > 50 {
						t.Fatalf("%v %s: progress %d/%d, want of 50", layout, sname, p.Done, p.Total)
					}
					last = p
				}
				if last.Phase != PhaseDone || last.Done != 50 {
					t.Errorf("%v %s: last progress %+v, want done 50/50", layout, sname, last)
				}
			}
		}
	}

	// A bench rung times its method on every combo: the kernel gets the
	// grid itself.
	f := &aliasFake{lanes: 2, chunk: 4}
	if run, _, err := RungBackend(f, Direct, 0)(context.Background(), job); err != nil || f.grid != g || len(f.asked) != 50 || len(run.Results) != 50 {
		t.Fatalf("bench rung: err %v, kernel on %v asked %d", err, f.grid, len(f.asked))
	}

	// Merging off: the kernel gets the grid itself.
	defer SetMergeAliases(SetMergeAliases(false))
	f = &aliasFake{lanes: 2, chunk: 4}
	run, err := Sweep(context.Background(), f, job, SweepOptions{})
	if err != nil || f.grid != g || len(f.asked) != 50 || len(run.Results) != 50 {
		t.Fatalf("merging off: err %v, kernel on %v asked %d, %d results", err, f.grid, len(f.asked), len(run.Results))
	}
}
