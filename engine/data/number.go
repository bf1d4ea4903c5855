package data

import (
	"math"
	"strconv"
	"strings"
)

// numKind classifies a numeric field: parsed, missing (NaN), or one of the
// ways it can be wrong. The parsers report the kind; builder.add turns a bad
// kind into an *Error naming the line and field.
type numKind uint8

const (
	numOK             numKind = iota
	numNaN                    // a missing value: empty, "NaN" or "null" in any case (pandas, Yahoo Finance)
	numBad                    // not a decimal number
	numDecimalComma           // "4,255" in a comma-separated file
	numThousands              // "1,234.5" (or "1.234,5" in a semicolon file)
	numCommaAmbiguous         // "4,255": a decimal comma or a thousands separator
	numMixedMark              // '.' in a file whose decimal mark is ',' or the reverse
)

// parseNumber parses a decimal number from a comma-separated file, where
// '.' is the only decimal mark. It never guesses: a comma inside the value
// (possible only in a quoted field) is reported as a thousands separator or
// a decimal comma ("4,255" could be either, and is reported as such).
// Hexadecimal and the "inf" spellings strconv accepts are
// caught by the callers' checks (hex here, infinity as a non-finite price).
func parseNumber(s string) (float64, numKind) {
	s = strings.TrimSpace(s)
	if missing(s) {
		return math.NaN(), numNaN
	}
	if strings.IndexByte(s, ',') >= 0 {
		switch {
		case !isGrouped(s, ',', '.'):
			return 0, numDecimalComma
		case strings.IndexByte(s, '.') >= 0:
			return 0, numThousands
		}
		return 0, numCommaAmbiguous
	}
	return parseDecimal(s)
}

// missing reports the spellings of a missing value: an empty field, NaN
// or null in any case (Yahoo Finance writes null, pandas NaN or nothing).
// A missing value is never read as 0.
func missing(s string) bool {
	return s == "" || strings.EqualFold(s, "null") || strings.EqualFold(s, "nan")
}

// parseDecimal is strconv.ParseFloat restricted to decimal notation. A value
// out of float64 range parses as ±Inf or 0, which the value checks reject
// with a message about the price rather than about the syntax.
func parseDecimal(s string) (float64, numKind) {
	if strings.IndexByte(s, '_') >= 0 {
		return 0, numBad // ParseFloat reads Go's digit separators: 1_000 is not a price
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); !ok || ne.Err != strconv.ErrRange {
			return 0, numBad
		}
	}
	if isHex(s) {
		return 0, numBad
	}
	if v != v {
		return v, numNaN
	}
	return v, numOK
}

// semicolonNumbers parses the numbers of a semicolon-separated file. Such
// files come from spreadsheets set to a European locale and normally use ','
// as the decimal mark; some use '.'. The first value that contains either
// mark fixes it for the whole file, and a value with the other mark later is
// an error (it could be a thousands separator). A value with both marks
// ("1.234,5") is an error too: grouped numbers are never accepted.
type semicolonNumbers struct {
	mark     byte // 0 until fixed, then ',' or '.'
	markLine int  // the line that fixed it, for messages
	buf      [64]byte
}

func (sn *semicolonNumbers) parse(s string, line int) (float64, numKind) {
	s = strings.TrimSpace(s)
	if missing(s) {
		return math.NaN(), numNaN
	}
	comma := strings.IndexByte(s, ',') >= 0
	dot := strings.IndexByte(s, '.') >= 0
	switch {
	case comma && dot:
		return 0, numThousands
	case comma:
		if sn.mark == '.' {
			return 0, numMixedMark
		}
		if sn.mark == 0 {
			sn.mark, sn.markLine = ',', line
		}
		if len(s) > len(sn.buf) {
			return 0, numBad
		}
		b := append(sn.buf[:0], s...)
		for i, c := range b {
			if c == ',' {
				b[i] = '.'
			}
		}
		return parseDecimal(string(b))
	case dot:
		if sn.mark == ',' {
			return 0, numMixedMark
		}
		if sn.mark == 0 {
			sn.mark, sn.markLine = '.', line
		}
	}
	return parseDecimal(s)
}

// isGrouped reports whether s looks like a number with thousands groups:
// an optional sign, 1-3 digits, one or more groups of sep and 3 digits, and
// optionally dec followed by digits.
func isGrouped(s string, sep, dec byte) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	n := 0
	for i < len(s) && isDigit(s[i]) {
		i++
		n++
	}
	if n < 1 || n > 3 {
		return false
	}
	groups := 0
	for i < len(s) && s[i] == sep {
		if i+4 > len(s) || !isDigit(s[i+1]) || !isDigit(s[i+2]) || !isDigit(s[i+3]) {
			return false
		}
		i += 4
		groups++
	}
	if groups == 0 {
		return false
	}
	if i < len(s) && s[i] == dec {
		i++
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	return i == len(s)
}

// isHex reports whether s has the 0x prefix (after an optional sign) that
// makes strconv.ParseFloat read hexadecimal.
func isHex(s string) bool {
	if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	return len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// formatFloat writes a parsed value the way a person would type it.
func formatFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
