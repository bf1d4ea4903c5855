package engine_test

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"sweepbench/engine"
	"sweepbench/engine/output"
	"sweepbench/reference"
)

// TestBarsPerYearFitsTheData: bars per year follows the calendar the bars
// keep. SPY hourly bars (US regular sessions, 7 bars a day) are not 8,760
// a year: the study takes the bars observed per year, and says so; BTC
// hourly bars run 24/7 and keep SPEC's 24/7 rule; a given number wins.
func TestBarsPerYearFitsTheData(t *testing.T) {
	reg := &engine.Registry{}
	reg.Register(reference.New())
	// The span of the SPY file, by hand: 1998-01-02 09:00 EST to
	// 2021-03-31 15:00 EDT, 40,832 bars.
	spySpan := time.Date(2021, 3, 31, 19, 0, 0, 0, time.UTC).Sub(time.Date(1998, 1, 2, 14, 0, 0, 0, time.UTC))
	spyObserved := 40831 / (spySpan.Hours() / 8766)
	tests := []struct {
		name, data string
		given      float64
		want       float64
		rule       string // the start of the report's rule
	}{
		{"SPY hourly: a session calendar, bars observed a year", "../testdata/data/spy_1h_1998-2021.csv.gz", 0, spyObserved,
			"observed over 23.2 years: a session calendar (bars cover 20% of the time; 5,848 gaps, 99% of them after the same two hours of the day)"},
		{"BTC hourly: 24/7 from the spacing", "../testdata/data/btcusdt_1h_2022-2026.csv.gz", 0, 8760,
			"24/7 calendar from the 1h median spacing (bars cover 100% of the time)"},
		{"SPY hourly, given", "../testdata/data/spy_1h_1998-2021.csv.gz", 1764, 1764, "as given"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec := engine.DefaultSpec()
			spec.Data, spec.BarsPerYear, spec.Backend = tc.data, tc.given, "reference"
			spec.HMA, spec.HMA3, spec.Precision = "10:20:10", "12:24:12", "fp64"
			st, err := spec.Build(reg)
			if err != nil {
				t.Fatal(err)
			}
			if got := st.Params.BarsPerYear; math.Abs(got-tc.want) > 1e-9*tc.want {
				t.Errorf("bars per year %v, want %v", got, tc.want)
			}
			rule := engine.BarsPerYearRule(&st.Dataset.Info, st.Params.BarsPerYear)
			if rule != tc.rule {
				t.Errorf("rule %q\nwant %q", rule, tc.rule)
			}
			rep := &engine.Report{Dataset: st.Dataset.Info, Params: st.Params, Grid: st.Grid}
			var buf bytes.Buffer
			if err := output.WriteTable(&buf, rep, 1); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(buf.String(), " bars/year, "+tc.rule+"\n") {
				t.Errorf("the report does not say the rule:\n%s", buf.String())
			}
		})
	}
}
