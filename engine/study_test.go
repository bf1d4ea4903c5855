package engine_test

// External tests: they drive the engine through the reference CPU backend,
// which imports engine (so they cannot live in package engine).

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"sweepbench/engine"
	"sweepbench/engine/output"
	"sweepbench/internal/studytest"
	"sweepbench/reference"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// The shared helpers (package studytest), under the names these tests
// call them by.
var (
	openDataset = studytest.OpenDataset
	head        = studytest.Head
	mustRange   = studytest.MustRange
	study       = studytest.Study
)

// TestStudyFIL is SPEC's headline claim on real data: the embedded FIL/USDT
// 1m file (first 150,000 bars, then all 175,680), the default grid 20:200:20
// x 30:240:30 (80 combos), fp32 against the fp64 reference.
//   - direct WMA: verdict pass, no non-borderline flip, indicator error <= 2e-6;
//   - prefix WMA: collapse, with the indicator error (> 1e-4) among the reasons.
func TestStudyFIL(t *testing.T) {
	fil := openDataset(t, "embedded:filusdt-1m")
	if fil.Bars.Len() != 175680 {
		t.Fatalf("embedded:filusdt-1m has %d bars, want 175,680", fil.Bars.Len())
	}
	for _, n := range []int{150000, 175680} {
		for _, form := range []engine.Formulation{engine.Direct, engine.Prefix} {
			t.Run(fmt.Sprintf("%d/%s", n, form), func(t *testing.T) {
				ds := head(fil, n)
				rep, err := engine.RunStudy(context.Background(), study(t, ds, "20:200:20", "30:240:30", form), engine.StudyOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if !rep.Complete() || len(rep.Runs) != 2 || rep.Parity == nil {
					t.Fatalf("complete %v, %d runs, parity %v", rep.Complete(), len(rep.Runs), rep.Parity != nil)
				}
				p := rep.Parity
				worst := engine.SeriesError{}
				if len(p.IndicatorErrors) > 0 {
					worst = p.IndicatorErrors[0]
				}
				t.Logf("%d bars, fp32 %s vs fp64: verdict %s; indicator error %.3g (%s %d, bar %d); trades fp64 %d fp32 %d, shifted %d (%.4f%%), max |dn| %d; max |dPnL| %.4f pp; flips %d (%d non-borderline); combos differing %d/%d",
					n, form, p.Verdict, p.MaxRelIndicatorError, worst.Series, worst.Length, worst.Bar, p.TotalTrades64, p.TotalTrades32,
					p.ShiftedTrades, 100*p.ShiftedShare, p.MaxAbsDn, p.MaxAbsDPnLpp, p.FlipCount, p.NonBorderlineFlips, p.CombosDiffering, p.CombosCompared)
				for _, r := range p.Reasons {
					t.Logf("  collapse: %s", r)
				}
				if p.CombosCompared != 80 || len(p.IndicatorErrors) != 18 {
					t.Errorf("compared %d combos and %d series, want 80 and 10+8", p.CombosCompared, len(p.IndicatorErrors))
				}
				if form == engine.Direct {
					if p.Verdict != engine.VerdictPass || len(p.Reasons) != 0 {
						t.Errorf("direct: verdict %q reasons %q, want pass", p.Verdict, p.Reasons)
					}
					if p.NonBorderlineFlips != 0 {
						t.Errorf("direct: %d non-borderline flips, want 0", p.NonBorderlineFlips)
					}
					if !(p.MaxRelIndicatorError <= 2e-6) {
						t.Errorf("direct: max relative indicator error %g > 2e-6", p.MaxRelIndicatorError)
					}
					return
				}
				if p.Verdict != engine.VerdictCollapse || !(p.MaxRelIndicatorError > engine.MaxIndicatorRel) {
					t.Errorf("prefix: verdict %q, indicator error %g: want collapse with error > 1e-4", p.Verdict, p.MaxRelIndicatorError)
				}
				if !strings.Contains(strings.Join(p.Reasons, "\n"), "max relative indicator error") {
					t.Errorf("prefix: reasons %q do not report the indicator error", p.Reasons)
				}
			})
		}
	}
}

// TestInspectComboMatchesSweep: the workbench's one-combo recomputation
// (InspectCombo) gives the sweep's metrics bit for bit, its h and h3 are the
// sweep's indicator series bit for bit, and its trace's trades are the ones
// counted. Run for what a Study runs: fp64 direct, fp32 direct and prefix.
func TestInspectComboMatchesSweep(t *testing.T) {
	ds := head(openDataset(t, "embedded:btcusdt-1m"), 5000)
	s := study(t, ds, "10:30:10", "12:36:12", engine.Direct)
	for _, c := range []struct {
		prec engine.Precision
		form engine.Formulation
	}{{engine.FP64, engine.Direct}, {engine.FP32, engine.Direct}, {engine.FP32, engine.Prefix}} {
		job := &engine.Job{Bars: &ds.Bars, Grid: s.Grid, Params: s.Params, Precision: c.prec, WMA: c.form}
		run, err := engine.Sweep(context.Background(), reference.New(), job, engine.SweepOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var h, h3 func(engine.Combo) []float64
		if c.prec == engine.FP32 {
			ind, err := reference.GetIndicators[float32](context.Background(), job)
			if err != nil {
				t.Fatal(err)
			}
			h = func(cb engine.Combo) []float64 { return widen(ind.H[cb.HMA]) }
			h3 = func(cb engine.Combo) []float64 { return widen(ind.H3[cb.HMA3]) }
		} else {
			ind, err := reference.GetIndicators[float64](context.Background(), job)
			if err != nil {
				t.Fatal(err)
			}
			h = func(cb engine.Combo) []float64 { return ind.H[cb.HMA] }
			h3 = func(cb engine.Combo) []float64 { return ind.H3[cb.HMA3] }
		}
		for _, r := range run.Results {
			d, err := engine.InspectCombo(context.Background(), &ds.Bars, r.Combo, s.Params, c.prec, c.form)
			if err != nil {
				t.Fatal(err)
			}
			if d.Metrics != r.Metrics {
				t.Errorf("%s %s %+v: InspectCombo %+v, sweep %+v", c.prec, c.form, r.Combo, d.Metrics, r.Metrics)
			}
			if !sameFloats(d.H, h(r.Combo)) || !sameFloats(d.H3, h3(r.Combo)) {
				t.Errorf("%s %s %+v: InspectCombo's h/h3 are not the sweep's series", c.prec, c.form, r.Combo)
			}
			if len(d.Trades) != r.TotalTrades {
				t.Errorf("%s %+v: %d trades in the trace, %d counted", c.prec, r.Combo, len(d.Trades), r.TotalTrades)
			}
		}
	}
}

func widen(x []float32) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}

// sameFloats is bit equality, NaN equal to NaN.
func sameFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) && !(math.IsNaN(a[i]) && math.IsNaN(b[i])) {
			return false
		}
	}
	return true
}

// ---- the golden run ---------------------------------------------------------

const goldenRun = "testdata/golden_run.json"

// goldenIgnored are machine- and time-dependent fields.
var goldenIgnored = map[string]bool{"elapsed_s": true, "prepare_s": true, "combos_per_s": true, "device": true, "created": true}

// goldenInts are the fields that are counts or indices: compared exactly.
var goldenInts = map[string]bool{
	"bars": true, "source_bars": true, "gaps": true, "dropped_nan_rows": true, "combos": true, "hma": true, "hma3": true,
	"total_trades": true, "long_bars": true, "short_bars": true, "flat_bars": true, "combos_done": true,
	"trades_fp64": true, "trades_fp32": true, "dn": true, "flips": true, "non_borderline_flips": true,
	"combos_compared": true, "shifted_trades": true, "total_trades_fp64": true, "total_trades_fp32": true,
	"max_abs_dn": true, "flip_count": true, "length": true, "bar": true, "pos_fp64": true, "pos_fp32": true,
}

// TestGoldenRun runs a small real study (embedded:btcusdt-1m, first 5,000
// bars, --hma 10:30:10 --hma3 12:36:12, fp64 and fp32, reference backend)
// and compares its JSON report with testdata/golden_run.json field by
// field: counts exactly, other numbers to 1e-12 relative, strings exactly,
// machine-dependent fields ignored. Refresh with -update and review the
// diff. The golden was written on amd64, where Go never fuses a*b+c; on
// arm64 the compiler may fuse the backtest's accumulations (ssd += d*d),
// which moves fp32 metrics by an ulp: there a mismatch in an fp32 float
// means "check", not necessarily "wrong".
func TestGoldenRun(t *testing.T) {
	ds := head(openDataset(t, "embedded:btcusdt-1m"), 5000)
	rep, err := engine.RunStudy(context.Background(), study(t, ds, "10:30:10", "12:36:12", engine.Direct), engine.StudyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Machine- and time-dependent fields are zeroed so a refreshed golden
	// differs only where results do (the comparison ignores them anyway).
	rep.Created = time.Time{}
	for _, r := range rep.Runs {
		r.Elapsed, r.Prepare, r.Device = 0, 0, ""
	}
	var buf bytes.Buffer
	if err := output.WriteJSON(&buf, rep); err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.MkdirAll(filepath.Dir(goldenRun), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(goldenRun, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s (%d bytes)", goldenRun, buf.Len())
		return
	}
	want, err := os.ReadFile(goldenRun)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	// WriteJSON streams element by element; the golden was written by
	// the one-document encoder before it did: the bytes must not have
	// moved (on amd64, where the golden's numbers were computed).
	if runtime.GOARCH == "amd64" && !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("the JSON is not byte for byte %s (%d bytes, golden %d)", goldenRun, buf.Len(), len(want))
	}
	var got, exp any
	if err := decodeNumbers(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if err := decodeNumbers(want, &exp); err != nil {
		t.Fatal(err)
	}
	diffs := compareJSON("", got, exp, nil)
	for i, d := range diffs {
		if i == 30 {
			t.Errorf("... and %d more differences", len(diffs)-30)
			break
		}
		t.Error(d)
	}
	// The golden must itself say something: both runs complete with trades.
	if rep.Parity == nil || len(rep.Runs) != 2 || rep.Runs[0].Results[0].TotalTrades == 0 {
		t.Errorf("golden run is degenerate: %+v", rep.Runs)
	}
}

func decodeNumbers(b []byte, v *any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(v)
}

// compareJSON walks got and want together and lists every difference with
// its path.
func compareJSON(path string, got, want any, diffs []string) []string {
	key := path[strings.LastIndex(path, ".")+1:]
	if i := strings.Index(key, "["); i >= 0 {
		key = key[:i]
	}
	if goldenIgnored[key] {
		return diffs
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return append(diffs, fmt.Sprintf("%s: got %T, want an object", path, got))
		}
		keys := map[string]bool{}
		for k := range w {
			keys[k] = true
		}
		for k := range g {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			gv, gok := g[k]
			wv, wok := w[k]
			switch {
			case goldenIgnored[k]:
			case !gok:
				diffs = append(diffs, fmt.Sprintf("%s.%s: missing (golden %v)", path, k, wv))
			case !wok:
				diffs = append(diffs, fmt.Sprintf("%s.%s: not in the golden (got %v)", path, k, gv))
			default:
				diffs = compareJSON(path+"."+k, gv, wv, diffs)
			}
		}
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return append(diffs, fmt.Sprintf("%s: got %v, want %d elements", path, got, len(w)))
		}
		for i := range w {
			diffs = compareJSON(fmt.Sprintf("%s[%d]", path, i), g[i], w[i], diffs)
		}
	case json.Number:
		g, ok := got.(json.Number)
		if !ok {
			return append(diffs, fmt.Sprintf("%s: got %v, want the number %s", path, got, w))
		}
		if goldenInts[key] {
			if g != w {
				diffs = append(diffs, fmt.Sprintf("%s: got %s, want %s (exact)", path, g, w))
			}
			return diffs
		}
		gf, err1 := strconv.ParseFloat(string(g), 64)
		wf, err2 := strconv.ParseFloat(string(w), 64)
		if err1 != nil || err2 != nil || math.Abs(gf-wf) > 1e-12*math.Abs(wf) {
			diffs = append(diffs, fmt.Sprintf("%s: got %s, want %s (1e-12 relative)", path, g, w))
		}
	default: // strings ("inf", "nan", names), booleans, null
		if fmt.Sprint(got) != fmt.Sprint(want) {
			diffs = append(diffs, fmt.Sprintf("%s: got %v, want %v", path, got, want))
		}
	}
	return diffs
}
