package data

import "time"

// leanScale is LEAN's fixed-point factor for equity prices: the files store
// price x 10,000 as integers ("deci-cents").
const leanScale = 10000

// parseLEAN reads a QuantConnect LEAN equity bar file (hour or daily
// resolution): no header, rows "yyyyMMdd HH:mm,open,high,low,close,volume",
// prices scaled by 10,000, times local to the exchange: opt.Location, New
// York when nil. Dividing the integer by 10,000 in float64 gives the
// correctly rounded decimal (973100/10000 == 97.31 exactly as parsed). The
// millisecond-of-day layout of LEAN's minute and second files is not read.
func parseLEAN(text []byte, name string, opt Options) (*builder, error) {
	loc := opt.Location
	if loc == nil {
		var err error
		if loc, err = time.LoadLocation("America/New_York"); err != nil {
			return nil, &Error{File: name, Reason: "time zone America/New_York: " + err.Error()}
		}
	}
	tp := newTimeParser(loc)
	return parseFixedCSV(text, name, 6, "time", tp.parseLEAN, leanScale)
}
