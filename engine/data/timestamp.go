package data

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// The timestamp forms the loaders accept (SPEC "Input files"):
//
//   - an integer (optionally with a fraction) of Unix time, whose unit is
//     read from its magnitude: below 1e11 seconds, below 1e14 milliseconds,
//     below 1e17 microseconds, else nanoseconds. Binance archives switched
//     from milliseconds to microseconds in 2025, so the unit is decided per
//     value, not per file;
//   - ISO 8601 / RFC 3339: "2024-01-02", "2024-01-02 09:30",
//     "2024-01-02T09:30:00.5-05:00", "2024-01-02 09:30:00Z",
//     "2024-01-02 09:30:00 +0000", "... UTC". With an offset (or Z/UTC) the
//     instant is exact. Without one it is a local time in the file's zone
//     (Options.Location, UTC by default); a date alone means 00:00 there;
//   - LEAN's "yyyyMMdd HH:mm", local time in the exchange's zone.
//
// Local times that a DST change skips or repeats are errors, never resolved
// silently.

const (
	minUnixSec = math.MinInt64/int64(time.Second) + 1
	maxUnixSec = math.MaxInt64/int64(time.Second) - 1
)

// timeParser converts timestamp fields to Unix nanoseconds. It keeps the
// zone cache between rows, so one parser serves one file.
type timeParser struct {
	zone zoneCache
	seen uint8 // seenUnix | seenOffset | seenLocal: the forms parsed so far
}

const (
	seenUnix = 1 << iota
	seenOffset
	seenLocal
)

// kinds names the forms of the times parsed (Info.Times).
func (tp *timeParser) kinds() string {
	switch tp.seen {
	case 0:
		return ""
	case seenUnix:
		return TimesUnix
	case seenOffset:
		return TimesOffset
	case seenLocal:
		return TimesLocal
	}
	return TimesMixed
}

func newTimeParser(loc *time.Location) *timeParser {
	if loc == nil {
		loc = time.UTC
	}
	return &timeParser{zone: zoneCache{loc: loc}}
}

const timeFormatsHint = "expected Unix seconds, milliseconds, microseconds or nanoseconds, " +
	"or ISO 8601 like 2024-01-02 09:30:00-05:00"

// parse reads a generic timestamp field. On failure it returns a reason
// ("" means success).
func (tp *timeParser) parse(s string) (int64, string) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, "empty timestamp"
	}
	if isUnixNumber(s) {
		tp.seen |= seenUnix
		return parseUnix(s)
	}
	c, off, hasOff, ok := parseISO(s)
	if !ok {
		return 0, "cannot parse timestamp " + quote(s) + ": " + timeFormatsHint
	}
	return tp.instant(c, off, hasOff, s)
}

// parseLEAN reads LEAN's "yyyyMMdd HH:mm" (local time in the exchange zone).
func (tp *timeParser) parseLEAN(s string) (int64, string) {
	s = strings.TrimSpace(s)
	if !isLEANTime(s) {
		return 0, "cannot parse LEAN timestamp " + quote(s) + ": expected yyyyMMdd HH:mm"
	}
	c := civil{
		year: atoi(s[0:4]), month: atoi(s[4:6]), day: atoi(s[6:8]),
		hour: atoi(s[9:11]), min: atoi(s[12:14]),
	}
	if !c.valid() {
		return 0, "invalid date or time in " + quote(s)
	}
	return tp.instant(c, 0, false, s)
}

// parseLEANDay reads a LEAN day file's time: milliseconds since midnight
// (wall clock) of date, in the exchange zone.
func (tp *timeParser) parseLEANDay(s string, date civil) (int64, string) {
	s = strings.TrimSpace(s)
	if !allDigits(s) || len(s) > 8 {
		return 0, "cannot parse LEAN time " + quote(s) + ": expected milliseconds since midnight"
	}
	ms := atoi(s)
	if ms >= 86400000 {
		return 0, "LEAN time " + s + " ms is past the end of the day (86,400,000 ms)"
	}
	c := date
	c.hour, c.min, c.sec, c.nsec = ms/3600000, ms/60000%60, ms/1000%60, ms%1000*1e6
	return tp.instant(c, 0, false, s)
}

// isLEANTime reports whether s has the shape "yyyyMMdd HH:mm".
func isLEANTime(s string) bool {
	if len(s) != 14 || s[8] != ' ' || s[11] != ':' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if i == 8 || i == 11 {
			continue
		}
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// instant turns a civil time into Unix nanoseconds: exactly when it carries
// an offset, through the zone otherwise.
func (tp *timeParser) instant(c civil, off int64, hasOff bool, text string) (int64, string) {
	w := c.unixWall()
	var u int64
	if hasOff {
		tp.seen |= seenOffset
	} else {
		tp.seen |= seenLocal
	}
	switch {
	case hasOff:
		u = w - off
	case tp.zone.loc == time.UTC:
		u = w
	default:
		var st zoneStatus
		u, st = tp.zone.resolve(w)
		switch st {
		case zoneMissing:
			return 0, "local time " + quote(text) + " does not exist in " + tp.zone.loc.String() +
				" (the clocks skip it at a DST change): the file's times are not in this zone, or the row is wrong"
		case zoneRepeated:
			return 0, "local time " + quote(text) + " occurs twice in " + tp.zone.loc.String() +
				" (the clocks repeat it at a DST change), so the bar's instant is ambiguous: use timestamps with a UTC offset"
		}
	}
	if u < minUnixSec || u > maxUnixSec {
		return 0, "timestamp " + quote(text) + " is out of range (years 1678-2261)"
	}
	return u*int64(time.Second) + int64(c.nsec), ""
}

// isUnixNumber reports whether s is an optionally signed run of digits with
// an optional fraction: the Unix-time form.
func isUnixNumber(s string) bool {
	if s == "" {
		return false
	}
	i := 0
	if s[0] == '-' || s[0] == '+' {
		i = 1
	}
	digits := 0
	for i < len(s) && isDigit(s[i]) {
		i++
		digits++
	}
	if digits == 0 {
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	return i == len(s)
}

// parseUnix converts a Unix-time number (already checked by isUnixNumber) to
// nanoseconds, choosing the unit by magnitude.
func parseUnix(s string) (int64, string) {
	neg := false
	body := s
	if body[0] == '-' || body[0] == '+' {
		neg = body[0] == '-'
		body = body[1:]
	}
	intPart, frac, _ := strings.Cut(body, ".")
	ip, err := strconv.ParseUint(intPart, 10, 64)
	if err != nil || ip > math.MaxInt64 {
		return 0, "timestamp " + clipName(s) + " is out of range"
	}
	var unit uint64
	var fracDigits int
	switch {
	case ip < 1e11:
		unit, fracDigits = 1e9, 9
	case ip < 1e14:
		unit, fracDigits = 1e6, 6
	case ip < 1e17:
		unit, fracDigits = 1e3, 3
	default:
		unit, fracDigits = 1, 0
	}
	if unit == 1e9 && !neg && frac == "" && len(intPart) == 8 && looksLikeYYYYMMDD(intPart) {
		return 0, "timestamp " + s + " would be " + time.Unix(int64(ip), 0).UTC().Format("2006-01-02") +
			" as Unix seconds but looks like a yyyyMMdd date: write it as " +
			intPart[0:4] + "-" + intPart[4:6] + "-" + intPart[6:8]
	}
	if ip > math.MaxInt64/unit {
		return 0, "timestamp " + clipName(s) + " is out of range (after 2262 as Unix seconds)"
	}
	ns := ip * unit
	if len(frac) > 0 {
		var f uint64
		for i := 0; i < len(frac); i++ {
			d := uint64(frac[i] - '0')
			if i >= fracDigits {
				if d != 0 {
					return 0, "timestamp " + clipName(s) + " has a fraction finer than a nanosecond"
				}
				continue
			}
			f = f*10 + d
		}
		for i := len(frac); i < fracDigits; i++ {
			f *= 10
		}
		ns += f
		if ns > math.MaxInt64 {
			return 0, "timestamp " + clipName(s) + " is out of range"
		}
	}
	if neg {
		return -int64(ns), ""
	}
	return int64(ns), ""
}

// looksLikeYYYYMMDD reports whether an 8-digit string is a plausible date
// between 1900 and 2100.
func looksLikeYYYYMMDD(s string) bool {
	y, m, d := atoi(s[0:4]), atoi(s[4:6]), atoi(s[6:8])
	return y >= 1900 && y <= 2100 && m >= 1 && m <= 12 && d >= 1 && d <= daysIn(y, m)
}

// civil is a calendar date and wall-clock time without a zone.
type civil struct {
	year, month, day int
	hour, min, sec   int
	nsec             int
}

func (c civil) valid() bool {
	return c.month >= 1 && c.month <= 12 && c.day >= 1 && c.day <= daysIn(c.year, c.month) &&
		c.hour >= 0 && c.hour <= 23 && c.min >= 0 && c.min <= 59 && c.sec >= 0 && c.sec <= 59
}

// unixWall returns the civil time's seconds as if it were UTC.
func (c civil) unixWall() int64 {
	return daysFromCivil(int64(c.year), int64(c.month), int64(c.day))*86400 +
		int64(c.hour)*3600 + int64(c.min)*60 + int64(c.sec)
}

// daysFromCivil returns the days since 1970-01-01 of a proleptic Gregorian
// date (Howard Hinnant's algorithm, "chrono-Compatible Low-Level Date
// Algorithms").
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := y
	if era < 0 {
		era -= 399
	}
	era /= 400
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

func daysIn(y, m int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// atoi converts a short run of ASCII digits (checked by the caller).
func atoi(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n
}

// parseISO parses "YYYY-MM-DD" optionally followed by 'T' or ' ' and
// "HH:MM[:SS[.fraction]]", optionally followed (after an optional space) by
// "Z", "UTC", "GMT", "±HH", "±HHMM" or "±HH:MM". '/' may replace '-' in the
// date. It returns the offset in seconds east of UTC when one is present.
func parseISO(s string) (c civil, off int64, hasOff bool, ok bool) {
	digits := func(i, n int) (int, bool) {
		if i+n > len(s) {
			return 0, false
		}
		for k := i; k < i+n; k++ {
			if !isDigit(s[k]) {
				return 0, false
			}
		}
		return atoi(s[i : i+n]), true
	}
	var good bool
	if c.year, good = digits(0, 4); !good {
		return
	}
	if len(s) < 10 || (s[4] != '-' && s[4] != '/') || s[7] != s[4] {
		return
	}
	if c.month, good = digits(5, 2); !good {
		return
	}
	if c.day, good = digits(8, 2); !good {
		return
	}
	i := 10
	if i < len(s) {
		if s[i] != 'T' && s[i] != 't' && s[i] != ' ' {
			return
		}
		i++
		if c.hour, good = digits(i, 2); !good {
			return
		}
		if i+2 >= len(s) || s[i+2] != ':' {
			return
		}
		if c.min, good = digits(i+3, 2); !good {
			return
		}
		i += 5
		if i < len(s) && s[i] == ':' {
			if c.sec, good = digits(i+1, 2); !good {
				return
			}
			i += 3
			if i < len(s) && (s[i] == '.' || s[i] == ',') {
				i++
				n := 0
				for i < len(s) && isDigit(s[i]) {
					if n < 9 {
						c.nsec = c.nsec*10 + int(s[i]-'0')
					} else if s[i] != '0' {
						return // finer than a nanosecond
					}
					n++
					i++
				}
				if n == 0 {
					return
				}
				for k := n; k < 9; k++ {
					c.nsec *= 10
				}
			}
		}
		if i < len(s) && s[i] == ' ' {
			i++
		}
		if i < len(s) {
			rest := s[i:]
			switch {
			case rest == "Z" || rest == "z" || rest == "UTC" || rest == "GMT":
				hasOff = true
			case rest[0] == '+' || rest[0] == '-':
				var oh, om int
				if oh, good = digits(i+1, 2); !good {
					return
				}
				switch len(rest) {
				case 3:
				case 5:
					if om, good = digits(i+3, 2); !good {
						return
					}
				case 6:
					if rest[3] != ':' {
						return
					}
					if om, good = digits(i+4, 2); !good {
						return
					}
				default:
					return
				}
				if oh > 23 || om > 59 {
					return
				}
				off = int64(oh*3600 + om*60)
				if rest[0] == '-' {
					off = -off
				}
				hasOff = true
			default:
				return
			}
		}
	}
	if !c.valid() {
		return
	}
	return c, off, hasOff, true
}

type zoneStatus uint8

const (
	zoneOK zoneStatus = iota
	zoneMissing
	zoneRepeated
)

// zoneCache resolves local wall-clock times to instants. After one slow
// resolution it remembers the zone period found, shrunk by a day at each
// end; a wall time whose candidate instant falls inside that window is
// unique (no other offset can reach it, offsets differ by less than a day),
// so most rows take the fast path.
type zoneCache struct {
	loc         *time.Location
	ok          bool
	off, lo, hi int64
}

func (z *zoneCache) offAt(u int64) int64 {
	_, off := time.Unix(u, 0).In(z.loc).Zone()
	return int64(off)
}

// resolve maps a wall time w (seconds, as if UTC) to the Unix second it
// denotes in z.loc. The candidate instants are w minus each offset in force
// within two days; one that maps back to w is a solution. None means the
// time is skipped by a DST change, two mean it is repeated.
func (z *zoneCache) resolve(w int64) (int64, zoneStatus) {
	if z.ok {
		if c := w - z.off; c >= z.lo && c < z.hi {
			return c, zoneOK
		}
	}
	if w < minUnixSec+3*86400 || w > maxUnixSec-3*86400 {
		return w, zoneOK // out of range anyway; the caller reports it
	}
	var cands [3]int64
	n := 0
	for _, probe := range [3]int64{w - 2*86400, w, w + 2*86400} {
		o := z.offAt(probe)
		c := w - o
		if z.offAt(c) != o {
			continue
		}
		dup := false
		for _, x := range cands[:n] {
			dup = dup || x == c
		}
		if !dup {
			cands[n] = c
			n++
		}
	}
	switch {
	case n == 0:
		return 0, zoneMissing
	case n > 1:
		return 0, zoneRepeated
	}
	c := cands[0]
	t := time.Unix(c, 0).In(z.loc)
	start, end := t.ZoneBounds()
	_, off := t.Zone()
	z.off, z.lo, z.hi = int64(off), math.MinInt64, math.MaxInt64
	if !start.IsZero() {
		z.lo = start.Unix() + 86400
	}
	if !end.IsZero() {
		z.hi = end.Unix() - 86400
	}
	z.ok = true
	return c, zoneOK
}
