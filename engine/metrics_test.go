package engine_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"sweepbench/conformance"
	"sweepbench/engine"
	"sweepbench/engine/output"
	"sweepbench/engine/text"
)

// TestJSONFloatRoundTrip: SPEC "Metrics per combo": non-finite values are
// the strings "inf", "-inf", "nan" in JSON, never bare tokens, and read
// back to the same value; finite values round-trip exactly.
func TestJSONFloatRoundTrip(t *testing.T) {
	for _, c := range []struct {
		v    float64
		text string
	}{
		{math.Inf(1), `"inf"`}, {math.Inf(-1), `"-inf"`}, {math.NaN(), `"nan"`},
		{0, `0`}, {-0.25, `-0.25`}, {1e-300, `1e-300`}, {0.1, `0.1`}, {math.MaxFloat64, `1.7976931348623157e+308`},
	} {
		b, err := json.Marshal(engine.JSONFloat(c.v))
		if err != nil || string(b) != c.text {
			t.Errorf("Marshal(%v) = %s, %v, want %s", c.v, b, err, c.text)
		}
		var back engine.JSONFloat
		if err := json.Unmarshal(b, &back); err != nil || !conformance.SameFloat(float64(back), c.v) {
			t.Errorf("Unmarshal(%s) = %v, %v, want %v", b, back, err, c.v)
		}
	}
	var f engine.JSONFloat
	if err := json.Unmarshal([]byte(`"infinity"`), &f); err == nil {
		t.Error(`Unmarshal("infinity"): no error`)
	}
	for _, c := range []struct {
		v    float64
		want string
	}{{math.Inf(1), "inf"}, {math.Inf(-1), "-inf"}, {math.NaN(), "nan"}, {1.5, "1.5"}, {-2e-7, "-2e-07"}} {
		if got := text.FormatFloat(c.v); got != c.want {
			t.Errorf("FormatFloat(%v) = %q, want %q", c.v, got, c.want)
		}
	}
}

// TestMetricsByName: Value and SetValue cover every SPEC name, in both
// directions; unknown names are refused.
func TestMetricsByName(t *testing.T) {
	var m engine.Metrics
	for i, name := range engine.MetricNames {
		if !m.SetValue(name, float64(i+1)) {
			t.Errorf("SetValue(%q) refused", name)
		}
	}
	want := engine.Metrics{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24}
	if m != want {
		t.Errorf("after SetValue by name: %+v, want %+v (names out of field order?)", m, want)
	}
	for i, name := range engine.MetricNames {
		if v, ok := m.Value(name); !ok || v != float64(i+1) {
			t.Errorf("Value(%q) = %v, %v", name, v, ok)
		}
	}
	if _, ok := m.Value("alpha"); ok {
		t.Error("Value(alpha) accepted")
	}
	if m.SetValue("alpha", 1) {
		t.Error("SetValue(alpha) accepted")
	}
}

// TestReportWritesNonFinite: a report whose metrics hold +Inf (omega,
// sortino, an overflowing cagr) and NaN writes valid JSON with the SPEC
// strings, CSV with the same spelling, and ParseMetricsJSON reads a combo
// back with its index placed on the grid.
func TestReportWritesNonFinite(t *testing.T) {
	g := engine.Grid{HMA: engine.Range{Start: 10, Stop: 30, Step: 10}, HMA3: engine.Range{Start: 12, Stop: 36, Step: 12}}
	m := engine.Metrics{TotalReturn: 0.5, CAGR: math.Inf(1), Sortino: math.Inf(1), Omega: math.Inf(1), Sharpe: math.NaN(),
		Calmar: math.Inf(-1), TotalTrades: 3, LongBars: 10, FlatBars: 5}
	rep := &engine.Report{Grid: g, Params: engine.Params{Fee: engine.DefaultFee, BarsPerYear: 525600}, Backend: "reference",
		Runs: []*engine.Run{{Backend: "reference", Precision: engine.FP64, Grid: g, Status: engine.StatusComplete,
			Results: []engine.ComboResult{{Index: 5, Combo: g.At(5), Metrics: m}}}}}
	var buf bytes.Buffer
	if err := output.WriteJSON(&buf, rep); err != nil {
		t.Fatal(err)
	}
	if !json.Valid(buf.Bytes()) {
		t.Fatalf("invalid JSON:\n%s", buf.String())
	}
	var doc struct {
		Runs []struct {
			Combos []json.RawMessage `json:"combos"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, doc.Runs[0].Combos[0]); err != nil {
		t.Fatal(err)
	}
	raw := compact.Bytes()
	for _, w := range []string{`"cagr":"inf"`, `"sortino":"inf"`, `"omega":"inf"`, `"sharpe":"nan"`, `"calmar":"-inf"`} {
		if !strings.Contains(string(raw), w) {
			t.Errorf("combo JSON %s lacks %s", raw, w)
		}
	}
	back, err := output.ParseMetricsJSON(raw, g)
	if err != nil {
		t.Fatal(err)
	}
	_, same := conformance.SameMetrics(back.Metrics, m)
	if back.Index != 5 || back.Combo != g.At(5) || !same {
		t.Errorf("ParseMetricsJSON = %+v, want index 5 %+v %+v", back, g.At(5), m)
	}

	buf.Reset()
	if err := output.WriteCSV(&buf, rep); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil || len(rows) != 2 {
		t.Fatalf("CSV: %v, %d rows", err, len(rows))
	}
	col := map[string]string{}
	for i, h := range rows[0] {
		col[h] = rows[1][i]
	}
	if col["cagr"] != "inf" || col["sharpe"] != "nan" || col["calmar"] != "-inf" || col["hma"] != "20" || col["hma3"] != "36" || col["total_trades"] != "3" ||
		col["status"] != string(rep.Runs[0].Status) || col["fee"] != text.FormatFloat(rep.Params.Fee) || col["mode"] != rep.Params.Mode.String() ||
		col["bars_per_year"] != text.FormatFloat(rep.Params.BarsPerYear) || col["dataset"] != rep.Dataset.Name {
		t.Errorf("CSV row %v", col)
	}
}
