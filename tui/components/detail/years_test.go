package detail

import (
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/tui/common"
	"sweepbench/tui/internal/tuitest"
)

// paneOver is the combo pane over n bars from start, step apart, with
// trades entering at entries (each held 5 bars), drawn w x h.
func paneOver(start time.Time, step time.Duration, n int, entries []int, w, h int) (*Model, []int64) {
	times := make([]int64, n)
	eq := make([]float64, n)
	for i := range times {
		times[i] = start.Add(time.Duration(i) * step).UnixNano()
		eq[i] = 1 + 0.1*math.Sin(float64(i)/7)
	}
	var trades []engine.Trade
	for _, e := range entries {
		trades = append(trades, engine.Trade{Entry: e, Exit: e + 5, Side: 1, Return: 0.01})
	}
	d := &engine.ComboDetail{Combo: engine.Combo{HMA: 10, HMA3: 12}, Precision: engine.FP64, Close: eq,
		Trace: &engine.Trace{Pos: make([]int8, n), Equity: eq, Trades: trades}, Metrics: engine.Metrics{TotalTrades: len(trades)}}
	st := &engine.Study{Dataset: &data.Dataset{Bars: data.Bars{Time: times, Close: eq}}}
	state := &common.RunState{Study: st, Selected: 0, Results: &common.Results{}, Inspect: &common.Inspection{Index: 0, Combo: d.Combo, D64: d}}
	m := New(tuitest.Context(nil), state)
	m.Reload()
	m.SetSize(w, h)
	return m, times
}

var (
	withYear    = regexp.MustCompile(`\b(\d{4})-(\d\d)-(\d\d)\b`)
	withoutYear = regexp.MustCompile(`(^|[^-\d])(\d\d)-(\d\d)\b`)
)

// TestDatesCarryTheYear (issue 28): on data over more than one year the
// trade list and the equity chart's axis give each date's year (a trade
// on 2024-01-05 is not "01-05", an axis "12-30 01-07" does not hide a
// new year); on data within a year they stay month-day.
func TestDatesCarryTheYear(t *testing.T) {
	start := time.Date(2023, 12, 20, 10, 30, 0, 0, time.UTC)
	m, times := paneOver(start, time.Hour, 600, []int{10, 300, 500}, 100, 40)
	v := m.View()
	for _, e := range []int{10, 300, 500} {
		want := time.Unix(0, times[e]).UTC().Format("2006-01-02 15:04")
		if !strings.Contains(v, want) {
			t.Errorf("trade at bar %d: no %q in\n%s", e, want, v)
		}
	}
	if bad := withoutYear.FindAllString(v, -1); len(bad) > 0 {
		t.Errorf("dates without their year %q on data of 2023 and 2024:\n%s", bad, v)
	}
	// Every axis date is a bar's, with its own year.
	years := map[string]bool{}
	for _, d := range withYear.FindAllStringSubmatch(v, -1) {
		at, err := time.Parse("2006-01-02", d[0])
		if err != nil || at.Before(start.Truncate(24*time.Hour)) || at.After(time.Unix(0, times[len(times)-1])) {
			t.Errorf("date %q is not one of the data's", d[0])
		}
		years[d[1]] = true
	}
	if !years["2023"] || !years["2024"] {
		t.Errorf("the pane names the years %v, want 2023 and 2024:\n%s", years, v)
	}

	// Within one year: month-day, as before.
	m, times = paneOver(time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), time.Hour, 600, []int{10}, 100, 40)
	v = m.View()
	if want := time.Unix(0, times[10]).UTC().Format("01-02 15:04"); !strings.Contains(v, want) || withYear.MatchString(v) {
		t.Errorf("data within 2024: want %q and no year in\n%s", want, v)
	}
}
