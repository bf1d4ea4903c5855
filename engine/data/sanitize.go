package data

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Sanitize returns s safe to print on a terminal: every control character
// (C0, DEL, C1: an ESC would start an escape sequence), every Unicode
// format character that reorders or hides text (bidi overrides, zero-width
// characters) and every byte that is not UTF-8 is replaced by a visible
// escape (\x1b, \u202e, \xff); a backslash stays itself. Everything from
// outside the program (paths, header names, field text) goes through it
// before it reaches a message or a summary. Printable text is unchanged.
func Sanitize(s string) string {
	clean := true
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if unsafeRune(r, n) {
			clean = false
			break
		}
		i += n
	}
	if clean {
		return s
	}
	var sb strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			sb.WriteString(`\x`)
			sb.WriteString(hex2(s[i]))
		case r < 0x80 && unsafeRune(r, n): // C0 controls and DEL: \x1b
			sb.WriteString(`\x`)
			sb.WriteString(hex2(byte(r)))
		case unsafeRune(r, n):
			q := strconv.QuoteRuneToASCII(r) // C1 and format characters: '\u009b', '\u202e'
			sb.WriteString(q[1 : len(q)-1])
		default:
			sb.WriteString(s[i : i+n])
		}
		i += n
	}
	return sb.String()
}

// unsafeRune reports whether a decoded rune must be escaped: invalid
// UTF-8, a control character, or a format character (Unicode category Cf:
// bidi controls, zero-width joiners and spaces, the BOM).
func unsafeRune(r rune, n int) bool {
	if r == utf8.RuneError && n == 1 {
		return true
	}
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || unicode.Is(unicode.Cf, r)
}

func hex2(b byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[b>>4], digits[b&15]})
}

// maxQuoted is how much of a field a message quotes (bytes, cut at a
// character boundary); a longer field is quoted in part with its length.
const maxQuoted = 60

// quote quotes a field's text for a message, escaped (strconv.Quote) and
// cut to maxQuoted bytes: "abc...": a field 12,345 bytes long says how long
// it was after the cut.
func quote(s string) string {
	if len(s) <= maxQuoted {
		return strconv.Quote(s)
	}
	cut := maxQuoted
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "... (" + thousands(len(s)) + " bytes)"
}

// clipName shortens a name shown unquoted (a header column, a zip member)
// to maxQuoted bytes and sanitises it.
func clipName(s string) string {
	if len(s) > maxQuoted {
		cut := maxQuoted
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "... (" + thousands(len(s)) + " bytes)"
	}
	return Sanitize(s)
}

// thousands formats n with ',' between groups of three digits.
func thousands(n int) string {
	s := strconv.Itoa(n)
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	var sb strings.Builder
	if neg {
		sb.WriteByte('-')
	}
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			sb.WriteByte(',')
		}
		sb.WriteByte(s[i])
	}
	return sb.String()
}
