package crossover

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

// paneOver is the crossover pane over n hull bars from start, step
// apart, fp64 and fp32 disagreeing at bar flip, drawn w x h.
func paneOver(start time.Time, step time.Duration, n, flip, w, h int) (*Model, []int64) {
	times := make([]int64, n)
	cl, hh, h3 := make([]float64, n), make([]float64, n), make([]float64, n)
	p64, p32 := make([]int8, n), make([]int8, n)
	for i := range times {
		times[i] = start.Add(time.Duration(i) * step).UnixNano()
		cl[i] = 100 + 5*math.Sin(float64(i)/9)
		hh[i], h3[i] = cl[i]+0.5, cl[i]-0.5
		if i >= flip {
			p64[i] = 1
		}
		if i > flip {
			p32[i] = 1
		}
	}
	detail := func(p engine.Precision, pos []int8) *engine.ComboDetail {
		return &engine.ComboDetail{Combo: engine.Combo{HMA: 10, HMA3: 12}, Precision: p, H: hh, H3: h3, Close: cl,
			Trace: &engine.Trace{Pos: pos, Equity: cl}}
	}
	st := &engine.Study{Dataset: &data.Dataset{Bars: data.Bars{Time: times, Close: cl}}}
	state := &common.RunState{Study: st, Selected: 0, Results: &common.Results{Report: &engine.Report{}},
		Inspect: &common.Inspection{Index: 0, Combo: engine.Combo{HMA: 10, HMA3: 12}, D64: detail(engine.FP64, p64), D32: detail(engine.FP32, p32)}}
	m := New(tuitest.Context(nil), state)
	m.SetSize(w, h)
	m.Reload()
	return m, times
}

// axisLine is the chart's x axis labels: the line below its "+---" rule.
func axisLine(t *testing.T, v string) string {
	t.Helper()
	lines := strings.Split(v, "\n")
	for i, l := range lines {
		if strings.Contains(l, "+---") && i+1 < len(lines) {
			return lines[i+1]
		}
	}
	t.Fatalf("no x axis in\n%s", v)
	return ""
}

// TestAxisShowsDates (issue 28): the crossover chart's axis gives the
// date with the hour where its bars span days (hourly bars: "06-03
// 14:00"), the hour alone within a day (minute bars); each label is a
// bar's time in the window drawn.
func TestAxisShowsDates(t *testing.T) {
	dated := regexp.MustCompile(`\d\d-\d\d \d\d:\d\d`)
	clock := regexp.MustCompile(`\d\d:\d\d`)
	for _, c := range []struct {
		name  string
		step  time.Duration
		dates bool
	}{{"hourly", time.Hour, true}, {"minute", time.Minute, false}} {
		m, times := paneOver(time.Date(2025, 6, 1, 8, 0, 0, 0, time.UTC), c.step, 400, 200, 100, 30)
		v := m.View()
		ax := axisLine(t, v)
		labels := clock.FindAllString(ax, -1)
		if c.dates {
			labels = dated.FindAllString(ax, -1)
		}
		if len(labels) < 2 || (!c.dates && dated.MatchString(ax)) {
			t.Errorf("%s bars: axis %q, want %s", c.name, ax, map[bool]string{true: "dates with hours", false: "hours alone"}[c.dates])
			continue
		}
		layout := map[bool]string{true: "01-02 15:04", false: "15:04"}[c.dates]
		days := map[string]bool{}
		for _, l := range labels {
			found := false
			for _, ns := range times {
				if common.BarTime(ns, layout) == l {
					found = true
				}
			}
			if !found {
				t.Errorf("%s bars: axis label %q is no bar's time", c.name, l)
			}
			days[l[:min(5, len(l))]] = true
		}
		if c.dates && len(days) < 2 {
			t.Errorf("hourly bars: the axis %q names one day", ax)
		}
	}
}
