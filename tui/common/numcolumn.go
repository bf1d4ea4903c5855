package common

import (
	"iter"
	"math"
	"strconv"
	"strings"

	"sweepbench/engine/text"
)

// NumColumn is how one table column writes its numbers, chosen once from
// every value the column holds so that all its rows read alike (issue 15,
// defect 7): counts (and differences of counts) as integers with thousands
// separators ("3,923", "-1,410"), never decimals or e-notation; any other
// value with one number of decimals for the whole column, taken from its
// largest magnitude, so the points align; never "-0" ("-0.0000" is
// "0.0000"). Width is the widest cell the values give, so a table that
// sizes the column to it never cuts a number.
type NumColumn struct {
	Count    bool // integers with thousands separators
	Plus     bool // positive values and zero carry a "+" (differences: "+2", "+0")
	Decimals int  // digits after the point (not for counts)
	Sci      bool // e-notation with Decimals mantissa digits: magnitudes fixed decimals cannot show
	Width    int  // the widest cell of the values, at least 1 (the "-" of a missing value)
}

// Column precision: the largest magnitude of a column gets colSignificant
// significant digits, within 0..colMaxDecimals decimals; a column whose
// largest magnitude is below colSciBelow or from colSciFrom on is written
// in e-notation (fixed decimals would show it as zeros, or as a number
// wider than a pane).
const (
	colSignificant = 5
	colMaxDecimals = 6
	colSciBelow    = 1e-4
	colSciFrom     = 1e12
)

// FitNumbers chooses the format of a column from its values, in the unit the
// table shows (a fraction shown as a percentage already times 100): count
// says they are counts or differences of counts, plus that positive values
// carry a "+". Non-finite values ("inf", "-inf", "nan") count for the width.
func FitNumbers(values iter.Seq[float64], count, plus bool) NumColumn {
	f := NumColumn{Count: count, Plus: plus}
	var (
		lo, hi   float64 // the extremes of the finite values
		small    float64 // the non-zero finite value of least magnitude
		seen     bool
		width    = 1 // a missing value's "-"
		maxAbs   float64
		anySmall bool
	)
	for v := range values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			width = max(width, len(text.FormatFloat(v)))
			continue
		}
		if !seen {
			lo, hi, seen = v, v, true
		}
		lo, hi = min(lo, v), max(hi, v)
		maxAbs = max(maxAbs, math.Abs(v))
		if v != 0 && (!anySmall || math.Abs(v) < math.Abs(small)) {
			small, anySmall = v, true
		}
	}
	if !count && maxAbs > 0 {
		e := int(math.Floor(math.Log10(maxAbs)))
		f.Decimals = max(0, min(colMaxDecimals, colSignificant-1-e))
		if maxAbs < colSciBelow || maxAbs >= colSciFrom {
			f.Sci, f.Decimals = true, 2
		}
	}
	if seen {
		for _, v := range []float64{lo, hi, small} {
			width = max(width, len(f.Format(v)))
		}
	}
	f.Width = width
	return f
}

// Format writes v in the column's format; non-finite values as
// text.FormatFloat does.
func (f NumColumn) Format(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return text.FormatFloat(v)
	}
	var s string
	switch {
	case f.Count:
		s = text.Thousands(int(math.Round(v)))
	case f.Sci:
		s = strconv.FormatFloat(v, 'e', f.Decimals, 64)
	default:
		s = group(strconv.FormatFloat(v, 'f', f.Decimals, 64))
	}
	if strings.HasPrefix(s, "-") && zero(s) {
		s = s[1:] // a value that rounds to zero is no negative number
	}
	if f.Plus && !strings.HasPrefix(s, "-") {
		s = "+" + s
	}
	return s
}

// zero reports whether the number s (its mantissa, in e-notation) has only
// zero digits.
func zero(s string) bool {
	if i := strings.IndexByte(s, 'e'); i >= 0 {
		s = s[:i]
	}
	return strings.Trim(s, "-+0.,") == ""
}

// group puts thousands separators in the integer part of a decimal number:
// "-12345.67" -> "-12,345.67".
func group(s string) string {
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	whole, frac := s, ""
	if i := strings.IndexByte(s, '.'); i >= 0 {
		whole, frac = s[:i], s[i:]
	}
	if len(whole) <= 3 {
		return sign + s
	}
	var b strings.Builder
	for i, c := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return sign + b.String() + frac
}
