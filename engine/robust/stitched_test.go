package robust

import (
	"context"
	"encoding/json"
	"math"
	"testing"
	"time"

	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/reference"
)

// TestStitchedEquity: the walk-forward's stitched out-of-sample equity
// curve of a real study (the reference backend on embedded BTC/USDT
// minutes, 8 blocks), rolling:3 and anchored, from the chosen combos'
// continuous fp64 runs recomputed on the CPU. Its last value is the fold
// product the walk-forward reports as the stitched total return (1e-12
// relative); over each fold's block it grows by the block's growth the
// sweep's own block statistics give (exp of its log growth: a second
// formulation, the sweep's sums rather than the trace's equity); it has one
// point per out-of-sample bar and the start, in bar order with the bars'
// times; the Summary carries at most MaxEquityPoints of it, its ends
// unchanged, and the logit histogram of every split.
func TestStitchedEquity(t *testing.T) {
	ds, err := data.Open("embedded:btcusdt-1m", data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ds = ds.Head(8000)
	s := &engine.Study{Dataset: ds, Grid: engine.Grid{HMA: engine.Range{Start: 10, Stop: 90, Step: 20}, HMA3: engine.Range{Start: 12, Stop: 84, Step: 12}},
		Params: engine.Params{Fee: engine.DefaultFee, BarsPerYear: 525600}, Blocks: 8,
		Precisions: []engine.Precision{engine.FP64}, Backend: reference.New()}
	rep, err := engine.RunStudy(context.Background(), s, engine.StudyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bounds := rep.Blocks.Bounds
	for _, spec := range []string{"rolling:3", "anchored"} {
		t.Run(spec, func(t *testing.T) {
			wf, err := ParseWF(spec)
			if err != nil {
				t.Fatal(err)
			}
			r, err := Analyse(context.Background(), rep, Options{WF: &wf, Bars: &ds.Bars})
			if err != nil {
				t.Fatal(err)
			}
			eq := r.WF.Equity
			first := r.WF.Folds[0].OOSBlock
			if r.WF.EquityNote != "" || len(eq) != bounds[8]-bounds[first]+1 {
				t.Fatalf("%d points (%q), want %d: one per out-of-sample bar and the start", len(eq), r.WF.EquityNote, bounds[8]-bounds[first]+1)
			}
			for i, p := range eq {
				if p.Bar != bounds[first]+i || !p.Time.Equal(time.Unix(0, ds.Bars.Time[p.Bar])) || !(p.Equity > 0) {
					t.Fatalf("point %d: %+v", i, p)
				}
			}
			end, want := eq[len(eq)-1].Equity, 1+r.WF.TotalReturn
			if rel := math.Abs(end-want) / want; rel > 1e-12 {
				t.Errorf("the curve ends at %.17g, the folds' product is %.17g (relative %.2g)", end, want, rel)
			}
			bs := FromSweep(rep.Blocks)
			for _, f := range r.WF.Folds {
				lo, hi := bounds[f.OOSBlock]-bounds[first], bounds[f.OOSBlock+1]-bounds[first]
				got := eq[hi].Equity / eq[lo].Equity
				want := math.Exp(bs.SumLog[f.Combo*bs.Blocks+f.OOSBlock])
				if rel := math.Abs(got-want) / want; rel > 1e-12 {
					t.Errorf("block %d (combo %d): the curve grows by %.17g, the block statistics by %.17g", f.OOSBlock, f.Combo, got, want)
				}
				// The window's buy and hold: its first return's close
				// before it to its last close.
				c := ds.Bars.Close
				if bh := c[bounds[f.OOSBlock+1]]/c[bounds[f.OOSBlock]] - 1; f.OOSBuyHold != bh {
					t.Errorf("block %d: buy & hold %v, want %v", f.OOSBlock, f.OOSBuyHold, bh)
				}
			}

			sm := r.Summary()
			js, err := json.Marshal(sm)
			if err != nil {
				t.Fatal(err)
			}
			var back Summary
			if err := json.Unmarshal(js, &back); err != nil {
				t.Fatal(err)
			}
			se := back.WF.Equity
			if len(se) > MaxEquityPoints || len(se) < 2 || se[0] != eq[0] || se[len(se)-1].Equity != end || se[len(se)-1].Bar != eq[len(eq)-1].Bar {
				t.Errorf("the summary's curve: %d points from %+v to %+v", len(se), se[0], se[len(se)-1])
			}
			h := back.LogitHistogram
			if h == nil || len(h.Edges) != HistogramBins+1 || len(h.Counts) != HistogramBins {
				t.Fatalf("logit histogram %+v", h)
			}
			n := 0
			for _, c := range h.Counts {
				n += c
			}
			if n != r.PBO.Splits() {
				t.Errorf("the histogram counts %d splits of %d", n, r.PBO.Splits())
			}
		})
	}
	// Without the bars there is no curve, and nothing else changes.
	wf, _ := ParseWF("rolling:3")
	r, err := Analyse(context.Background(), rep, Options{WF: &wf})
	if err != nil {
		t.Fatal(err)
	}
	if r.WF.Equity != nil || r.Summary().WF.Equity != nil {
		t.Error("a curve without the bars")
	}
	if f := r.WF.Folds[0]; !math.IsNaN(f.OOSBuyHold) || r.Summary().WF.Folds[0].OOSBuyHold != nil {
		t.Errorf("a buy & hold without the bars: %v", f.OOSBuyHold)
	}
	// Bars that are not the study's are refused by name.
	short := ds.Head(7000)
	if _, err := StitchedEquity(context.Background(), &short.Bars, rep.Params, engine.FP64, engine.Direct, rep.Grid, bounds, r.WF.Folds); err == nil {
		t.Error("a curve over other bars")
	}
}

// TestDownsample: at most the limit, evenly spaced, both ends kept; a
// short curve as it is.
func TestDownsample(t *testing.T) {
	pts := make([]EquityPoint, 1001)
	for i := range pts {
		pts[i] = EquityPoint{Bar: i, Equity: float64(i)}
	}
	for _, c := range []struct{ limit, want int }{{512, 512}, {2, 2}, {1, 2}, {1001, 1001}, {5000, 1001}} {
		got := Downsample(pts, c.limit)
		if len(got) != c.want || got[0].Bar != 0 || got[len(got)-1].Bar != 1000 {
			t.Errorf("limit %d: %d points from %d to %d", c.limit, len(got), got[0].Bar, got[len(got)-1].Bar)
		}
		for i := 1; i < len(got); i++ {
			if d := got[i].Bar - got[i-1].Bar; d < 1 || d > (1000+c.want-2)/(c.want-1)+1 {
				t.Fatalf("limit %d: step %d at %d", c.limit, d, i)
			}
		}
	}
}
