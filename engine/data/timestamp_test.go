package data

import (
	"strings"
	"testing"
	"time"
)

// TestTimestamps checks each accepted timestamp form against time.Date,
// an independent conversion.
func TestTimestamps(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	aug1 := time.Date(2023, 8, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		loc  *time.Location
		want time.Time
	}{
		{"1690848000", nil, aug1},          // seconds
		{"1690848000000", nil, aug1},       // milliseconds (Binance archive)
		{"1690848000000000", nil, aug1},    // microseconds (Binance spot archives since 2025)
		{"1690848000000000000", nil, aug1}, // nanoseconds
		{"1690848000.5", nil, aug1.Add(500 * time.Millisecond)},
		{"1690848000000.25", nil, aug1.Add(250 * time.Microsecond)},
		{"883747800", nil, time.Date(1998, 1, 2, 13, 30, 0, 0, time.UTC)}, // < 1e9: still seconds
		{"0", nil, time.Unix(0, 0)},
		{"-86400", nil, time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC)},
		{" 1690848000 ", nil, aug1},
		{"2023-08-01", nil, aug1},
		{"2023/08/01", nil, aug1},
		{"2023-08-01 00:00", nil, aug1},
		{"2023-08-01T00:00:00Z", nil, aug1},
		{"2023-08-01 00:00:00 UTC", nil, aug1},
		{"2023-08-01 00:00:00+00:00", nil, aug1},
		{"2023-07-31 20:00:00-04:00", nil, aug1},
		{"2023-07-31T20:00:00-0400", ny, aug1}, // an offset wins over the zone
		{"2023-08-01T05:30:00+05:30", nil, aug1},
		{"2023-08-01T02:00+02", nil, aug1},
		{"2023-08-01 00:00:00.123456789", nil, aug1.Add(123456789)},
		{"2023-08-01 00:00:00,5", nil, aug1.Add(500 * time.Millisecond)},
		{"1998-01-02T09:00:00-05:00", nil, time.Date(1998, 1, 2, 14, 0, 0, 0, time.UTC)}, // the SPY file
		{"2024-01-02", ny, time.Date(2024, 1, 2, 0, 0, 0, 0, ny)},
		{"2024-07-02 09:30", ny, time.Date(2024, 7, 2, 13, 30, 0, 0, time.UTC)},
		{"2024-03-10 01:59:59", ny, time.Date(2024, 3, 10, 6, 59, 59, 0, time.UTC)},
		{"2024-03-10 03:00:00", ny, time.Date(2024, 3, 10, 7, 0, 0, 0, time.UTC)},
		{"2023-11-05 00:59", ny, time.Date(2023, 11, 5, 4, 59, 0, 0, time.UTC)},
		{"2023-11-05 02:00", ny, time.Date(2023, 11, 5, 7, 0, 0, 0, time.UTC)},
		{"2024-02-29", nil, time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, reason := newTimeParser(tc.loc).parse(tc.in)
			if reason != "" {
				t.Fatal(reason)
			}
			if got != tc.want.UnixNano() {
				t.Errorf("got %v, want %v", time.Unix(0, got).UTC(), tc.want.UTC())
			}
		})
	}
}

// TestTimestampErrors lists forms that are refused, with a word of the reason.
func TestTimestampErrors(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		in   string
		loc  *time.Location
		want string
	}{
		{"", nil, "empty"},
		{"2023-02-29", nil, "cannot parse"},
		{"2023-08-01 24:00", nil, "cannot parse"},
		{"2023-08-01 10:00:00+25:00", nil, "cannot parse"},
		{"01.08.2023 00:00", nil, "cannot parse"},
		{"08/01/2023", nil, "cannot parse"},
		{"1.69e9", nil, "cannot parse"},
		{"2023-08-01 00:00:00.1234567891", nil, "cannot parse"},
		{"1690848000.0000000001", nil, "finer than a nanosecond"},
		{"99999999999999999999", nil, "out of range"},
		{"9300000000", nil, "out of range"}, // seconds after 2262
		{"20240102", nil, "yyyyMMdd"},
		{"2024-03-10 02:00", ny, "does not exist"},
		{"2024-03-10 02:59:59", ny, "does not exist"},
		{"2023-11-05 01:00", ny, "occurs twice"},
		{"2023-11-05 01:59:59", ny, "occurs twice"},
		{"1500-01-01", nil, "out of range"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, reason := newTimeParser(tc.loc).parse(tc.in)
			if !strings.Contains(reason, tc.want) {
				t.Errorf("got %v (reason %q), want a reason with %q", time.Unix(0, got).UTC(), reason, tc.want)
			}
		})
	}
}

// TestZoneCache resolves every hour of two years of New York wall times
// through one parser (so the cache is exercised across both DST changes of
// each year) and compares with time.Date, skipping the hours a change skips
// or repeats, which must be errors.
func TestZoneCache(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	tp := newTimeParser(ny)
	errs := 0
	for w := time.Date(2023, 1, 1, 0, 30, 0, 0, time.UTC); w.Year() < 2025; w = w.Add(time.Hour) {
		s := w.Format("2006-01-02 15:04")
		got, reason := tp.parse(s)
		want := time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), 0, 0, ny)
		if want.Hour() != w.Hour() || want.Add(-time.Hour).In(ny).Hour() == w.Hour() || want.Add(time.Hour).In(ny).Hour() == w.Hour() {
			// skipped or repeated in New York
			if reason == "" {
				t.Errorf("%s: resolved to %v, want an error", s, time.Unix(0, got).UTC())
			}
			errs++
			continue
		}
		if reason != "" || got != want.UnixNano() {
			t.Errorf("%s: got %v %q, want %v", s, time.Unix(0, got).UTC(), reason, want.UTC())
		}
	}
	if errs != 4 { // 2 years x (one skipped + one repeated hour)
		t.Errorf("%d DST errors, want 4", errs)
	}
}
