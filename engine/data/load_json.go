package data

import (
	"encoding/json"
	"errors"
	"io"
	"math"
	"strconv"
)

// parseJSON reads an array of bar arrays: freqtrade's
// [[ms, open, high, low, close, volume], ...] or the Binance REST klines
// [[openTime, "open", "high", "low", "close", "volume", closeTime, ...12 fields], ...].
// The first record's length tells them apart (6 or 12) unless the layout is
// forced. Times are Unix numbers (unit by magnitude) or ISO strings; prices
// are numbers or numeric strings; null is a missing value (NaN). Errors name
// the record: the 1-based index in the outer array.
//
// The array is read token by token, so memory stays bounded whatever the
// file's shape (one line of megabytes, as freqtrade writes it, or a record
// of a million fields); g (the guard the text passes through, switched to
// JSON mode with the array starting at stream offset base) bounds a token
// and names the line of an error.
func parseJSON(r io.Reader, g *guard, base int64, name string, opt Options, layout string, capacity int) (*builder, string, error) {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	lineOf := func(off int64) int { return g.lineAt(base + off) }
	fail := func(err error, record int) (*builder, string, error) {
		return nil, layout, jsonError(name, err, record, lineOf(dec.InputOffset()), lineOf)
	}
	tok, err := dec.Token()
	if err != nil {
		return fail(err, 0)
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		reason := "expected a JSON array of bars, [[time, open, high, low, close, volume], ...]"
		if d == '{' {
			reason = "JSON object: " + reason
		}
		return nil, layout, &Error{File: name, Line: lineOf(0), Reason: reason}
	}
	want := 0
	switch layout {
	case LayoutFreqtradeJSON:
		want = 6
	case LayoutBinanceKlinesJSON:
		want = 12
	}
	bl := newBuilder(name, capacity)
	bl.timeName = "time"
	tp := newTimeParser(opt.Location)
	bl.tp = tp
	var rw row
	rw.hasVol = true
	var vals [6]any // the record's first six values
	n := 0
	for dec.More() {
		n++
		g.trim(base + dec.InputOffset())
		tok, err := dec.Token()
		if err != nil {
			return fail(err, n)
		}
		if d, ok := tok.(json.Delim); !ok || d != '[' {
			return nil, layout, &Error{File: name, Record: n,
				Reason: "record is not an array: expected [time, open, high, low, close, volume, ...]"}
		}
		k := 0
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return fail(err, n)
			}
			if d, ok := tok.(json.Delim); ok {
				if k < len(vals) {
					return nil, layout, &Error{File: name, Record: n, Field: jsonFieldName(k, bl),
						Reason: "expected a number, a string or null, found " + describeToken(d)}
				}
				if err := skipJSON(dec); err != nil {
					return fail(err, n)
				}
			} else if k < len(vals) {
				vals[k] = tok
			}
			if k++; k > opt.Limits.MaxFields {
				return nil, layout, fieldLimitError(name, 0, k, opt.Limits).(*Error).atRecord(n)
			}
		}
		if _, err := dec.Token(); err != nil { // the record's ']'
			return fail(err, n)
		}
		if want == 0 {
			switch k {
			case 6:
				want, layout = 6, LayoutFreqtradeJSON
			case 12:
				want, layout = 12, LayoutBinanceKlinesJSON
				bl.timeName = "open_time"
			default:
				return nil, layout, &Error{File: name, Record: n, Reason: "record has " + strconv.Itoa(k) +
					" fields: expected 6 (freqtrade: time, open, high, low, close, volume) or 12 (Binance klines)"}
			}
		}
		if k != want {
			return nil, layout, &Error{File: name, Record: n, Reason: "record has " + strconv.Itoa(k) +
				" fields, expected " + strconv.Itoa(want) + " as in the first record (" + layout + ")"}
		}
		rw.at = where{record: n}
		var ts string
		switch v := vals[0].(type) {
		case json.Number:
			ts = string(v)
		case string:
			ts = v
		default:
			return nil, layout, bl.timeError(rw.at, "expected a number or string timestamp, found "+describeToken(v))
		}
		t, reason := tp.parse(ts)
		if reason != "" {
			return nil, layout, bl.timeError(rw.at, reason)
		}
		rw.t = t
		for i := colOpen; i <= colVolume; i++ {
			switch v := vals[1+i].(type) {
			case json.Number:
				rw.raw[i] = string(v)
				rw.val[i], rw.kind[i] = parseDecimal(string(v))
			case string:
				rw.raw[i] = v
				rw.val[i], rw.kind[i] = parseNumber(v)
			case nil:
				rw.val[i], rw.kind[i], rw.raw[i] = math.NaN(), numNaN, "null"
			default:
				rw.raw[i] = describeToken(v)
				rw.kind[i] = numBad
			}
		}
		if e := bl.add(&rw); e != nil {
			return nil, layout, e
		}
	}
	if _, err := dec.Token(); err != nil { // the closing ']'
		return fail(err, 0)
	}
	if _, err := dec.Token(); err != io.EOF {
		if err != nil && !isSyntax(err) {
			return fail(err, 0)
		}
		return nil, layout, &Error{File: name, Line: lineOf(dec.InputOffset()), Reason: "data after the end of the JSON array"}
	}
	if layout == layoutJSON {
		layout = LayoutFreqtradeJSON // an empty array; finish reports it
	}
	if _, e := bl.finish(where{line: lineOf(0)}); e != nil {
		return nil, layout, e
	}
	return bl, layout, nil
}

// atRecord moves an error from a line to a JSON record.
func (e *Error) atRecord(n int) *Error {
	e.Line, e.Record = 0, n
	return e
}

// jsonFieldName names field k of a record for messages.
func jsonFieldName(k int, bl *builder) string {
	if k == 0 {
		return bl.timeName
	}
	return canonicalNames[k-1]
}

// skipJSON skips the rest of a nested array or object whose opening
// delimiter was just read, token by token.
func skipJSON(dec *json.Decoder) error {
	depth := 1
	for depth > 0 {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		if d, ok := tok.(json.Delim); ok {
			if d == '[' || d == '{' {
				depth++
			} else {
				depth--
			}
		}
	}
	return nil
}

// describeToken names a JSON value that is not where it should be.
func describeToken(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(v)
	case json.Delim:
		if v == '{' {
			return "an object"
		}
		return "an array"
	case json.Number:
		return string(v)
	case string:
		return quote(v)
	}
	return "a value"
}

func isSyntax(err error) bool {
	var se *json.SyntaxError
	return errors.As(err, &se)
}

// jsonError converts a decoder error into *Error with the line of the
// offending byte (line is the line at the decoder's offset, lineOf maps an
// offset of the array's text).
func jsonError(name string, err error, record, line int, lineOf func(int64) int) error {
	var de *Error
	if errors.As(err, &de) {
		return de // a limit, a damaged gzip: from the stream below
	}
	e := &Error{File: name, Record: record, Reason: "invalid JSON: " + err.Error()}
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		e.Line = lineOf(se.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		e.Line = line
		e.Reason = "invalid JSON: unexpected end of the file (truncated?)"
	default:
		e.Line = line
	}
	return e
}
