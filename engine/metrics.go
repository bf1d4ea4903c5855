package engine

import (
	"math"
	"strconv"
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
}

// MetricNames lists the SPEC names in table order.
var MetricNames = []string{
	"total_return", "cagr", "sharpe", "sortino", "max_drawdown", "calmar",
	"win_rate", "total_trades", "var_95", "cvar_95", "omega",
	"long_bars", "short_bars", "flat_bars",
}

// Value returns a metric by its SPEC name as float64 (counts converted);
// ok is false for an unknown name.
func (m *Metrics) Value(name string) (v float64, ok bool) {
	switch name {
	case "total_return":
		return m.TotalReturn, true
	case "cagr":
		return m.CAGR, true
	case "sharpe":
		return m.Sharpe, true
	case "sortino":
		return m.Sortino, true
	case "max_drawdown":
		return m.MaxDrawdown, true
	case "calmar":
		return m.Calmar, true
	case "win_rate":
		return m.WinRate, true
	case "total_trades":
		return float64(m.TotalTrades), true
	case "var_95":
		return m.VaR95, true
	case "cvar_95":
		return m.CVaR95, true
	case "omega":
		return m.Omega, true
	case "long_bars":
		return float64(m.LongBars), true
	case "short_bars":
		return float64(m.ShortBars), true
	case "flat_bars":
		return float64(m.FlatBars), true
	}
	return 0, false
}

// SetValue sets a metric by its SPEC name (the inverse of Value, for stores
// and decoders); ok is false for an unknown name.
func (m *Metrics) SetValue(name string, v float64) bool {
	switch name {
	case "total_return":
		m.TotalReturn = v
	case "cagr":
		m.CAGR = v
	case "sharpe":
		m.Sharpe = v
	case "sortino":
		m.Sortino = v
	case "max_drawdown":
		m.MaxDrawdown = v
	case "calmar":
		m.Calmar = v
	case "win_rate":
		m.WinRate = v
	case "total_trades":
		m.TotalTrades = int(v)
	case "var_95":
		m.VaR95 = v
	case "cvar_95":
		m.CVaR95 = v
	case "omega":
		m.Omega = v
	case "long_bars":
		m.LongBars = int(v)
	case "short_bars":
		m.ShortBars = int(v)
	case "flat_bars":
		m.FlatBars = int(v)
	default:
		return false
	}
	return true
}

// FormatFloat writes v for JSON and tables: non-finite values as "inf",
// "-inf" or "nan" (SPEC: never a bare token), others in the shortest form
// that round-trips.
func FormatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	case math.IsNaN(v):
		return "nan"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// JSONFloat is a float64 that marshals non-finite values as the strings
// "inf", "-inf", "nan" (SPEC "Metrics per combo") and reads them back.
type JSONFloat float64

func (f JSONFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return []byte(`"` + FormatFloat(v) + `"`), nil
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
