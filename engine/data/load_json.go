package data

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
)

// parseJSON reads an array of bar arrays: freqtrade's
// [[ms, open, high, low, close, volume], ...] or the Binance REST klines
// [[openTime, "open", "high", "low", "close", "volume", closeTime, ...12 fields], ...].
// The first record's length tells them apart (6 or 12) unless the layout is
// forced. Times are Unix numbers (unit by magnitude) or ISO strings; prices
// are numbers or numeric strings; null is a missing value (NaN). Errors name
// the record: the 1-based index in the outer array.
func parseJSON(text []byte, name string, opt Options, layout string) (*builder, string, error) {
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	fail := func(err error, record int) (*builder, string, error) {
		return nil, layout, jsonError(name, text, err, record)
	}
	tok, err := dec.Token()
	if err != nil {
		return fail(err, 0)
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return nil, layout, &Error{File: name, Line: 1, Reason: "expected a JSON array of bars, [[time, open, high, low, close, volume], ...]"}
	}
	want := 0
	switch layout {
	case LayoutFreqtradeJSON:
		want = 6
	case LayoutBinanceKlinesJSON:
		want = 12
	}
	bl := newBuilder(name, min(bytes.Count(text, []byte{'['})-1, len(text)/14+1))
	bl.timeName = "time"
	tp := newTimeParser(opt.Location)
	var rec []json.RawMessage
	var rw row
	rw.hasVol = true
	n := 0
	for dec.More() {
		n++
		rec = rec[:0]
		if err := dec.Decode(&rec); err != nil {
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) {
				return nil, layout, &Error{File: name, Record: n,
					Reason: "record is not an array: expected [time, open, high, low, close, volume, ...]"}
			}
			return fail(err, n)
		}
		if want == 0 {
			switch len(rec) {
			case 6:
				want, layout = 6, LayoutFreqtradeJSON
			case 12:
				want, layout = 12, LayoutBinanceKlinesJSON
			default:
				return nil, layout, &Error{File: name, Record: n, Reason: "record has " + strconv.Itoa(len(rec)) +
					" fields: expected 6 (freqtrade: time, open, high, low, close, volume) or 12 (Binance klines)"}
			}
			if layout == LayoutBinanceKlinesJSON {
				bl.timeName = "open_time"
			}
		}
		if len(rec) != want {
			return nil, layout, &Error{File: name, Record: n, Reason: "record has " + strconv.Itoa(len(rec)) +
				" fields, expected " + strconv.Itoa(want) + " as in the first record (" + layout + ")"}
		}
		rw.at = where{record: n}
		ts, kind := jsonScalar(rec[0])
		if kind != jsonNumber && kind != jsonString {
			return nil, layout, bl.timeError(rw.at, "expected a number or string timestamp, found "+clip(string(rec[0])))
		}
		t, reason := tp.parse(ts)
		if reason != "" {
			return nil, layout, bl.timeError(rw.at, reason)
		}
		rw.t = t
		for i := colOpen; i <= colVolume; i++ {
			s, kind := jsonScalar(rec[1+i])
			rw.raw[i] = s
			switch kind {
			case jsonNumber:
				rw.val[i], rw.kind[i] = parseDecimal(s)
			case jsonString:
				rw.val[i], rw.kind[i] = parseNumber(s)
			case jsonNull:
				rw.val[i], rw.kind[i] = math.NaN(), numNaN
				rw.raw[i] = "null"
			default:
				rw.raw[i] = clip(string(rec[1+i]))
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
		off := int(dec.InputOffset())
		return nil, layout, &Error{File: name, Line: lineAt(text, off), Reason: "data after the end of the JSON array"}
	}
	if layout == layoutJSON {
		layout = LayoutFreqtradeJSON // an empty array; finish reports it
	}
	if _, e := bl.finish(where{line: 1}); e != nil {
		return nil, layout, e
	}
	return bl, layout, nil
}

type jsonKind uint8

const (
	jsonOther jsonKind = iota
	jsonNumber
	jsonString
	jsonNull
)

// jsonScalar classifies a raw JSON value and returns its text: the number as
// written, the string's contents, or "null".
func jsonScalar(raw json.RawMessage) (string, jsonKind) {
	s := strings.TrimSpace(string(raw))
	switch {
	case s == "":
		return "", jsonOther
	case s == "null":
		return s, jsonNull
	case s[0] == '"':
		if strings.IndexByte(s, '\\') < 0 && len(s) >= 2 {
			return s[1 : len(s)-1], jsonString
		}
		var out string
		if err := json.Unmarshal(raw, &out); err != nil {
			return s, jsonOther
		}
		return out, jsonString
	case s[0] == '-' || isDigit(s[0]):
		return s, jsonNumber
	}
	return s, jsonOther
}

// jsonError converts a decoder error into *Error with the line of the
// offending byte.
func jsonError(name string, text []byte, err error, record int) error {
	e := &Error{File: name, Record: record, Reason: "invalid JSON: " + err.Error()}
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		e.Line = lineAt(text, int(se.Offset))
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		e.Line = lineAt(text, len(text))
		e.Reason = "invalid JSON: unexpected end of the file (truncated?)"
	}
	return e
}

// lineAt returns the 1-based line of byte offset off.
func lineAt(text []byte, off int) int {
	if off > len(text) {
		off = len(text)
	}
	if off < 0 {
		off = 0
	}
	return bytes.Count(text[:off], []byte{'\n'}) + 1
}

// clip shortens a value quoted in a message.
func clip(s string) string {
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return strconv.Quote(s)
}
