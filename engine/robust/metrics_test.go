package robust

import (
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// direct computes SPEC's metrics straight from the bars of a union, the way
// docs/SPEC.md writes them (a second, independent formulation: the growth
// as a product, exact in 512-bit big.Float so that the reference is not the
// less accurate side; a two-pass population variance; a trade list).
type direct struct {
	totalReturn, cagr, mean, sharpe, sortino, winRate, trades float64
}

func directMetrics(rs []float64, wins []bool, bpy float64) direct {
	m := float64(len(rs))
	var sum, down float64
	growth := new(big.Float).SetPrec(512).SetInt64(1)
	for _, x := range rs {
		sum += x
		if x < 0 {
			down += x * x
		}
		f := new(big.Float).SetPrec(512).SetFloat64(x)
		growth.Mul(growth, f.Add(f, big.NewFloat(1)))
	}
	g, _ := growth.Float64()
	tr, _ := new(big.Float).Sub(growth, big.NewFloat(1)).Float64()
	mean := sum / m
	var v float64
	for _, x := range rs {
		v += (x - mean) * (x - mean)
	}
	std := math.Sqrt(v / m)
	d := direct{totalReturn: tr, cagr: math.Pow(g, bpy/m) - 1, mean: mean, trades: float64(len(wins))}
	if std > 0 {
		d.sharpe = mean / std * math.Sqrt(bpy)
	}
	switch {
	case down > 0:
		d.sortino = mean / math.Sqrt(down/m) * math.Sqrt(bpy)
	case mean > 0:
		d.sortino = math.Inf(1)
	}
	var w int
	for _, won := range wins {
		if won {
			w++
		}
	}
	if len(wins) > 0 {
		d.winRate = float64(w) / float64(len(wins))
	}
	return d
}

// TestDecomposableMetrics: for random returns (a drift of +-1% a bar and 1%
// noise, so that no metric of a union of 20 bars or more sits near zero,
// where a relative error says nothing: fp64's error in log growth is ~1e-16
// absolute, ~1e-13 relative on a total return of 1e-3), random block edges
// and random trades, every decomposable metric over random unions of blocks
// equals the same metric computed directly on the union's bars
// (directMetrics) within 1e-12 relative.
func TestDecomposableMetrics(t *testing.T) {
	const tol = 1e-12
	rng := rand.New(rand.NewPCG(11, 12))
	const bpy = 8760
	worst := map[string]float64{}
	for trial := 0; trial < 40; trial++ {
		n := 3 + rng.IntN(6)
		s := 1 + rng.IntN(16)
		bars := s * (20 + rng.IntN(200))
		mu := make([]float64, n)
		for c := range mu {
			mu[c] = 0.01 * float64(1-2*rng.IntN(2))
		}
		rs := randomReturns(rng, n, bars, mu, 0.01)
		trades := make([][]TradeExit, n)
		for c := range trades {
			for k := 0; k < bars; k += 1 + rng.IntN(9) {
				trades[c] = append(trades[c], TradeExit{Bar: k, Won: rng.IntN(3) > 0})
			}
		}
		bounds := randomBounds(rng, bars, s)
		bs, err := FromReturns(rs, trades, bounds)
		if err != nil {
			t.Fatal(err)
		}
		if err := bs.Validate(); err != nil {
			t.Fatal(err)
		}
		for u := 0; u < 10; u++ {
			m := Mask(rng.Uint64()) & AllBlocks(s)
			if m == 0 {
				m = 1 << uint(rng.IntN(s))
			}
			for c := 0; c < n; c++ {
				var bars []float64
				var wins []bool
				for b := 0; b < s; b++ {
					if !m.Has(b) {
						continue
					}
					bars = append(bars, rs[c][bounds[b]:bounds[b+1]]...)
					for _, tr := range trades[c] {
						if tr.Bar >= bounds[b] && tr.Bar < bounds[b+1] {
							wins = append(wins, tr.Won)
						}
					}
				}
				want := directMetrics(bars, wins, bpy)
				got := bs.Union(c, m)
				if got.Bars != int64(len(bars)) {
					t.Fatalf("bars %d, want %d", got.Bars, len(bars))
				}
				for _, f := range []struct {
					name      string
					got, want float64
				}{
					{"total_return", got.TotalReturn(), want.totalReturn},
					{"cagr", got.CAGR(bpy), want.cagr},
					{"mean", got.Mean(), want.mean},
					{"sharpe", got.Sharpe(bpy), want.sharpe},
					{"sharpe per bar", got.SharpePerBar() * math.Sqrt(bpy), want.sharpe},
					{"sortino", got.Sortino(bpy), want.sortino},
					{"win_rate", got.WinRate(), want.winRate},
					{"total_trades", float64(got.Trades), want.trades},
				} {
					e := relErr(f.got, f.want)
					worst[f.name] = math.Max(worst[f.name], e)
					if !(e <= tol) {
						t.Errorf("trial %d combo %d blocks %#x: %s %v, direct %v (relative error %.2g)", trial, c, uint64(m), f.name, f.got, f.want, e)
					}
				}
				for _, metric := range Metrics() {
					v := metric.Value(got, bpy)
					if math.IsNaN(v) {
						t.Errorf("%s is NaN", metric)
					}
				}
			}
		}
	}
	t.Logf("largest relative error by metric (limit %g): %v", tol, worst)
}

// TestShape: skewness and (non-excess) kurtosis from the whole-sample sums
// equal the two-pass central moments within 1e-10 relative, on skewed
// data (exponential returns shifted to mean 0).
func TestShape(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	rs := make([][]float64, 3)
	for c := range rs {
		for k := 0; k < 5000; k++ {
			rs[c] = append(rs[c], 0.01*(rng.ExpFloat64()-1)+0.001*float64(c))
		}
	}
	bounds, _ := EqualBounds(5000, 7)
	bs, err := FromReturns(rs, nil, bounds)
	if err != nil {
		t.Fatal(err)
	}
	for c, r := range rs {
		var mu, m2, m3, m4 float64
		for _, x := range r {
			mu += x
		}
		mu /= float64(len(r))
		for _, x := range r {
			d := x - mu
			m2 += d * d
			m3 += d * d * d
			m4 += d * d * d * d
		}
		n := float64(len(r))
		m2, m3, m4 = m2/n, m3/n, m4/n
		skew, kurt := bs.Shape(c)
		if relErr(skew, m3/math.Pow(m2, 1.5)) > 1e-10 || relErr(kurt, m4/(m2*m2)) > 1e-10 {
			t.Errorf("combo %d: skew %v kurt %v, two-pass %v %v", c, skew, kurt, m3/math.Pow(m2, 1.5), m4/(m2*m2))
		}
		if skew < 1.5 || kurt < 6 { // an exponential has skewness 2, kurtosis 9
			t.Errorf("combo %d: skew %v kurt %v, want about 2 and 9", c, skew, kurt)
		}
	}
}

// TestZeroVariance: a combo that never trades (every return 0) has Sharpe
// and Sortino 0 (SPEC: 0 when the denominator is 0), total return 0; one
// with a constant positive return has Sharpe 0 (std = 0, within the
// floor) and Sortino +Inf (no downside, mean > 0).
func TestZeroVariance(t *testing.T) {
	flat := make([]float64, 1000)
	up := make([]float64, 1000)
	for k := range up {
		up[k] = 0.001
	}
	bs, err := FromReturns([][]float64{flat, up}, nil, []int{0, 400, 1000})
	if err != nil {
		t.Fatal(err)
	}
	f, u := bs.Whole(0), bs.Whole(1)
	if f.Sharpe(252) != 0 || f.Sortino(252) != 0 || f.TotalReturn() != 0 || f.WinRate() != 0 {
		t.Errorf("flat: sharpe %v sortino %v return %v win %v", f.Sharpe(252), f.Sortino(252), f.TotalReturn(), f.WinRate())
	}
	if u.Sharpe(252) != 0 || !math.IsInf(u.Sortino(252), 1) {
		t.Errorf("constant: sharpe %v sortino %v, want 0 and +Inf", u.Sharpe(252), u.Sortino(252))
	}
	if skew, kurt := bs.Shape(1); skew != 0 || kurt != 3 {
		t.Errorf("constant: shape %v %v, want 0 3", skew, kurt)
	}
}

// TestParseMetric: SPEC names map to the decomposable metrics; the
// others are typed errors naming why.
func TestParseMetric(t *testing.T) {
	for _, m := range Metrics() {
		got, err := ParseMetric(m.String())
		if err != nil || got != m {
			t.Errorf("ParseMetric(%q) = %v, %v", m, got, err)
		}
	}
	for name, want := range map[string]error{"max_drawdown": ErrNotDecomposable, "calmar": ErrNotDecomposable, "var_95": ErrNotDecomposable, "omega": ErrNotDecomposable, "sharp": ErrValue} {
		if _, err := ParseMetric(name); !errors.Is(err, want) {
			t.Errorf("ParseMetric(%q): %v, want %v", name, err, want)
		}
	}
}

// TestFromReturnsErrors: the typed errors of the CPU builder and of
// Validate.
func TestFromReturnsErrors(t *testing.T) {
	r := [][]float64{{0.01, 0.02, -0.01, 0}}
	cases := []struct {
		name   string
		rs     [][]float64
		trades [][]TradeExit
		bounds []int
		want   error
	}{
		{"no combos", nil, nil, []int{0, 4}, ErrEmpty},
		{"no blocks", r, nil, []int{0}, ErrBlocks},
		{"bounds short", r, nil, []int{0, 3}, ErrLength},
		{"empty block", r, nil, []int{0, 2, 2, 4}, ErrValue},
		{"ragged", [][]float64{{0, 0, 0, 0}, {0}}, nil, []int{0, 4}, ErrLength},
		{"trade lists", r, [][]TradeExit{nil, nil}, []int{0, 4}, ErrLength},
		{"trade bar", r, [][]TradeExit{{{Bar: 4}}}, []int{0, 4}, ErrValue},
		{"nan", [][]float64{{0, math.NaN(), 0, 0}}, nil, []int{0, 4}, ErrValue},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := FromReturns(c.rs, c.trades, c.bounds)
			if !errors.Is(err, c.want) {
				t.Fatalf("error %v, want %v", err, c.want)
			}
		})
	}
	bs, _ := FromReturns(r, nil, []int{0, 2, 4})
	bs.Bars[1] = 3
	if err := bs.Validate(); !errors.Is(err, ErrValue) {
		t.Errorf("bars against bounds: %v, want ErrValue", err)
	}
	bs.Bars[1] = 2
	bs.Wins[0] = 1
	if err := bs.Validate(); !errors.Is(err, ErrValue) {
		t.Errorf("wins above trades: %v, want ErrValue", err)
	}
}

// TestChunk: statistics computed chunk by chunk into views of one
// BlockStats equal those computed at once.
func TestChunk(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	rs := randomReturns(rng, 10, 300, nil, 0.01)
	bounds, _ := EqualBounds(300, 6)
	whole, _ := FromReturns(rs, nil, bounds)
	bs, _ := NewBlockStats(10, 6)
	bs.Bounds = bounds
	for c0 := 0; c0 < 10; c0 += 4 {
		c1 := min(c0+4, 10)
		part, err := FromReturns(rs[c0:c1], nil, bounds)
		if err != nil {
			t.Fatal(err)
		}
		view := bs.Chunk(c0, c1)
		copy(view.Bars, part.Bars)
		copy(view.Sum, part.Sum)
		copy(view.SumSq, part.SumSq)
		copy(view.SumDown, part.SumDown)
		copy(view.SumLog, part.SumLog)
		copy(view.Sum3, part.Sum3)
		copy(view.Sum4, part.Sum4)
	}
	if err := bs.Validate(); err != nil {
		t.Fatal(err)
	}
	for c := 0; c < 10; c++ {
		if bs.Whole(c) != whole.Whole(c) || bs.Sum4[c] != whole.Sum4[c] {
			t.Errorf("combo %d: chunked %+v, whole %+v", c, bs.Whole(c), whole.Whole(c))
		}
	}
}
