package strategy

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/reference"
)

// kernelPositions is what the GPU's sweep kernels decide from p for combo
// a*NB + b over n bars (the position after each bar, the mode applied): a
// transcription of sweep.cu's SbHullSig, SbBandSig and SbChanSig with
// sweep_common.h's sb_position, sb_band, sb_is_reset and sb_band_pos,
// statement for statement.
func kernelPositions[F Float](p *engine.Pairs[F], a, b, n int, longOnly bool) []State {
	first := max(p.FirstA[a], p.FirstB[b])
	pos := make([]State, n)
	st, prev := 0, 0
	band := func(st int, v, tLE, tSE, tLX, tSX F) int {
		fromFlat := 0
		if v < tLE {
			fromFlat = 1
		} else if v > tSE {
			fromFlat = -1
		}
		fromLong := 1
		if v > tLX {
			fromLong = 0
			if v > tSE {
				fromLong = -1
			}
		}
		fromShort := -1
		if v < tSX {
			fromShort = 0
			if v < tLE {
				fromShort = 1
			}
		}
		switch st {
		case 0:
			return fromFlat
		case 1:
			return fromLong
		}
		return fromShort
	}
	bandPos := func(st int) int {
		if longOnly && st == -1 {
			return 0
		}
		return st
	}
	for i := range n {
		switch p.Machine {
		case engine.MachineCross: // H = -A, H3 = -B: long while -B > -A
			a3, h := -p.B[b][i], -p.A[a][i]
			if a3 > h {
				prev = 1
			} else if a3 < h {
				prev = -1
				if longOnly {
					prev = 0
				}
			}
		case engine.MachineBands:
			v, lv := p.A[a][i], p.Levels[b]
			s2 := band(st, v, lv[0], lv[1], lv[2], lv[3])
			if (v == 0 && math.Signbit(float64(v))) || i < first {
				s2 = 0
			}
			st = s2
			prev = bandPos(st)
		case engine.MachineChannel: // every value negated
			s2 := band(st, -p.V[i], -p.A[a][i], -p.A2[a][i], -p.B[b][i], -p.B2[b][i])
			if i < first {
				s2 = 0
			}
			st = s2
			prev = bandPos(st)
		}
		pos[i] = State(prev)
	}
	return pos
}

// TestPairsAreEvaluate: for every family the GPU runs from Pairs, the
// kernels' machine over Pairs' series gives, combo by combo and bar by
// bar, the positions of Evaluate (the reference's own state machine,
// the mode applied after), in both precisions and formulations, in
// long-short and long-only: the levels (zscore's >= and <= as strict
// comparisons with the neighbouring floats), the -0 of an undefined
// prefix variance, the NaN of sd = 0 and the first bars map exactly.
func TestPairsAreEvaluate(t *testing.T) {
	all := btcBars(t)
	bars := all.Slice(0, 4000)
	cases := []sweepCase{
		{"cross", map[string]string{"fast": "ema:5:15:5", "slow": "sma:20:40:10"}, false, Direct},
		{"cross", map[string]string{"fast": "sma:5:15:5", "slow": "wma:20:40:10"}, false, Prefix},
		{"zscore", map[string]string{"length": "10:30:10", "entry": "1.5:2.5:0.5", "exit": "-1:1:0.5"}, false, Direct},
		{"zscore", map[string]string{"length": "2:42:20", "entry": "0.5:2.5:1", "exit": "-0.25:0.25:0.25"}, false, Prefix},
		{"breakout", map[string]string{"entry": "5:30:5", "exit": "3:20:4"}, false, Direct},
		{"rsi", map[string]string{"length": "2:21:3", "lower": "25:35:5", "upper": "65:75:5"}, false, Direct},
		{"rsi", map[string]string{"length": "7:21:7", "lower": "10:40:15", "upper": "45:90:15"}, false, Prefix},
	}
	ctx := context.Background()
	for _, tc := range cases {
		s, err := engine.NewStrategy(tc.family, tc.params, tc.fastBelowSlow)
		if err != nil {
			t.Fatal(err)
		}
		eg := s.(*engineGrid)
		for _, mode := range []engine.Mode{engine.LongShort, engine.LongOnly} {
			params := sweepParams
			params.Mode = mode
			if !eg.PairsOK(params) {
				t.Fatalf("%s: PairsOK false", eg.g)
			}
			job := &engine.Job{Bars: &bars, Grid: engine.Grid{Strategy: s}, Params: params, WMA: tc.f}
			name := fmt.Sprintf("%s %s %s", eg.g, tc.f, mode)
			p64, err := eg.Pairs64(ctx, job)
			if err != nil {
				t.Fatal(err)
			}
			checkPairs(t, name+" fp64", eg.g, p64, NewInputs[float64](&bars, engine.SourceClose), Direct, mode)
			p32, err := eg.Pairs32(ctx, job)
			if err != nil {
				t.Fatal(err)
			}
			checkPairs(t, name+" fp32", eg.g, p32, NewInputs[float32](&bars, engine.SourceClose), tc.f, mode)
		}
	}
}

func checkPairs[F Float](t *testing.T, name string, g Grid, p *engine.Pairs[F], in *Inputs[F], f Formulation, mode engine.Mode) {
	t.Helper()
	n := len(in.Close)
	nb := p.NB()
	if len(p.A)*nb != g.Len() {
		t.Fatalf("%s: %d x %d columns for %d combos", name, len(p.A), nb, g.Len())
	}
	want := make([]State, n)
	changes, resets := 0, 0
	for i := range g.Len() {
		if _, err := Evaluate(g, g.At(i), in, f, want, nil); err != nil {
			t.Fatal(err)
		}
		if mode == engine.LongOnly {
			for k, s := range want {
				if s < 0 {
					want[k] = 0
				}
			}
		}
		got := kernelPositions(p, i/nb, i%nb, n, mode == engine.LongOnly)
		for k := range want {
			if got[k] != want[k] {
				t.Fatalf("%s combo %d (%v): bar %d position %d, want %d", name, i, g.At(i).Values, k, got[k], want[k])
			}
			if k > 0 && want[k] != want[k-1] {
				changes++
			}
		}
	}
	if p.Machine == engine.MachineBands {
		for _, a := range p.A {
			for _, v := range a {
				if v == 0 && math.Signbit(float64(v)) {
					resets++
				}
			}
		}
	}
	if changes == 0 {
		t.Fatalf("%s: no position changed: the case tests nothing", name)
	}
	t.Logf("%s: %d combos, %d position changes, %d reset bars", name, g.Len(), changes, resets)
}

// pairBackend is a backend that takes pairs (engine.PairRunner), named
// "gpu": the fallback note's wording, without a GPU.
type pairBackend struct{ engine.Backend }

func (pairBackend) Name() string    { return "gpu" }
func (pairBackend) RunsPairs() bool { return true }

// TestPairsFallbackNote: on a backend that takes pairs, a family's grid
// runs there without a note, and what keeps one on the reference is named:
// stops, --fast-below-slow, fill next-open, --blocks.
func TestPairsFallbackNote(t *testing.T) {
	cases := []struct {
		family string
		params map[string]string
		fbs    bool
		fill   engine.Fill
		blocks int
		want   string
	}{
		{"zscore", map[string]string{"length": "10:20:10", "entry": "2", "exit": "0"}, false, engine.FillClose, 0, ""},
		{"rsi", map[string]string{"length": "14", "lower": "30", "upper": "70"}, false, engine.FillClose, 0, ""},
		{"breakout", map[string]string{"entry": "20", "exit": "10"}, false, engine.FillClose, 0, ""},
		{"cross", map[string]string{"fast": "ema:5:15:5", "slow": "sma:20:40:10"}, false, engine.FillClose, 0, ""},
		{"zscore", map[string]string{"length": "10", "entry": "2", "exit": "0", "stop_loss": "0.01"}, false, engine.FillClose, 0,
			"gpu has no zscore kernel with stops yet: every lane runs on reference"},
		{"cross", map[string]string{"fast": "ema:5:15:5", "slow": "sma:20:40:10"}, true, engine.FillClose, 0,
			"gpu has no cross kernel with --fast-below-slow yet: every lane runs on reference"},
		{"breakout", map[string]string{"entry": "20", "exit": "10"}, false, engine.FillNextOpen, 0,
			"gpu has no breakout kernel with fill next-open yet: every lane runs on reference"},
		{"rsi", map[string]string{"length": "14", "lower": "30", "upper": "70"}, false, engine.FillClose, 4,
			"gpu has no rsi kernel with --blocks yet: every lane runs on reference"},
	}
	for _, tc := range cases {
		s, err := engine.NewStrategy(tc.family, tc.params, tc.fbs)
		if err != nil {
			t.Fatal(err)
		}
		st := &engine.Study{Grid: engine.Grid{Strategy: s}, Params: engine.Params{Fill: tc.fill}, Blocks: tc.blocks,
			Backend: pairBackend{reference.New()}, Fallback: reference.New()}
		if got := st.FallbackNote(); got != tc.want {
			t.Errorf("%s %v: note %q, want %q", tc.family, tc.params, got, tc.want)
		}
	}
}

// cpuCounts is a StrategyParityDevice that counts on the CPU, through
// Strategy.Compare: CompareStrategyOnDevice's selection and merge, tested
// without a GPU.
type cpuCounts struct{}

func (cpuCounts) StrategyParity(ctx context.Context, job *engine.Job, test engine.Precision, form engine.Formulation, tol float64) (*engine.StrategyDeviceParity, error) {
	st := job.Grid.Strategy
	n := job.Grid.Len()
	out := &engine.StrategyDeviceParity{Bars: make([]int32, n), NonBorderline: make([]int32, n), NaNRoots: make([]int32, n),
		MaxMargin: make([]float64, n), Device: "cpu counts"}
	for i := range n {
		fs, err := st.Compare(ctx, job, test, form, i, tol)
		if err != nil {
			return nil, err
		}
		for _, d := range fs {
			out.Bars[i] += int32(d.Bars)
			if !d.Borderline {
				out.NonBorderline[i]++
			}
			if math.IsNaN(d.Margin) {
				out.NaNRoots[i]++
			} else {
				out.MaxMargin[i] = math.Max(out.MaxMargin[i], d.Margin)
			}
		}
	}
	return out, nil
}

// TestCompareStrategyOnDevice: the report built from per-combo counts and
// the worst combos recomputed on the CPU is compareStrategy's, field for
// field, for each family with memory, in both modes and formulations.
func TestCompareStrategyOnDevice(t *testing.T) {
	all := btcBars(t)
	bars := all.Slice(0, 6000)
	cases := []sweepCase{
		{"zscore", map[string]string{"length": "5:45:10", "entry": "1:2.5:0.5", "exit": "-0.5:0.5:0.5"}, false, Direct},
		{"zscore", map[string]string{"length": "2:42:20", "entry": "0.5:2.5:1", "exit": "0"}, false, Prefix},
		{"breakout", map[string]string{"entry": "5:30:5", "exit": "3:20:4"}, false, Direct},
		{"rsi", map[string]string{"length": "2:21:3", "lower": "25:35:5", "upper": "65:75:5"}, false, Prefix},
		{"cross", map[string]string{"fast": "sma:3:30:3", "slow": "wma:10:60:10"}, false, Prefix},
	}
	ctx := context.Background()
	for _, tc := range cases {
		for _, mode := range []engine.Mode{engine.LongShort, engine.LongOnly} {
			s, err := engine.NewStrategy(tc.family, tc.params, false)
			if err != nil {
				t.Fatal(err)
			}
			params := sweepParams
			params.Mode = mode
			grid := engine.Grid{Strategy: s}
			st := &engine.Study{Dataset: &data.Dataset{Bars: bars, Info: data.Info{Name: "btc", Bars: bars.Len()}}, Grid: grid, Params: params,
				Precisions: []engine.Precision{engine.FP64, engine.FP32}, WMA: tc.f, Backend: reference.New(), Fallback: reference.New()}
			rep, err := engine.RunStudy(ctx, st, engine.StudyOptions{})
			if err != nil {
				t.Fatal(err)
			}
			job := &engine.Job{Bars: &bars, Grid: grid, Params: params, Precision: engine.FP64, WMA: engine.Direct}
			got, err := engine.CompareStrategyOnDevice(ctx, cpuCounts{}, job, rep.Run(engine.FP64), rep.Run(engine.FP32), 0)
			if err != nil {
				t.Fatal(err)
			}
			want := rep.Parity
			if got.Device != "cpu counts" {
				t.Errorf("device %q", got.Device)
			}
			got.Device = want.Device
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s %s %s: the report differs:\n got %+v\nwant %+v", tc.family, tc.f, mode, *got, *want)
			}
			// breakout's levels are exact in both precisions: no flips,
			// the report of zero divergences is what is compared.
			if want.FlipCount == 0 && tc.family != "breakout" {
				t.Errorf("%s %s %s: no flips: the case tests little", tc.family, tc.f, mode)
			}
			t.Logf("%s %s %s: %d flips, %d listed, verdict %s", tc.family, tc.f, mode, want.FlipCount, len(want.Flips), want.Verdict)
		}
	}
}

// zscoreDirectPlain is zscoreSeries' direct formulation one window at a
// time, as SPEC writes it: the test's oracle for the four-window loop.
func zscoreDirectPlain[F Float](x []F, L int) (m, sd []F) {
	n := len(x)
	m, sd = make([]F, n), make([]F, n)
	lf := F(L)
	for i := range n {
		if i < L-1 {
			m[i], sd[i] = F(math.NaN()), F(math.NaN())
			continue
		}
		var sum F
		for j := i - L + 1; j <= i; j++ {
			sum += x[j]
		}
		mi := sum / lf
		var acc F
		for j := i - L + 1; j <= i; j++ {
			dv := x[j] - mi
			acc += F(dv * dv)
		}
		m[i], sd[i] = mi, F(math.Sqrt(float64(acc/lf)))
	}
	return m, sd
}

// TestZScoreDirectFourWindows: the four-window loop gives the plain loop's
// bits, every bar, lengths 2..41 and lengths that leave 0-3 bars after the
// last group of four, in both precisions.
func TestZScoreDirectFourWindows(t *testing.T) {
	all := btcBars(t)
	bars := all.Slice(0, 1003)
	in64, in32 := NewInputs[float64](&bars, engine.SourceClose), NewInputs[float32](&bars, engine.SourceClose)
	same := func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) || a != a && b != b }
	for L := 2; L <= 41; L++ {
		m, sd := zscoreSeries(in64.Src, L, Direct)
		wm, wsd := zscoreDirectPlain(in64.Src, L)
		m32, sd32 := zscoreSeries(in32.Src, L, Direct)
		wm32, wsd32 := zscoreDirectPlain(in32.Src, L)
		for i := range m {
			if !same(m[i], wm[i]) || !same(sd[i], wsd[i]) || !same(float64(m32[i]), float64(wm32[i])) || !same(float64(sd32[i]), float64(wsd32[i])) {
				t.Fatalf("L %d bar %d: fp64 %v %v want %v %v; fp32 %v %v want %v %v", L, i, m[i], sd[i], wm[i], wsd[i], m32[i], sd32[i], wm32[i], wsd32[i])
			}
		}
	}
}

// BenchmarkZScoreSeriesDirect: one length's mean and sd over btcusdt-1m
// (the host's share of a zscore study on the GPU).
func BenchmarkZScoreSeriesDirect(b *testing.B) {
	all := btcBars(b)
	in64 := NewInputs[float64](all, engine.SourceClose)
	for b.Loop() {
		zscoreSeries(in64.Src, 200, Direct)
	}
}

// BenchmarkZScoreSeriesDirectPlain is BenchmarkZScoreSeriesDirect with the
// one-window loop (the four-window loop's gain).
func BenchmarkZScoreSeriesDirectPlain(b *testing.B) {
	all := btcBars(b)
	in64 := NewInputs[float64](all, engine.SourceClose)
	for b.Loop() {
		zscoreDirectPlain(in64.Src, 200)
	}
}

// TestSMADirectFourWindows: smaDirect's four-window loop gives the
// one-window sums' bits (oldest bar first), every bar, lengths 1..41, from
// source starts 0 and 5, in both precisions.
func TestSMADirectFourWindows(t *testing.T) {
	all := btcBars(t)
	bars := all.Slice(0, 1003)
	in64, in32 := NewInputs[float64](&bars, engine.SourceClose), NewInputs[float32](&bars, engine.SourceClose)
	check := func(L, s int) {
		got, got32 := make([]float64, len(in64.Src)), make([]float32, len(in32.Src))
		smaDirect(in64.Src, L, s, got)
		smaDirect(in32.Src, L, s, got32)
		for i := s + L - 1; i < len(got); i++ {
			var a float64
			var a32 float32
			for j := i - L + 1; j <= i; j++ {
				a += in64.Src[j]
				a32 += in32.Src[j]
			}
			if w, w32 := a/float64(L), a32/float32(L); math.Float64bits(got[i]) != math.Float64bits(w) || math.Float32bits(got32[i]) != math.Float32bits(w32) {
				t.Fatalf("L %d s %d bar %d: %v %v, want %v %v", L, s, i, got[i], got32[i], w, w32)
			}
		}
	}
	for L := 1; L <= 41; L++ {
		check(L, 0)
		check(L, 5)
	}
}

// TestFastBelowSlowEmpty: a study whose restriction leaves no combo is
// refused, naming --fast-below-slow (the grid itself may be empty:
// TestFastBelowSlowByHand).
func TestFastBelowSlowEmpty(t *testing.T) {
	sp := engine.DefaultSpec()
	sp.HMA, sp.HMA3 = "", ""
	sp.Strategy, sp.FastBelowSlow = "cross", true
	sp.Params = map[string]string{"fast": "ema:50:60:5", "slow": "sma:20:30:10"}
	_, err := sp.Parse()
	var fe *engine.FieldError
	if !errors.As(err, &fe) || fe.Field != engine.FieldFastBelowSlow || !strings.Contains(err.Error(), "no combo") {
		t.Fatalf("err %v, want a --fast-below-slow FieldError", err)
	}
	sp.Params["fast"] = "ema:5:60:5"
	if set, err := sp.Parse(); err != nil || set.Grid.Len() != 8 { // fast 5, 10, 15 below 20; 5..25 below 30
		t.Fatalf("a restriction that keeps combos: %v", err)
	}
}
