package robust

import (
	"math"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// eulerGamma is the Euler-Mascheroni constant.
const eulerGamma = 0.57721566490153286060651209008240243104215933593992

// PSR is the probabilistic Sharpe ratio: the probability that the true
// Sharpe ratio exceeds the benchmark srStar, given the observed one,
//
//	PSR(SR*) = Phi( (SR - SR*) sqrt(T-1) / sqrt(1 - g3 SR + (g4-1)/4 SR^2) )
//
// (Bailey and López de Prado, "The Sharpe Ratio Efficient Frontier", Journal
// of Risk 15(2), 2012, the PSR definition; restated in "The Deflated Sharpe
// Ratio", 2014). sr and srStar are per bar (not annualised), skew is g3 and
// kurt the non-excess kurtosis g4 (3 for normal returns, which gives
// Lo's (2002) variance (1 + SR^2/2)/(T-1)), bars is T, the number of bar
// returns. Phi is gonum's distuv.UnitNormal CDF. Result: a probability,
// 0..1.
//
// Errors (*InputError, ErrValue): bars < 2; a non-finite argument; a
// denominator 1 - g3 SR + (g4-1)/4 SR^2 that is not positive (it is >= 0
// whenever g4 >= 1 + g3^2, which every distribution satisfies, so this
// means inconsistent moments).
func PSR(sr, srStar, skew, kurt float64, bars int64) (float64, error) {
	if bars < 2 {
		return 0, inputErr(ErrValue, "bars", "%d bar returns: PSR needs at least 2", bars)
	}
	for _, v := range []float64{sr, srStar, skew, kurt} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, inputErr(ErrValue, "psr", "sr %v, sr* %v, skew %v, kurtosis %v: all must be finite", sr, srStar, skew, kurt)
		}
	}
	den := 1 - skew*sr + (kurt-1)/4*sr*sr
	if !(den > 0) {
		return 0, inputErr(ErrValue, "kurtosis", "1 - skew*SR + (kurtosis-1)/4*SR^2 = %v with SR %v, skew %v, kurtosis %v: not positive (is the kurtosis excess? PSR wants the non-excess one)", den, sr, skew, kurt)
	}
	z := (sr - srStar) * math.Sqrt(float64(bars-1)) / math.Sqrt(den)
	return distuv.UnitNormal.CDF(z), nil
}

// ExpectedMaxSharpe is SR_0, the expected maximum of the Sharpe ratios of
// trials independent strategies with no skill, whose estimates have
// variance variance (per bar, squared: the variance of the trials'
// per-bar Sharpe ratios):
//
//	SR_0 = sqrt(V) ( (1-gamma) Z^-1(1 - 1/N) + gamma Z^-1(1 - 1/(N e)) )
//
// gamma the Euler-Mascheroni constant, Z^-1 gonum's distuv.UnitNormal
// quantile (Bailey and López de Prado, "The Deflated Sharpe Ratio:
// Correcting for Selection Bias, Backtest Overfitting and Non-Normality",
// Journal of Portfolio Management 40(5), 2014, the benchmark of the DSR; the
// approximation of the expected maximum from Bailey, Borwein, López de Prado
// and Zhu, "Pseudo-Mathematics and Financial Charlatanism", Notices of the
// AMS 61(5), 2014). Result: per bar. With one trial there is no selection
// and SR_0 is 0.
//
// Errors (*InputError, ErrValue): trials < 1; variance negative or not
// finite.
func ExpectedMaxSharpe(variance float64, trials int) (float64, error) {
	if trials < 1 {
		return 0, inputErr(ErrValue, "trials", "%d trials: want at least 1", trials)
	}
	if !(variance >= 0) || math.IsInf(variance, 0) {
		return 0, inputErr(ErrValue, "variance", "variance of the trials' Sharpe ratios %v: want a finite value >= 0", variance)
	}
	if trials == 1 {
		return 0, nil
	}
	n := float64(trials)
	z := (1-eulerGamma)*distuv.UnitNormal.Quantile(1-1/n) + eulerGamma*distuv.UnitNormal.Quantile(1-1/(n*math.E))
	return math.Sqrt(variance) * z, nil
}

// DSR is the deflated Sharpe ratio and what it is made of, for one combo.
// What it means, in one line: the probability that the combo's true Sharpe
// ratio is above zero once the selection (the best of Trials), the sample
// length and the returns' skewness and kurtosis are accounted for; below
// 0.95 the Sharpe ratio is not significant at the usual level.
type DSR struct {
	Combo        int     `json:"combo"`
	Bars         int64   `json:"bars"`           // T, bar returns over the whole sample
	SharpePerBar float64 `json:"sharpe_per_bar"` // SR, the combo's per-bar Sharpe ratio (population std, SPEC)
	SharpeAnnual float64 `json:"sharpe"`         // SR * sqrt(bars_per_year), SPEC sharpe
	Skew         float64 `json:"skew"`           // g3 of its bar returns (BlockStats.Shape)
	Kurtosis     float64 `json:"kurtosis"`       // g4, non-excess
	Trials       int     `json:"trials"`         // N, the number of trials the selection chose from
	// TrialVariance is V, the sample variance (n-1) of the per-bar Sharpe
	// ratios of every combo in the statistics (gonum stat.Variance).
	TrialVariance float64 `json:"trial_variance"`
	SR0           float64 `json:"sr0_per_bar"` // ExpectedMaxSharpe(V, N), per bar
	SR0Annual     float64 `json:"sr0"`         // SR0 * sqrt(bars_per_year)
	PSR           float64 `json:"psr"`         // PSR(0): the probability that the true SR > 0, ignoring the selection
	DSR           float64 `json:"dsr"`         // PSR(SR0): the deflated Sharpe ratio
}

// DeflatedSharpe computes the deflated Sharpe ratio (Bailey and López de
// Prado 2014: DSR = PSR(SR_0), see PSR and ExpectedMaxSharpe) of combo over
// the whole sample of bs, with trials = N (0: bs.Combos) and V the variance
// of the per-bar Sharpe ratios of all of bs's combos over the whole sample,
// the non-selectable ones included (every combo tried is a trial). Pass the
// grid's distinct combos: HMA3 aliases are one backtest (engine.Grid
// Aliases) and would count twice. barsPerYear annualises the figures shown
// (SharpeAnnual, SR0Annual); the probabilities are per bar and do not
// depend on it.
//
// Errors: bs invalid (Validate); ErrValue for combo out of range, trials <
// 0, barsPerYear not positive, fewer than 2 bar returns or inconsistent
// moments (PSR's errors).
func DeflatedSharpe(bs *BlockStats, combo, trials int, barsPerYear float64) (*DSR, error) {
	if err := bs.Validate(); err != nil {
		return nil, err
	}
	if combo < 0 || combo >= bs.Combos {
		return nil, inputErr(ErrValue, "combo", "combo %d: want 0..%d", combo, bs.Combos-1)
	}
	if trials < 0 {
		return nil, inputErr(ErrValue, "trials", "%d trials", trials)
	}
	if trials == 0 {
		trials = bs.Combos
	}
	if !(barsPerYear > 0) || math.IsInf(barsPerYear, 0) {
		return nil, inputErr(ErrValue, "bars_per_year", "%v: want a positive, finite value", barsPerYear)
	}
	srs := make([]float64, bs.Combos)
	for c := range srs {
		srs[c] = bs.Whole(c).SharpePerBar()
	}
	v := 0.0
	if len(srs) > 1 {
		v = stat.Variance(srs, nil)
	}
	w := bs.Whole(combo)
	skew, kurt := bs.Shape(combo)
	sr0, err := ExpectedMaxSharpe(v, trials)
	if err != nil {
		return nil, err
	}
	d := &DSR{
		Combo: combo, Bars: w.Bars, SharpePerBar: srs[combo], SharpeAnnual: srs[combo] * math.Sqrt(barsPerYear),
		Skew: skew, Kurtosis: kurt, Trials: trials, TrialVariance: v,
		SR0: sr0, SR0Annual: sr0 * math.Sqrt(barsPerYear),
	}
	if d.PSR, err = PSR(d.SharpePerBar, 0, skew, kurt, w.Bars); err != nil {
		return nil, err
	}
	if d.DSR, err = PSR(d.SharpePerBar, sr0, skew, kurt, w.Bars); err != nil {
		return nil, err
	}
	return d, nil
}
