package engine

import (
	"math"
	"strconv"

	"sweepbench/engine/text"
)

// Metrics are the per-combo results of SPEC "Metrics per combo", by the
// field's standard names. Fractions are fractions (0.05 = 5%), not percent;
// ratios are annualised with the run's bars_per_year.
type Metrics struct {
	TotalReturn float64 // E_final - 1, fraction, compounded
	CAGR        float64 // E_final^(bars_per_year/(n-1)) - 1, fraction per year
	Sharpe      float64 // mean(rs)/std(rs)*sqrt(bars_per_year), population std; 0 if std = 0
	Sortino     float64 // mean(rs)/sqrt(mean(min(rs,0)^2))*sqrt(bars_per_year); +Inf if no downside and mean > 0
	MaxDrawdown float64 // max_i (1 - E[i]/max_{j<=i} E[j]), fraction, over every bar
	Calmar      float64 // cagr/max_drawdown; 0 if max_drawdown = 0
	WinRate     float64 // wins/total_trades, fraction; 0 if no trade
	TotalTrades int     // every trade, the last open one included
	VaR95       float64 // element floor(0.05*(m-1)) of rs sorted ascending, fraction per bar
	CVaR95      float64 // mean of rs <= var_95, fraction per bar
	Omega       float64 // sum(max(rs,0))/sum(max(-rs,0)); +Inf with gains and no loss; 0 with neither
	LongBars    int     // bars held long (pos[i] = +1 held over bar i+1, i = 0..n-2)
	ShortBars   int     // bars held short
	FlatBars    int     // bars held flat

	// SPEC Part 2 "New metrics", over the combo's trades (R each trade's
	// return, a fraction: SPEC "Trades"); NaN where the backend that
	// computed the combo does not compute them (Trade metrics).
	ProfitFactor    float64 // sum of R > 0 / |sum of R < 0|; +Inf with wins and no loss; 0 with neither
	Expectancy      float64 // mean R, fraction per trade; 0 with no trade
	AvgWin          float64 // mean R of the trades with R > 0, fraction; 0 with none
	AvgLoss         float64 // mean R of the trades with R < 0, fraction (negative); 0 with none
	BestTrade       float64 // largest R, fraction; 0 with no trade
	WorstTrade      float64 // smallest R, fraction; 0 with no trade
	AvgTradeBars    float64 // bars held per trade, (long_bars+short_bars)/total_trades; 0 with no trade
	Exposure        float64 // (long_bars+short_bars)/(n-1), fraction of bars held in the market
	SQN             float64 // sqrt(N)*mean(R)/std(R), population std over the N trades; 0 if N < 2 or std = 0
	MaxDrawdownBars float64 // longest run of consecutive bars whose equity is below an earlier peak (a count, NaN when not computed)
}

// TradeMetrics are the names of Part 2's metrics over trades, which need
// the trades' returns (a backend that keeps only Part 1's accumulators
// leaves them NaN).
var TradeMetrics = []string{"profit_factor", "expectancy", "avg_win", "avg_loss", "best_trade", "worst_trade", "sqn", "max_drawdown_bars"}

// HasTradeMetrics reports whether m carries Part 2's trade metrics (a GPU
// lane of today leaves them NaN: engine.NoTradeMetrics).
func (m *Metrics) HasTradeMetrics() bool { return !math.IsNaN(m.Expectancy) }

// NoTradeMetrics marks m's trade metrics as not computed (NaN; a count,
// max_drawdown_bars too), for a backend that computes Part 1's
// metrics alone. Exposure and avg_trade_bars follow from the bar counts
// and are set.
func (m *Metrics) NoTradeMetrics(n int) {
	nan := math.NaN()
	m.ProfitFactor, m.Expectancy, m.AvgWin, m.AvgLoss, m.BestTrade, m.WorstTrade, m.SQN, m.MaxDrawdownBars = nan, nan, nan, nan, nan, nan, nan, nan
	m.AvgTradeBars, m.Exposure = BarShares(m.LongBars, m.ShortBars, m.TotalTrades, n)
}

// BarShares are avg_trade_bars and exposure from the bar counts over n
// bars (SPEC Part 2 "New metrics"), in float64.
func BarShares(long, short, trades, n int) (avgTradeBars, exposure float64) {
	held := float64(long + short)
	if trades > 0 {
		avgTradeBars = held / float64(trades)
	}
	if n > 1 {
		exposure = held / float64(n-1)
	}
	return avgTradeBars, exposure
}

// metricTable is every metric by its SPEC name, in table order: the one
// place that ties a name to a field. A count has count set, a ratio or
// fraction float.
var metricTable = []struct {
	name  string
	float func(*Metrics) *float64
	count func(*Metrics) *int
}{
	{name: "total_return", float: func(m *Metrics) *float64 { return &m.TotalReturn }},
	{name: "cagr", float: func(m *Metrics) *float64 { return &m.CAGR }},
	{name: "sharpe", float: func(m *Metrics) *float64 { return &m.Sharpe }},
	{name: "sortino", float: func(m *Metrics) *float64 { return &m.Sortino }},
	{name: "max_drawdown", float: func(m *Metrics) *float64 { return &m.MaxDrawdown }},
	{name: "calmar", float: func(m *Metrics) *float64 { return &m.Calmar }},
	{name: "win_rate", float: func(m *Metrics) *float64 { return &m.WinRate }},
	{name: "total_trades", count: func(m *Metrics) *int { return &m.TotalTrades }},
	{name: "var_95", float: func(m *Metrics) *float64 { return &m.VaR95 }},
	{name: "cvar_95", float: func(m *Metrics) *float64 { return &m.CVaR95 }},
	{name: "omega", float: func(m *Metrics) *float64 { return &m.Omega }},
	{name: "long_bars", count: func(m *Metrics) *int { return &m.LongBars }},
	{name: "short_bars", count: func(m *Metrics) *int { return &m.ShortBars }},
	{name: "flat_bars", count: func(m *Metrics) *int { return &m.FlatBars }},
	{name: "profit_factor", float: func(m *Metrics) *float64 { return &m.ProfitFactor }},
	{name: "expectancy", float: func(m *Metrics) *float64 { return &m.Expectancy }},
	{name: "avg_win", float: func(m *Metrics) *float64 { return &m.AvgWin }},
	{name: "avg_loss", float: func(m *Metrics) *float64 { return &m.AvgLoss }},
	{name: "best_trade", float: func(m *Metrics) *float64 { return &m.BestTrade }},
	{name: "worst_trade", float: func(m *Metrics) *float64 { return &m.WorstTrade }},
	{name: "avg_trade_bars", float: func(m *Metrics) *float64 { return &m.AvgTradeBars }},
	{name: "exposure", float: func(m *Metrics) *float64 { return &m.Exposure }},
	{name: "sqn", float: func(m *Metrics) *float64 { return &m.SQN }},
	{name: "max_drawdown_bars", float: func(m *Metrics) *float64 { return &m.MaxDrawdownBars }},
}

// MetricNames lists the SPEC names in table order.
var MetricNames = func() []string {
	out := make([]string, len(metricTable))
	for i, f := range metricTable {
		out[i] = f.name
	}
	return out
}()

// IsCount reports whether metric name is a count (total_trades and the
// bar counts): an integer, whatever the float64 Value returns it as.
func IsCount(name string) bool {
	i, ok := metricIndex[name]
	return ok && metricTable[i].count != nil
}

// metricIndex finds a name's row of metricTable.
var metricIndex = func() map[string]int {
	out := make(map[string]int, len(metricTable))
	for i, f := range metricTable {
		out[f.name] = i
	}
	return out
}()

// Value returns a metric by its SPEC name as float64 (counts converted);
// ok is false for an unknown name.
func (m *Metrics) Value(name string) (v float64, ok bool) {
	i, ok := metricIndex[name]
	if !ok {
		return 0, false
	}
	f := metricTable[i]
	if f.count != nil {
		return float64(*f.count(m)), true
	}
	return *f.float(m), true
}

// NumMetrics is len(MetricNames), the length of Metrics.Values.
const NumMetrics = 24

// Values writes every metric of m as float64 (counts converted) in
// MetricNames order: what 24 Value calls give, in one call
// (TestMetricValuesOrder checks the order against metricTable).
func (m *Metrics) Values(out *[NumMetrics]float64) {
	*out = [NumMetrics]float64{m.TotalReturn, m.CAGR, m.Sharpe, m.Sortino, m.MaxDrawdown, m.Calmar, m.WinRate,
		float64(m.TotalTrades), m.VaR95, m.CVaR95, m.Omega, float64(m.LongBars), float64(m.ShortBars), float64(m.FlatBars),
		m.ProfitFactor, m.Expectancy, m.AvgWin, m.AvgLoss, m.BestTrade, m.WorstTrade, m.AvgTradeBars, m.Exposure, m.SQN,
		m.MaxDrawdownBars}
}

// metricAt is metric i of MetricNames in m as float64 (counts
// converted), what Value does without the map lookup; an index out of
// range reads 0, as Value's v does for an unknown name.
// TestMetricAtOrder checks it against metricTable.
func metricAt(m *Metrics, i int) float64 {
	switch i {
	case 0:
		return m.TotalReturn
	case 1:
		return m.CAGR
	case 2:
		return m.Sharpe
	case 3:
		return m.Sortino
	case 4:
		return m.MaxDrawdown
	case 5:
		return m.Calmar
	case 6:
		return m.WinRate
	case 7:
		return float64(m.TotalTrades)
	case 8:
		return m.VaR95
	case 9:
		return m.CVaR95
	case 10:
		return m.Omega
	case 11:
		return float64(m.LongBars)
	case 12:
		return float64(m.ShortBars)
	case 13:
		return float64(m.FlatBars)
	case 14:
		return m.ProfitFactor
	case 15:
		return m.Expectancy
	case 16:
		return m.AvgWin
	case 17:
		return m.AvgLoss
	case 18:
		return m.BestTrade
	case 19:
		return m.WorstTrade
	case 20:
		return m.AvgTradeBars
	case 21:
		return m.Exposure
	case 22:
		return m.SQN
	case 23:
		return m.MaxDrawdownBars
	}
	return 0
}

// SetValue sets a metric by its SPEC name (the inverse of Value, for stores
// and decoders; a count is truncated to an int); ok is false for an unknown
// name.
func (m *Metrics) SetValue(name string, v float64) bool {
	i, ok := metricIndex[name]
	if !ok {
		return false
	}
	if f := metricTable[i]; f.count != nil {
		*f.count(m) = int(v)
	} else {
		*f.float(m) = v
	}
	return true
}

// JSONFloat is a float64 that marshals non-finite values as the strings
// "inf", "-inf", "nan" (SPEC "Metrics per combo") and reads them back.
type JSONFloat float64

func (f JSONFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return []byte(`"` + text.FormatFloat(v) + `"`), nil
	}
	return strconv.AppendFloat(nil, v, 'g', -1, 64), nil
}

func (f *JSONFloat) UnmarshalJSON(b []byte) error {
	s := string(b)
	switch s {
	case `"inf"`:
		*f = JSONFloat(math.Inf(1))
		return nil
	case `"-inf"`:
		*f = JSONFloat(math.Inf(-1))
		return nil
	case `"nan"`:
		*f = JSONFloat(math.NaN())
		return nil
	}
	v, err := strconv.ParseFloat(s, 64)
	*f = JSONFloat(v)
	return err
}
