package data

import (
	"testing"
	"time"
)

// barsAt makes a dataset of flat bars at the given times.
func barsAt(times []time.Time) *Dataset {
	d := &Dataset{}
	for _, t := range times {
		b := &d.Bars
		b.Time = append(b.Time, t.UnixNano())
		b.Open, b.High, b.Low, b.Close, b.Volume = append(b.Open, 1), append(b.High, 1), append(b.Low, 1), append(b.Close, 1), append(b.Volume, 0)
	}
	d.Info.setStats(&d.Bars)
	return d
}

// TestCalendar tells session calendars from 24/7 ones on hand-built
// series, and counts the bars observed a year.
func TestCalendar(t *testing.T) {
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC) // a Monday
	var crypto, outage, equity, forex, short []time.Time
	for h := 0; h < 60*24; h++ { // 60 days of hourly bars
		at := start.Add(time.Duration(h) * time.Hour)
		crypto = append(crypto, at)
		if h < 10*24 || h >= 12*24 { // a two-day outage
			outage = append(outage, at)
		}
		wd := at.Weekday()
		if wd != time.Saturday && wd != time.Sunday && at.Hour() >= 14 && at.Hour() <= 20 { // 7 bars a weekday
			equity = append(equity, at)
		}
		// 24/5: Sunday 22:00 .. Friday 21:00
		closed := wd == time.Saturday || wd == time.Friday && at.Hour() >= 22 || wd == time.Sunday && at.Hour() < 22
		if !closed {
			forex = append(forex, at)
		}
		if h < 3*24 {
			short = append(short, at)
		}
	}
	year := 365.25 * 24 * time.Hour
	tests := []struct {
		name     string
		times    []time.Time
		calendar string
		why      string
	}{
		{"crypto 24/7", crypto, Calendar247, "bars cover 100% of the time"},
		{"24/7 with an outage", outage, Calendar247, "bars cover 97% of the time"},
		{"equity sessions", equity, CalendarSessions, "bars cover 22% of the time; 43 gaps, 100% of them after the same two hours of the day"},
		{"forex 24/5", forex, CalendarSessions, "bars cover 73% of the time; 8 gaps, 100% of them after the same two hours of the day"},
		{"three days", short, "", "under a week of bars: too short to tell the calendar"},
	}
	for _, tc := range tests {
		in := barsAt(tc.times).Info
		if in.Calendar != tc.calendar || in.CalendarWhy != tc.why {
			t.Errorf("%s: %q %q, want %q %q", tc.name, in.Calendar, in.CalendarWhy, tc.calendar, tc.why)
		}
		span := tc.times[len(tc.times)-1].Sub(tc.times[0])
		if want := float64(len(tc.times)-1) / (float64(span) / float64(year)); in.ObservedBarsPerYear() != want {
			t.Errorf("%s: observed %v, want %v", tc.name, in.ObservedBarsPerYear(), want)
		}
	}
}
