package text

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// How numbers, durations and plurals read in every message and table of
// sweepbench: the engine's errors and notes, and the writers of package
// engine/output and the front ends.

// ErrWriter keeps the first write error, so a report can be written with
// many Printf calls and checked once (Err).
type ErrWriter struct {
	w   io.Writer
	err error
}

// NewErrWriter wraps w.
func NewErrWriter(w io.Writer) *ErrWriter { return &ErrWriter{w: w} }

// Err is the first write error, or nil.
func (e *ErrWriter) Err() error { return e.err }

func (e *ErrWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

// Printf writes to the wrapped writer unless an earlier write failed.
func (e *ErrWriter) Printf(format string, a ...any) { fmt.Fprintf(e, format, a...) }

// Plural is n with comma separators and noun, in the plural unless n is 1:
// "1 combo", "0 gaps", "102,400 combos".
func Plural(n int, noun string) string {
	if n == 1 || n == -1 {
		return thousands(n) + " " + noun
	}
	return thousands(n) + " " + noun + "s"
}

// thousands formats n with comma separators.
func thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// Thousands is thousands for other packages' tables.
func Thousands(n int) string { return thousands(n) }

// The table formatters of the reports, for other packages' tables:
// non-finite values are spelled "inf", "-inf" or "nan" (FormatFloat).

// TrimFloat formats v with at most prec decimals, trailing zeros dropped.
func TrimFloat(v float64, prec int) string { return trimFloat(v, prec) }

// Percent formats a fraction as percent with two decimals (0.0512 -> "5.12").
func Percent(v float64) string { return pct(v) }

// Fixed3 formats v with three decimals (ratios such as Sharpe).
func Fixed3(v float64) string { return num(v) }

// Signed formats v with a sign and four decimals (dPnL in pp).
func Signed(v float64) string { return signed(v) }

// Sci formats v in scientific notation with two decimals (errors, margins).
func Sci(v float64) string { return sci(v) }

// trimFloat formats v with at most prec decimals, trailing zeros dropped.
func trimFloat(v float64, prec int) string {
	if s := FormatFloat(v); s == "inf" || s == "-inf" || s == "nan" {
		return s
	}
	s := strconv.FormatFloat(v, 'f', prec, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// pct formats a fraction as percent with two decimals.
func pct(v float64) string {
	if s := FormatFloat(v); s == "inf" || s == "-inf" || s == "nan" {
		return s
	}
	return strconv.FormatFloat(100*v, 'f', 2, 64)
}

func num(v float64) string {
	if s := FormatFloat(v); s == "inf" || s == "-inf" || s == "nan" {
		return s
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

func signed(v float64) string {
	if s := FormatFloat(v); s == "inf" || s == "-inf" || s == "nan" {
		return s
	}
	return fmt.Sprintf("%+.4f", v)
}

func sci(v float64) string {
	if s := FormatFloat(v); s == "inf" || s == "-inf" || s == "nan" {
		return s
	}
	return strconv.FormatFloat(v, 'e', 2, 64)
}

// ShortDuration spells d in the largest whole unit: "1d", "4h", "15m",
// else as time.Duration does.
func ShortDuration(d time.Duration) string {
	switch {
	case d%(24*time.Hour) == 0:
		return strconv.Itoa(int(d/(24*time.Hour))) + "d"
	case d%time.Hour == 0:
		return strconv.Itoa(int(d/time.Hour)) + "h"
	case d%time.Minute == 0:
		return strconv.Itoa(int(d/time.Minute)) + "m"
	}
	return d.String()
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

// Bytes formats a byte count in binary units: "1.5 GiB", "320 MiB", "12 KiB".
func Bytes(b int64) string {
	const unit = 1024
	if b < unit {
		return fmt.Sprintf("%d B", b)
	}
	div, exp := int64(unit), 0
	for n := b / unit; n >= unit && exp < 5; n /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(b)/float64(div), "KMGTPE"[exp])
}
