package common

import (
	"testing"
	"time"
)

// TestWithYear (issue 28): month-day layouts carry the year only where
// the bars span more than one calendar year; SpansDays tells bars of one
// day from bars of several.
func TestWithYear(t *testing.T) {
	ns := func(y int, m time.Month, d, h int) int64 { return time.Date(y, m, d, h, 0, 0, 0, time.UTC).UnixNano() }
	multi := []int64{ns(1998, 7, 9, 10), ns(2008, 1, 10, 12)}
	one := []int64{ns(2025, 1, 1, 0), ns(2025, 12, 31, 23)}
	if got := BarTime(multi[1], WithYear(multi, "01-02 15:04")); got != "2008-01-10 12:00" {
		t.Errorf("multi-year trade time %q", got)
	}
	if got := BarTime(one[1], WithYear(one, "01-02")); got != "12-31" {
		t.Errorf("one-year axis date %q", got)
	}
	if WithYear(multi[:1], "01-02") != "01-02" || !SpansDays(one[0], one[1]) || SpansDays(ns(2025, 6, 1, 0), ns(2025, 6, 1, 23)) || !SpansDays(ns(2024, 6, 1, 0), ns(2025, 6, 1, 0)) {
		t.Error("SpansYears/SpansDays")
	}
}
