package preflight_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"

	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/engine/preflight"
	"sweepbench/engine/text"
	"sweepbench/reference"
)

// estimateStudy is a study on n synthetic one-minute bars (a seeded random
// walk), the grid given.
func estimateStudy(tb testing.TB, n int, hma, hma3 string, precs []engine.Precision) *engine.Study {
	tb.Helper()
	rng := rand.New(rand.NewPCG(3, 9))
	b := data.Bars{}
	p := 100.0
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	for i := 0; i < n; i++ {
		o := p
		p *= math.Exp(rng.NormFloat64() * 1e-3)
		b.Time = append(b.Time, t0+int64(i)*int64(time.Minute))
		b.Open = append(b.Open, o)
		b.High = append(b.High, math.Max(o, p)*1.0005)
		b.Low = append(b.Low, math.Min(o, p)*0.9995)
		b.Close = append(b.Close, p)
		b.Volume = append(b.Volume, 1)
	}
	h, err := engine.ParseRange("--hma", hma)
	if err != nil {
		tb.Fatal(err)
	}
	h3, err := engine.ParseRange("--hma3", hma3)
	if err != nil {
		tb.Fatal(err)
	}
	return &engine.Study{
		Dataset:    &data.Dataset{Info: data.Info{Name: "synthetic", Bars: n, MedianSpacing: time.Minute}, Bars: b},
		Grid:       engine.Grid{HMA: h, HMA3: h3},
		Params:     engine.Params{Fee: engine.DefaultFee, BarsPerYear: 525600},
		Precisions: precs,
		Backend:    reference.New(),
	}
}

func TestEstimateStudy(t *testing.T) {
	both := []engine.Precision{engine.FP64, engine.FP32}
	cases := []struct {
		name       string
		hma, hma3  string
		precs      []engine.Precision
		wantCombos int
		wantComp   int // computed: combos less the HMA3 aliases
		wantSeries int
		wantParity bool
	}{
		{"both precisions", "10:100:10", "12:120:12", both, 100, 100, 20, true},
		{"fp64 only", "20:60:20", "30:90:30", []engine.Precision{engine.FP64}, 9, 9, 6, false},
		{"fp32 only, one combo", "50", "60", []engine.Precision{engine.FP32}, 1, 1, 2, false},
		// hma3 7:12 has p 3, 4, 4, 5, 5, 6: 4 series, 4 combos per HMA length.
		{"hma3 step 1", "20:60:20", "7:12", both, 18, 12, 7, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := estimateStudy(t, 3000, c.hma, c.hma3, c.precs)
			e, err := preflight.EstimateStudy(context.Background(), s)
			if err != nil {
				t.Fatal(err)
			}
			if e.Combos != c.wantCombos || e.Computed != c.wantComp || e.Series != c.wantSeries || e.Parity != c.wantParity {
				t.Fatalf("combos %d computed %d series %d parity %v, want %d %d %d %v", e.Combos, e.Computed, e.Series, e.Parity,
					c.wantCombos, c.wantComp, c.wantSeries, c.wantParity)
			}
			if e.Workers != runtime.GOMAXPROCS(0) {
				t.Fatalf("workers %d, want GOMAXPROCS %d", e.Workers, runtime.GOMAXPROCS(0))
			}
			if e.PerHMA <= 0 || e.PerHMA3 <= 0 || e.PerCombo <= 0 {
				t.Fatalf("a calibration time is not positive: %+v", e)
			}
			// The documented formula, recomputed from the fields.
			work := time.Duration(s.Grid.HMA.Len())*e.PerHMA + time.Duration(e.Series-s.Grid.HMA.Len())*e.PerHMA3 +
				time.Duration(e.Computed)*e.PerCombo
			if e.Parity {
				work += time.Duration(e.Computed) * e.PerCombo / 2
			}
			if want := work / time.Duration(e.Workers); e.Total != want {
				t.Fatalf("total %v, want %v from the fields", e.Total, want)
			}
			if !strings.Contains(e.String(), text.Plural(c.wantCombos, "combo")+" a precision") {
				t.Fatalf("String() = %q", e.String())
			}
		})
	}
}

func TestEstimateStudyErrors(t *testing.T) {
	s := estimateStudy(t, 500, "10:600:10", "12:36:12", []engine.Precision{engine.FP64})
	if _, err := preflight.EstimateStudy(context.Background(), s); err == nil || !strings.Contains(err.Error(), "needs") {
		t.Fatalf("a grid longer than the bars: err %v, want Grid.Validate's", err)
	}
	s = estimateStudy(t, 500, "10:30:10", "12:36:12", []engine.Precision{engine.FP64})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := preflight.EstimateStudy(ctx, s); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: err %v", err)
	}
}

// TestEstimateOrder checks the forecast against a real RunStudy on the
// reference backend: the same order of magnitude (a loose bound, since the
// machine may be shared; the point is to catch a unit or scaling slip).
func TestEstimateOrder(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping a timed sweep")
	}
	s := estimateStudy(t, 20000, "10:200:10", "12:240:12", []engine.Precision{engine.FP64, engine.FP32})
	e, err := preflight.EstimateStudy(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := engine.RunStudy(context.Background(), s, engine.StudyOptions{}); err != nil {
		t.Fatal(err)
	}
	got := time.Since(start)
	if ratio := float64(e.Total) / float64(got); ratio < 1.0/30 || ratio > 30 {
		t.Fatalf("estimate %v vs %v measured (ratio %.2f): more than 30x off", e.Total, got, ratio)
	}
	t.Logf("estimate %v, measured %v", e.Total, got)
}

// TestEstimateTiled: under a series budget of 10 series (3,000 bars in
// fp64 and fp32: 36,000 bytes each) the 10 x 10 grid runs in 6 tiles of 4,
// 4 and 2 HMA lengths by 5 HMA3 lengths: 20 HMA and 30 HMA3 series, built
// for the lanes and again for the parity pass.
func TestEstimateTiled(t *testing.T) {
	t.Setenv(engine.SeriesBudgetEnv, "360000")
	s := estimateStudy(t, 3000, "10:100:10", "12:120:12", []engine.Precision{engine.FP64, engine.FP32})
	e, err := preflight.EstimateStudy(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if e.Tiles != 6 || e.Series != 50 {
		t.Fatalf("tiles %d series %d, want 6 and 50", e.Tiles, e.Series)
	}
	series := 20*e.PerHMA + 30*e.PerHMA3
	work := 2*series + 100*e.PerCombo + 100*e.PerCombo/2
	if want := work / time.Duration(e.Workers); e.Total != want {
		t.Fatalf("total %v, want %v from the fields", e.Total, want)
	}
	if !strings.Contains(e.String(), "50 series in 6 tiles") {
		t.Errorf("String() = %q, want it to say the tiles", e.String())
	}
}
