package data

import (
	"io"
	"strconv"
	"strings"
	"time"
)

// QuantConnect LEAN data files (LEAN docs, "Data Format"): CSV without a
// header inside a zip, in folders that say what they hold:
//
//	<type>/<market>/hour/<ticker>.zip            rows yyyyMMdd HH:mm,open,high,low,close,volume (daily the same)
//	crypto/<market>/hour/<ticker>_trade.zip      the same; _quote.zip holds quote bars
//	<type>/<market>/minute/<ticker>/<yyyyMMdd>_trade.zip
//	                                             rows ms since midnight,open,high,low,close,volume; the date is the file's
//
// Quote bars have 11 fields: time, bid open, high, low, close, last bid
// size, ask open, high, low, close, last ask size; they are read as LEAN's
// QuoteBar reads them, each price the midpoint of bid and ask (the side
// present when one is missing), with volume 0.
//
// The security type folder decides the prices' scale and the times' zone
// (the LEAN docs per asset class):
//
//	equity, option   prices x 10,000 (divided here), times in the exchange zone: America/New_York for market usa
//	crypto           prices as stored, times UTC
//	forex, cfd       prices as stored, times in the market's zone: UTC for oanda, UTC-05 (no DST) for fxcm
//
// When the path does not say, Options.LEANAsset does (equity and option
// then mean market usa, forex and cfd oanda); Options.Location overrides
// the zone.

// LEANAssets lists the LEAN security types the loaders read.
func LEANAssets() []string { return []string{"equity", "option", "crypto", "forex", "cfd"} }

// leanScale is LEAN's fixed-point factor for equity and option prices: the
// files store price x 10,000 as integers ("deci-cents").
const leanScale = 10000

// leanTypeFolders are LEAN's security type folders, those read and those
// not.
var leanTypeFolders = map[string]bool{"equity": true, "option": true, "crypto": true, "forex": true, "cfd": true,
	"future": false, "futureoption": false, "index": false, "indexoption": false, "cryptofuture": false}

var leanResolutions = map[string]bool{"tick": true, "second": true, "minute": true, "hour": true, "daily": true}

// leanPath is what a path says in LEAN's folder and file naming; every
// field is "" (date: ok false) where it says nothing.
type leanPath struct {
	asset, market, resolution string // the folders <type>/<market>/<resolution>
	tickType                  string // trade, quote, openinterest: from the file name
	hasDate                   bool
	date                      civil // a day file's date (yyyyMMdd_ at the start of its name)
}

// leanFromPath reads LEAN's folders and file name from a path (either
// separator; a zip member's name counts as a last component).
func leanFromPath(p string) leanPath {
	var lp leanPath
	comps := strings.Split(strings.ReplaceAll(p, `\`, "/"), "/")
	for i := len(comps) - 3; i >= 0; i-- {
		t, r := strings.ToLower(comps[i]), strings.ToLower(comps[i+2])
		if _, ok := leanTypeFolders[t]; ok && leanResolutions[r] {
			lp.asset, lp.market, lp.resolution = t, strings.ToLower(comps[i+1]), r
			break
		}
	}
	for k := len(comps) - 1; k >= 0 && k >= len(comps)-2; k-- {
		base := strings.ToLower(comps[k])
		if lp.tickType == "" {
			for _, tt := range []string{"trade", "quote", "openinterest"} {
				if strings.Contains(base, "_"+tt) {
					lp.tickType = tt
					break
				}
			}
		}
		if !lp.hasDate && len(base) > 8 && base[8] == '_' && allDigits(base[:8]) && looksLikeYYYYMMDD(base[:8]) {
			lp.hasDate, lp.date = true, civil{year: atoi(base[:4]), month: atoi(base[4:6]), day: atoi(base[6:8])}
		}
	}
	return lp
}

// dayFile reports whether the path names a LEAN second or minute day file.
func (lp leanPath) dayFile() bool {
	return lp.hasDate && (lp.resolution == "second" || lp.resolution == "minute")
}

// dayLayout recognises a day file's first row: an integer (milliseconds
// since midnight) and 5 or 10 more fields, in a file whose path (or
// Options.LEANAsset with a dated file name) says it is one.
func (lp leanPath) dayLayout(fields []string, opt Options) (string, bool) {
	if len(fields) != 6 && len(fields) != 11 || !allDigits(strings.TrimSpace(fields[0])) {
		return "", false
	}
	if lp.dayFile() || lp.resolution == "" && lp.hasDate && opt.LEANAsset != "" {
		return LayoutLEANDayCSV, true
	}
	return "", false
}

// dayHint is added to the "no header row" error of a row shaped like a
// LEAN day file's whose date is unknown.
func (lp leanPath) dayHint(fields []string) string {
	f0 := strings.TrimSpace(fields[0])
	if len(fields) != 6 && len(fields) != 11 || !allDigits(f0) || len(f0) > 8 || atoi(f0) >= 86400000 || lp.hasDate {
		return "" // not milliseconds of a day: Unix time, most likely
	}
	return "; a LEAN minute or second file takes its date from its name: keep it as " +
		"<type>/<market>/minute/<ticker>/<yyyyMMdd>_trade.zip"
}

// convention is how a file's numbers are read: what its prices are
// divided by, the zone of its local times and the name of the rule.
type convention struct {
	scale float64
	loc   *time.Location
	name  string
}

// plainConvention reads prices as stored and local times in
// Options.Location (UTC when nil).
func plainConvention(opt Options) convention {
	loc := opt.Location
	if loc == nil {
		loc = time.UTC
	}
	return convention{scale: 1, loc: loc}
}

// describe records the convention and the times' form in Info.
func (c convention) describe(in *Info, tp *timeParser) {
	in.PriceScale, in.Convention = c.scale, c.name
	if tp == nil {
		return
	}
	in.Times = tp.kinds()
	if tp.seen&seenLocal != 0 {
		in.TimeZone = c.loc.String()
	}
}

// leanConvention decides a LEAN file's scale and zone from its path,
// Options.LEANAsset and Options.Location.
func leanConvention(lp leanPath, name string, opt Options) (convention, *Error) {
	fail := func(reason string) (convention, *Error) { return convention{}, &Error{File: name, Reason: reason} }
	asset, from := lp.asset, "from the path"
	if read, known := leanTypeFolders[asset]; known && !read {
		return fail("LEAN " + asset + " data is not read here: the loaders read " + strings.Join(LEANAssets(), ", "))
	}
	if a := strings.ToLower(strings.TrimSpace(opt.LEANAsset)); a != "" {
		if read, known := leanTypeFolders[a]; !known || !read {
			return fail("unknown LEAN asset " + quote(opt.LEANAsset) + ": use one of " + strings.Join(LEANAssets(), ", "))
		}
		if asset != "" && asset != a {
			return fail("the path says LEAN " + asset + " (its " + asset + "/" + lp.market + "/" + lp.resolution +
				" folders), but --lean-asset says " + a + ": drop --lean-asset, or move the file")
		}
		if asset == "" {
			asset, from = a, "as given"
		}
	}
	if asset == "" {
		return fail("LEAN rows, but the path does not say the security type, which decides the prices' scale and the " +
			"times' zone: give --lean-asset (" + strings.Join(LEANAssets(), ", ") + "), or keep the file in LEAN's " +
			"folders (e.g. equity/usa/hour/aapl.zip)")
	}
	switch lp.tickType {
	case "openinterest":
		return fail("LEAN open interest file: it holds no bars; use the _trade file")
	}
	if lp.resolution == "tick" {
		return fail("LEAN tick file: it holds ticks, not bars; use the second, minute, hour or daily files")
	}
	c := convention{scale: 1}
	market := lp.market
	var zoneErr string
	switch asset {
	case "equity", "option":
		c.scale = leanScale
		if market == "" || market == "usa" {
			market = "usa"
			c.loc, _ = time.LoadLocation("America/New_York")
		} else {
			zoneErr = "the exchange zone of LEAN " + asset + " market " + quote(market) + " is not known here"
		}
	case "crypto":
		c.loc = time.UTC
	case "forex", "cfd":
		switch market {
		case "", "oanda":
			market, c.loc = "oanda", time.UTC
		case "fxcm":
			c.loc = time.FixedZone("UTC-05", -5*3600)
		default:
			zoneErr = "the data zone of LEAN " + asset + " market " + quote(market) + " is not known here"
		}
	}
	if opt.Location != nil {
		c.loc = opt.Location
	} else if zoneErr != "" {
		return fail(zoneErr + ": give --tz")
	}
	c.name = "LEAN " + asset
	if market != "" {
		c.name += "/" + market
	}
	c.name += " (" + from + ")"
	return c, nil
}

// parseLEAN reads a LEAN bar file: hour or daily rows (yyyyMMdd HH:mm, in
// the convention's zone) or a day file's rows (milliseconds since midnight
// of the date in the file name), trade bars (6 fields) or quote bars (11),
// prices divided by the convention's scale. Dividing the integer by 10,000
// in float64 gives the correctly rounded decimal (973100/10000 == 97.31
// exactly as parsed).
func parseLEAN(text io.Reader, name, layout string, lp leanPath, opt Options, capacity int) (*builder, convention, error) {
	conv, e := leanConvention(lp, name, opt)
	if e != nil {
		return nil, conv, e
	}
	tp := newTimeParser(conv.loc)
	parseTime := tp.parseLEAN
	if layout == LayoutLEANDayCSV {
		if !lp.hasDate {
			return nil, conv, &Error{File: name, Reason: "LEAN day file without a date in its name: its rows hold " +
				"milliseconds since midnight of the date that starts the file name (yyyyMMdd_trade.zip)"}
		}
		parseTime = func(s string) (int64, string) { return tp.parseLEANDay(s, lp.date) }
	}
	r := newCSVReader(text, ',')
	bl := newBuilder(name, capacity)
	bl.timeName, bl.tp = "time", tp
	var rw row
	rw.hasVol = true
	quotes := false
	endLine := 1
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, conv, withBars(csvError(name, err), bl.rows)
		}
		line, _ := r.FieldPos(0)
		endLine = line + 1
		if len(rec) != 6 && len(rec) != 11 || bl.rows > 0 && quotes != (len(rec) == 11) {
			if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
				continue
			}
			want := "6 (trade bars) or 11 (quote bars)"
			if bl.rows > 0 {
				want = "6 as in the first row (trade bars)"
				if quotes {
					want = "11 as in the first row (quote bars)"
				}
			}
			return nil, conv, &Error{File: name, Line: line, Reason: "row has " + strconv.Itoa(len(rec)) + " fields, expected " + want}
		}
		if bl.rows == 0 && len(rec) == 11 {
			quotes = true
			conv.name += ", quote bars: bid/ask midpoints"
		}
		rw.at = where{line: line}
		t, reason := parseTime(rec[0])
		if reason != "" {
			return nil, conv, bl.timeError(rw.at, reason)
		}
		rw.t = t
		if quotes {
			leanQuoteRow(&rw, rec, conv.scale)
		} else {
			for i := colOpen; i <= colVolume; i++ {
				s := strings.TrimSpace(rec[1+i])
				rw.raw[i] = s
				rw.val[i], rw.kind[i] = parseNumber(s)
				if i != colVolume && rw.kind[i] == numOK {
					rw.val[i] /= conv.scale
				}
			}
		}
		if e := bl.add(&rw); e != nil {
			return nil, conv, e
		}
	}
	if _, e := bl.finish(where{line: endLine}); e != nil {
		return nil, conv, e
	}
	return bl, conv, nil
}

// leanQuoteRow fills a row from a quote bar: each price the midpoint of bid
// and ask, or the side present when the other's four prices are all
// missing; volume 0 (a quote bar has sizes, not volume).
func leanQuoteRow(rw *row, rec []string, scale float64) {
	var bid, ask [4]float64
	var bk, ak [4]numKind
	bidMissing, askMissing := true, true
	for i := 0; i < 4; i++ {
		bid[i], bk[i] = parseNumber(rec[1+i])
		ask[i], ak[i] = parseNumber(rec[6+i])
		bidMissing = bidMissing && bk[i] == numNaN
		askMissing = askMissing && ak[i] == numNaN
	}
	for i := colOpen; i <= colClose; i++ {
		switch {
		case askMissing:
			rw.val[i], rw.kind[i], rw.raw[i] = bid[i], bk[i], strings.TrimSpace(rec[1+i])
		case bidMissing:
			rw.val[i], rw.kind[i], rw.raw[i] = ask[i], ak[i], strings.TrimSpace(rec[6+i])
		case bk[i] != numOK:
			rw.val[i], rw.kind[i], rw.raw[i] = bid[i], bk[i], strings.TrimSpace(rec[1+i])
		case ak[i] != numOK:
			rw.val[i], rw.kind[i], rw.raw[i] = ask[i], ak[i], strings.TrimSpace(rec[6+i])
		default:
			rw.val[i], rw.kind[i] = (bid[i]+ask[i])/2, numOK
			rw.raw[i] = strings.TrimSpace(rec[1+i]) + "/" + strings.TrimSpace(rec[6+i])
		}
		if rw.kind[i] == numOK {
			rw.val[i] /= scale
		}
	}
	rw.val[colVolume], rw.kind[colVolume], rw.raw[colVolume] = 0, numOK, "0"
}
