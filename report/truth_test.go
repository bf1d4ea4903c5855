package report

import (
	"context"
	"math"
	"regexp"
	"testing"
	"time"

	"gonum.org/v1/plot"

	"sweepbench/engine/data"
)

// tickLayouts are the layouts a time axis labels its ticks with, each
// naming a calendar boundary exactly (a label parsed back is its tick).
var tickLayouts = []string{"2006", "2006-01", "2006-01-02", "2006-01-02 15:04", "01-02 15:04", "15:04"}

// checkCalendarTicks checks that marker's labelled ticks over [lo, hi]
// (Unix seconds) are 2 to maxTicks round calendar boundaries a whole step
// apart: each label parses back to its tick's time (January the first of
// a year, the first of a month, midnight, the hour), the step is the
// same between every two, and each is on a multiple of the step (a year
// divisible by it, a quarter's first month, a Monday for weeks, an hour
// divisible by it).
func checkCalendarTicks(t *testing.T, what string, marker plot.Ticker, lo, hi float64) {
	t.Helper()
	var major []time.Time
	layout := ""
	for _, tk := range marker.Ticks(lo, hi) {
		if tk.Value < lo || tk.Value > hi {
			t.Errorf("%s: tick %v outside [%v, %v]", what, tk.Value, lo, hi)
		}
		at := time.Unix(int64(tk.Value), 0).UTC()
		if float64(at.Unix()) != tk.Value || at.Second() != 0 || at.Minute()%5 != 0 {
			t.Errorf("%s: tick %v (%s) is not on a 5 minutes' boundary", what, tk.Value, at)
		}
		if tk.Label == "" {
			continue
		}
		ok := false
		for _, l := range tickLayouts {
			p, err := time.Parse(l, tk.Label)
			if err != nil || len(tk.Label) != len(l) {
				continue
			}
			switch l {
			case "01-02 15:04":
				p = p.AddDate(at.Year(), 0, 0)
			case "15:04":
				if time.Unix(int64(lo), 0).UTC().YearDay() != time.Unix(int64(hi), 0).UTC().YearDay() {
					continue // the clock alone only within one day
				}
				p = p.AddDate(at.Year(), int(at.Month())-1, at.Day()-1)
			}
			if p.Equal(at) {
				ok, layout = true, l
			}
		}
		if !ok {
			t.Errorf("%s: tick %q at %s is not the boundary its label names", what, tk.Label, at.Format(time.RFC3339))
		}
		major = append(major, at)
	}
	if len(major) < 2 || len(major) > most(layout) {
		t.Fatalf("%s: %d labelled ticks, want 2..%d: %v", what, len(major), most(layout), major)
	}
	a, b := major[0], major[1]
	months := (b.Year()-a.Year())*12 + int(b.Month()-a.Month())
	for i := 1; i < len(major); i++ {
		p, q := major[i-1], major[i]
		switch layout {
		case "2006", "2006-01":
			if m := (q.Year()-p.Year())*12 + int(q.Month()-p.Month()); m != months || q.Day() != 1 || q.Hour() != 0 {
				t.Errorf("%s: %s .. %s is %d months, the first step %d", what, p, q, m, months)
			}
		default:
			if q.Sub(p) != b.Sub(a) {
				t.Errorf("%s: %s .. %s is %s, the first step %s", what, p, q, q.Sub(p), b.Sub(a))
			}
		}
	}
	for _, at := range major {
		switch step := b.Sub(a); {
		case layout == "2006":
			if at.Year()%(months/12) != 0 {
				t.Errorf("%s: %d is not a multiple of the %d-year step", what, at.Year(), months/12)
			}
		case layout == "2006-01":
			if (int(at.Month())-1)%months != 0 {
				t.Errorf("%s: %s does not start a %d-month step", what, at.Format("2006-01"), months)
			}
		case step == 7*24*time.Hour:
			if at.Weekday() != time.Monday || at.Hour() != 0 {
				t.Errorf("%s: weekly tick %s is not a Monday's midnight", what, at)
			}
		case step%(24*time.Hour) == 0 && step < 7*24*time.Hour: // every day's midnight, every k-th labelled
			if at.Hour() != 0 {
				t.Errorf("%s: daily tick %s is not midnight", what, at)
			}
		case step < time.Hour:
			if 60%int(step.Minutes()) != 0 || at.Minute()%int(step.Minutes()) != 0 {
				t.Errorf("%s: tick %s is not on the %s step", what, at, step)
			}
		case step < 24*time.Hour:
			if step%time.Hour != 0 || at.Minute() != 0 || at.Hour()%int(step.Hours()) != 0 {
				t.Errorf("%s: tick %s is not on the %s step", what, at, step)
			}
		default:
			t.Errorf("%s: step %s is not a calendar step", what, step)
		}
	}
}

// span is the first and last bar's time of the dataset spec, Unix seconds.
func span(t *testing.T, spec string) (lo, hi float64) {
	t.Helper()
	d, err := data.Open(spec, data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts := d.Bars.Time
	return float64(ts[0]) / 1e9, float64(ts[len(ts)-1]) / 1e9
}

// TestTimeAxisTicks: the equity chart's time axes (equity and drawdown)
// tick round calendar steps, on the session's own span and, with the
// same marker, on a 23-year, a 4-year and a one-month dataset of minute
// bars, and on spans from an hour to a century.
func TestTimeAxisTicks(t *testing.T) {
	src := robustSource(t)
	f, err := Make(context.Background(), src, Request{Name: "equity"})
	if err != nil {
		t.Fatal(err)
	}
	for k, pn := range f.panels {
		p := pn.p
		checkCalendarTicks(t, "equity panel "+itoa(k), p.X.Tick.Marker, p.X.Min, p.X.Max)
	}
	marker := f.panels[0].p.X.Tick.Marker
	for _, spec := range []string{"../testdata/data/spy_1h_1998-2021.csv.gz", "../testdata/data/btcusdt_1h_2022-2026.csv.gz", "embedded:btcusdt-1m"} {
		lo, hi := span(t, spec)
		checkCalendarTicks(t, spec, marker, lo, hi)
	}
	// 1998-07-09 .. 2021: years, not odd dates.
	lo, hi := span(t, "../testdata/data/spy_1h_1998-2021.csv.gz")
	for _, tk := range marker.Ticks(lo, hi) {
		if tk.Label != "" && len(tk.Label) != 4 {
			t.Errorf("the 23-year axis labels %q, want years", tk.Label)
		}
	}
	start := float64(time.Date(1998, 7, 9, 13, 37, 0, 0, time.UTC).Unix())
	for _, d := range []time.Duration{40 * time.Minute, 80 * time.Minute, 3 * time.Hour, 20 * time.Hour, 50 * time.Hour, 10 * 24 * time.Hour, 13 * 24 * time.Hour, 20 * 24 * time.Hour, 45 * 24 * time.Hour, 200 * 24 * time.Hour, 700 * 24 * time.Hour, 3000 * 24 * time.Hour, 40000 * 24 * time.Hour} {
		checkCalendarTicks(t, "span "+d.String(), marker, start, start+d.Seconds())
	}
}

// TestLegendsOffData: the equity chart's legends (equity and drawdown
// panes) and the hull crossover chart's (prices and positions) sit
// above their data, measured as the signal chart's are.
func TestLegendsOffData(t *testing.T) {
	src := robustSource(t)
	ctx := context.Background()
	f, err := Make(ctx, src, Request{Name: "equity"})
	if err != nil {
		t.Fatal(err)
	}
	sel, _ := src.Selected()
	st, d64, d32, err := src.inspect(ctx, "equity", sel.Combo)
	if err != nil {
		t.Fatal(err)
	}
	top := math.Inf(-1)
	for i, c := range st.Dataset.Bars.Close {
		top = math.Max(top, c/st.Dataset.Bars.Close[0])
		top = math.Max(top, math.Max(d64.Equity[i], d32.Equity[i]))
	}
	legendClear(t, f, 0, top)
	legendClear(t, f, 1, 0) // the drawdown: 0 at each running peak
	dd := f.panels[1].p
	for _, tk := range dd.Y.Tick.Marker.Ticks(dd.Y.Min, dd.Y.Max) {
		if tk.Value > 0 {
			t.Errorf("the drawdown axis ticks %v (%q) above 0", tk.Value, tk.Label)
		}
	}
	p := src.Report.Parity
	fl := p.Flips[0]
	f, err = Make(ctx, src, Request{Name: "crossover"})
	if err != nil {
		t.Fatal(err)
	}
	_, d64, d32, err = src.inspect(ctx, "crossover", fl.Combo)
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := flipWindow(fl.Bar, len(d64.Close))
	_, ymax := rangeOf(d64.Close[lo:hi+1], d64.H[lo:hi+1], d64.H3[lo:hi+1], d32.H[lo:hi+1], d32.H3[lo:hi+1])
	legendClear(t, f, 0, ymax)
	legendClear(t, f, 1, 1) // long
}

// TestBarsAYear: the report's head gives bars a year as a reader takes
// it in, not 1756.762487668167.
func TestBarsAYear(t *testing.T) {
	for v, want := range map[float64]string{1756.762487668167: "1,757", 525600: "525,600", 8760: "8,760", 252: "252", 6.5: "6.5", 52.1775: "52.18"} {
		if got := barsAYear(v); got != want {
			t.Errorf("barsAYear(%v) = %q, want %q", v, got, want)
		}
	}
	src := plainSource(t)
	re := regexp.MustCompile(`; (\S+) bars a year$`)
	for _, f := range src.Facts() {
		if f[0] != "strategy" {
			continue
		}
		m := re.FindStringSubmatch(f[1])
		if m == nil || m[1] != barsAYear(src.Session.Params.BarsPerYear) || !regexp.MustCompile(`^\d{1,3}(,\d{3})*(\.\d{1,2})?$`).MatchString(m[1]) {
			t.Errorf("strategy fact %q", f[1])
		}
		return
	}
	t.Error("no strategy fact")
}

// barsAsTime is a bar axis's ticker read as Unix seconds: each tick at
// its bar's time (a tick between bars fails the test).
type barsAsTime struct {
	t      *testing.T
	inner  plot.Ticker
	times  []int64
	lo, hi float64 // the bar range
}

func (b barsAsTime) Ticks(float64, float64) []plot.Tick {
	var out []plot.Tick
	for _, tk := range b.inner.Ticks(b.lo, b.hi) {
		i := int(tk.Value)
		if float64(i) != tk.Value || i < 0 || i >= len(b.times) {
			b.t.Errorf("tick %v (%q) is not a bar", tk.Value, tk.Label)
			continue
		}
		out = append(out, plot.Tick{Value: float64(b.times[i]) / 1e9, Label: tk.Label})
	}
	return out
}

// TestCrossoverAxisTicks: the crossover chart (prices and positions) ticks
// the bars that open round calendar steps, labelled with their times.
func TestCrossoverAxisTicks(t *testing.T) {
	src := robustSource(t)
	ctx := context.Background()
	f, err := Make(ctx, src, Request{Name: "crossover"})
	if err != nil {
		t.Fatal(err)
	}
	st, _, _, err := src.inspect(ctx, "crossover", src.Report.Parity.Flips[0].Combo)
	if err != nil {
		t.Fatal(err)
	}
	times := st.Dataset.Bars.Time
	for k, pn := range f.panels {
		p := pn.p
		lo, hi := float64(times[int(p.X.Min)])/1e9, float64(times[int(p.X.Max)])/1e9
		checkCalendarTicks(t, "crossover panel "+itoa(k), barsAsTime{t, p.X.Tick.Marker, times, p.X.Min, p.X.Max}, lo, hi)
	}
}

// TestStrategyCrossoverAxisTicks: a strategy's signal chart ticks its
// bars as the hull chart does.
func TestStrategyCrossoverAxisTicks(t *testing.T) {
	src := memorySource(t, crossSpec())
	f, err := Make(context.Background(), src, Request{Name: "crossover"})
	if err != nil {
		t.Fatal(err)
	}
	st, _, _, _, err := src.strategyInspect(context.Background(), "crossover", src.Report.Parity.Flips[0].Index)
	if err != nil {
		t.Fatal(err)
	}
	times := st.Dataset.Bars.Time
	for k, pn := range f.panels {
		p := pn.p
		lo, hi := float64(times[int(p.X.Min)])/1e9, float64(times[int(p.X.Max)])/1e9
		checkCalendarTicks(t, "signal chart panel "+itoa(k), barsAsTime{t, p.X.Tick.Marker, times, p.X.Min, p.X.Max}, lo, hi)
	}
}
