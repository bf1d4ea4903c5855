package common

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/engine/text"
)

// Clean is text from outside the program (a path, a dataset's name, an
// error or a note that may quote a file's header or field) made safe to
// draw: each line through data.Sanitize, the one sanitiser, so a control
// character shows as \x1b and cannot move the cursor, retitle the window
// or recolour the screen; newlines are kept (the panes wrap on them).
func Clean(s string) string {
	if data.Sanitize(s) == s {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = data.Sanitize(l)
	}
	return strings.Join(lines, "\n")
}

// Thousands writes n with comma separators: 175680 -> "175,680" (the
// engine's report convention).
func Thousands(n int) string { return text.Thousands(n) }

// Plural is text.Plural: "1 combo", "80 combos".
func Plural(n int, noun string) string { return text.Plural(n, noun) }

// Num writes a metric value compactly (5 significant digits), non-finite
// values as text.FormatFloat does ("inf", "-inf", "nan").
func Num(v float64) string {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return text.FormatFloat(v)
	}
	if v == math.Trunc(v) && math.Abs(v) < 1e9 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', 5, 64)
}

// Signed writes v with an explicit sign and prec decimals.
func Signed(v float64, prec int) string {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return text.FormatFloat(v)
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

// Pct writes a fraction as a percentage with two decimals: 0.1234 -> "12.34%".
func Pct(v float64) string {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return text.FormatFloat(v)
	}
	return fmt.Sprintf("%.2f%%", 100*v)
}

// Price writes a price with the precision its size needs.
func Price(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1000:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// FormatDuration rounds d for display: "850ms", "12.3s", "4m05s".
func FormatDuration(d time.Duration) string {
	switch {
	case d <= 0:
		return "0s"
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// BarTime formats a bar's open time (Unix ns) in UTC.
func BarTime(ns int64, layout string) string {
	return time.Unix(0, ns).UTC().Format(layout)
}

// SpansYears reports whether bar times (Unix ns, in order) fall in more
// than one calendar year (UTC).
func SpansYears(times []int64) bool {
	return len(times) > 1 && time.Unix(0, times[0]).UTC().Year() != time.Unix(0, times[len(times)-1]).UTC().Year()
}

// SpansDays reports whether bar times first and last (Unix ns) fall on
// different days (UTC).
func SpansDays(first, last int64) bool {
	a, b := time.Unix(0, first).UTC(), time.Unix(0, last).UTC()
	return a.YearDay() != b.YearDay() || a.Year() != b.Year()
}

// WithYear is layout (a month-day layout: "01-02", "01-02 15:04") with
// the year in front where times span more than one year: 12-30 and 01-05
// of different years are then 2024-12-30 and 2025-01-05.
func WithYear(times []int64, layout string) string {
	if SpansYears(times) {
		return "2006-" + layout
	}
	return layout
}

// IsPercent reports whether metric name is a fraction shown as a
// percentage (engine.IsFraction), as the Combo pane and the CLI do.
func IsPercent(name string) bool { return engine.IsFraction(name) }

// IsCount reports whether column name holds integers: the count metrics
// (engine.IsCount), dn, flips and profitable (datasets). Their
// differences are integers too.
func IsCount(name string) bool {
	return engine.IsCount(name) || name == ColDn || name == ColFlips || name == ColProfitable
}

// Header is a column's name as the tables head it: a fraction metric gets
// a "%" (its values are percentages).
func Header(name string) string {
	if IsPercent(name) {
		return name + "%"
	}
	return name
}

// Cell writes a value of column name for a table cell: fraction metrics
// as percentages without the sign (the header has it), others as Num; a
// metric not computed (engine.NotComputed) as "n/a".
func Cell(name string, v float64) string {
	if engine.NotComputed(name, v) {
		return engine.NotComputedText
	}
	if IsPercent(name) {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return text.FormatFloat(v)
		}
		return strconv.FormatFloat(100*v, 'f', 2, 64)
	}
	return Num(v)
}

// Value writes a value of column name on its own: fraction metrics as
// percentages with the sign ("37.58%"), others as Num; a metric not
// computed as "n/a".
func Value(name string, v float64) string {
	if engine.NotComputed(name, v) {
		return engine.NotComputedText
	}
	if IsPercent(name) {
		return Pct(v)
	}
	return Num(v)
}

// CancelledByUser is how a cancel the user asked for reads.
const CancelledByUser = engine.CancelledByUser

// ErrText is engine.ErrText: a cancel reads "cancelled by the user", never
// Go's wording.
func ErrText(s string) string { return engine.ErrText(s) }

// ShortPath writes a dataset name for a pane of limited width: an embedded
// name as is (the pane cuts it at its edge like any text); a path under the working directory relative
// to it, one under the home directory with "~"; then, if it is still longer
// than max cells, the directories are elided in the middle so that the file
// name, the part a user recognises, always shows whole.
func ShortPath(name string, max int) string {
	if strings.HasPrefix(name, "embedded:") {
		return name
	}
	if !filepath.IsAbs(name) {
		return elideMiddle(name, max)
	}
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, name); err == nil && !strings.HasPrefix(rel, "..") {
			name = rel
		}
	}
	if home, err := os.UserHomeDir(); err == nil && home != "" && home != "/" && strings.HasPrefix(name, home+string(filepath.Separator)) {
		name = "~" + name[len(home):]
	}
	return elideMiddle(name, max)
}

// elideMiddle cuts the directory part of p so that the whole is at most max
// runes, keeping the base name; a base name longer than max loses its own
// middle (its start and its end, often a date or a timeframe, tell files
// apart).
func elideMiddle(p string, max int) string {
	r := []rune(p)
	if max <= 0 || len(r) <= max {
		return p
	}
	base := []rune(filepath.Base(p))
	if len(base)+4 > max {
		if max <= 7 {
			return string(base[:max])
		}
		head := (max - 3 + 1) / 2
		return string(base[:head]) + "..." + string(base[len(base)-(max-3-head):])
	}
	keep := max - len(base) - 4 // "..." and the separator before the base name
	return string(r[:keep]) + "..." + string(filepath.Separator) + string(base)
}

// JoinH puts two blocks of equal height side by side.
func JoinH(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	n := max(len(al), len(bl))
	w := 0
	for _, l := range al {
		w = max(w, ansi.StringWidth(l))
	}
	var sb strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			sb.WriteByte('\n')
		}
		l := ""
		if i < len(al) {
			l = al[i]
		}
		sb.WriteString(l + strings.Repeat(" ", max(0, w-ansi.StringWidth(l))))
		if i < len(bl) {
			sb.WriteString(bl[i])
		}
	}
	return sb.String()
}
