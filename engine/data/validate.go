package data

import (
	"math"
	"strconv"
	"time"
)

// Column indexes of a row's numeric fields.
const (
	colOpen = iota
	colHigh
	colLow
	colClose
	colVolume
	nCols
)

// canonicalNames are the field names used in messages for layouts without a
// header (Binance archive without header, LEAN, JSON).
var canonicalNames = [nCols]string{"open", "high", "low", "close", "volume"}

// row is one parsed input row, before validation. The parsers fill it
// without allocating; raw keeps the field texts for messages.
type row struct {
	at     where
	t      int64
	val    [nCols]float64
	kind   [nCols]numKind
	raw    [nCols]string
	hasVol bool
}

// builder validates rows one at a time (SPEC "Input": strictly increasing
// time, prices finite and > 0) and appends the good ones to the bars.
// Rows with every price missing are counted and dropped.
type builder struct {
	file      string
	timeName  string            // the timestamp field's name, for messages
	names     [nCols]string     // the numeric fields' names, for messages
	semi      *semicolonNumbers // non-nil for csv-semicolon (messages about the decimal mark)
	tp        *timeParser       // the parser of the file's times (what forms it read, for Info)
	bars      Bars
	dropped   int
	droppedAt []string // the places of the first maxDroppedAt dropped rows
	rows      int
	// the rows of the first and last bars appended
	firstBarAt, lastBarAt where
	prev                  int64
	prevAt                where
	firstAt               where
}

// newBuilder starts a builder with room for about capacity rows (the
// parsers pass a count of lines or records, which is only an estimate).
func newBuilder(file string, capacity int) *builder {
	capacity = max(0, min(capacity, 1<<20)) // a hint from a header may lie: growth handles the rest
	b := &builder{file: file, timeName: "time", names: canonicalNames}
	b.bars = Bars{
		Time: make([]int64, 0, capacity), Open: make([]float64, 0, capacity),
		High: make([]float64, 0, capacity), Low: make([]float64, 0, capacity),
		Close: make([]float64, 0, capacity), Volume: make([]float64, 0, capacity),
	}
	return b
}

// errAt builds an *Error at a place.
func (bl *builder) errAt(at where, field, reason string) *Error {
	return &Error{File: bl.file, Line: at.line, Record: at.record, Row: at.row, Field: field, Reason: reason}
}

// timeError reports a timestamp that could not be read.
func (bl *builder) timeError(at where, reason string) *Error {
	return bl.errAt(at, bl.timeName, reason)
}

// add validates one row and appends it unless it is all NaN.
func (bl *builder) add(r *row) *Error {
	if bl.rows == 0 {
		bl.firstAt = r.at
	}
	bl.rows++
	last := colClose
	if r.hasVol {
		last = colVolume
	}
	for i := 0; i <= last; i++ {
		if err := bl.numberError(r, i); err != nil {
			return err
		}
	}
	if bl.rows > 1 {
		switch {
		case r.t == bl.prev:
			return bl.errAt(r.at, bl.timeName, "duplicate timestamp "+fmtTime(r.t)+": same as "+bl.prevAt.String()+
				" (remove or merge the duplicate rows)")
		case r.t < bl.prev:
			return bl.errAt(r.at, bl.timeName, "timestamp "+fmtTime(r.t)+" is earlier than "+fmtTime(bl.prev)+
				" on "+bl.prevAt.String()+": timestamps must be strictly increasing (sort the file)")
		}
	}
	bl.prev, bl.prevAt = r.t, r.at

	nan := 0
	for i := colOpen; i <= colClose; i++ {
		if r.kind[i] == numNaN {
			nan++
		}
	}
	if nan == 4 {
		bl.dropped++
		if len(bl.droppedAt) < maxDroppedAt {
			bl.droppedAt = append(bl.droppedAt, r.at.String())
		}
		return nil
	}
	if nan > 0 {
		for i := colOpen; i <= colClose; i++ {
			if r.kind[i] == numNaN {
				return bl.errAt(r.at, bl.names[i], "missing price ("+describeNaN(r.raw[i])+
					") in a row whose other prices are numbers; only rows with open, high, low and close all missing are dropped")
			}
		}
	}
	for i := colOpen; i <= colClose; i++ {
		v := r.val[i]
		switch {
		case math.IsInf(v, 0):
			return bl.errAt(r.at, bl.names[i], "price "+clipName(r.raw[i])+" is not finite")
		case v <= 0:
			return bl.errAt(r.at, bl.names[i], "price "+clipName(r.raw[i])+" is not positive")
		}
		if reason := fp32Price(clipName(r.raw[i]), v); reason != "" {
			return bl.errAt(r.at, bl.names[i], reason)
		}
	}
	if r.val[colHigh] < r.val[colLow] {
		return bl.errAt(r.at, bl.names[colHigh], "high "+clipName(r.raw[colHigh])+" is below low "+clipName(r.raw[colLow]))
	}
	if n := len(bl.bars.Close); n > 0 {
		if reason := fp32Return(clipName(r.raw[colClose]), r.val[colClose], bl.bars.Close[n-1], bl.lastBarAt.String()); reason != "" {
			return bl.errAt(r.at, bl.names[colClose], reason)
		}
	}
	vol := 0.0
	if r.hasVol {
		vol = r.val[colVolume]
		switch {
		case r.kind[colVolume] == numNaN:
			return bl.errAt(r.at, bl.names[colVolume], "missing volume ("+describeNaN(r.raw[colVolume])+") in a row with prices")
		case math.IsInf(vol, 0):
			return bl.errAt(r.at, bl.names[colVolume], "volume "+clipName(r.raw[colVolume])+" is not finite")
		case vol < 0:
			return bl.errAt(r.at, bl.names[colVolume], "volume "+clipName(r.raw[colVolume])+" is negative")
		}
	}
	b := &bl.bars
	if len(b.Time) == 0 {
		bl.firstBarAt = r.at
	}
	bl.lastBarAt = r.at
	b.Time = append(b.Time, r.t)
	b.Open = append(b.Open, r.val[colOpen])
	b.High = append(b.High, r.val[colHigh])
	b.Low = append(b.Low, r.val[colLow])
	b.Close = append(b.Close, r.val[colClose])
	b.Volume = append(b.Volume, vol)
	return nil
}

// The prices fp32 holds (SPEC "Input": the fp32 lanes compute on the same
// bars). A price above MaxFloat32 is +Inf in fp32 and one below the
// smallest normal number (0x1p-126, about 1.18e-38) loses its precision
// (5e-324 is 0): both are refused, as is a bar whose return close/previous
// close overflows fp32 (prices 1e-30 then 1e20). Prices within the bounds
// may still overflow an indicator's fp32 sums for long lengths (a WMA of
// length p sums p(p+1)/2 times the price): the parity check then reports
// the fp32 lanes' error.
const (
	maxFP32Price = math.MaxFloat32
	minFP32Price = 0x1p-126
)

// fp32Price is why the price v (raw as written) cannot be computed on in
// fp32; "" when it can.
func fp32Price(raw string, v float64) string {
	switch {
	case v > maxFP32Price:
		return "price " + raw + " is above " + strconv.FormatFloat(maxFP32Price, 'g', -1, 32) +
			", the largest fp32 number: the fp32 lanes cannot hold it; rescale the prices (divide them by a power of ten)"
	case v < minFP32Price:
		return "price " + raw + " is below " + strconv.FormatFloat(minFP32Price, 'g', -1, 32) +
			", the smallest normal fp32 number: the fp32 lanes cannot hold it; rescale the prices (multiply them by a power of ten)"
	}
	return ""
}

// fp32Return is why the return of a bar closing at c (raw as written)
// after a bar closing at prev (at prevAt) overflows fp32, as the fp32
// lanes compute it (float32(c)/float32(prev)); "" when it does not.
func fp32Return(raw string, c, prev float64, prevAt string) string {
	if !math.IsInf(float64(float32(c)/float32(prev)), 0) {
		return ""
	}
	return "close " + raw + " is " + strconv.FormatFloat(c/prev, 'g', 3, 64) + " times the close " +
		strconv.FormatFloat(prev, 'g', -1, 64) + " of " + prevAt + ": the bar's return overflows fp32 (above " +
		strconv.FormatFloat(maxFP32Price, 'g', -1, 32) + "); check the prices for a change of unit or scale"
}

// maxDroppedAt is how many dropped rows Info.DroppedAt names.
const maxDroppedAt = 5

// numberError turns a bad number kind into an error naming the field.
func (bl *builder) numberError(r *row, i int) *Error {
	if r.kind[i] == numOK || r.kind[i] == numNaN {
		return nil
	}
	raw := quote(r.raw[i])
	switch r.kind[i] {
	case numBad:
		return bl.errAt(r.at, bl.names[i], "cannot parse "+raw+" as a number")
	case numDecimalComma:
		return bl.errAt(r.at, bl.names[i], "decimal comma in "+raw+" in a comma-separated file: "+
			"export with '.' as the decimal mark, or as a semicolon-separated file")
	case numCommaAmbiguous:
		return bl.errAt(r.at, bl.names[i], "comma in "+raw+" in a comma-separated file: a decimal comma or a thousands separator, "+
			"which cannot be told apart: export with '.' as the decimal mark and no digit grouping")
	case numThousands:
		return bl.errAt(r.at, bl.names[i], "thousands separator in "+raw+": export numbers without digit grouping")
	case numMixedMark:
		mark, line := byte(0), 0
		if bl.semi != nil {
			mark, line = bl.semi.mark, bl.semi.markLine
		}
		return bl.errAt(r.at, bl.names[i], raw+" does not use the file's decimal mark '"+string(rune(mark))+
			"' (set by line "+strconv.Itoa(line)+"): a thousands separator, or mixed formats")
	}
	return nil
}

func describeNaN(raw string) string {
	if raw == "" {
		return "empty"
	}
	return quote(raw)
}

// fmtTime formats Unix nanoseconds for messages.
func fmtTime(ns int64) string {
	return time.Unix(0, ns).UTC().Format("2006-01-02 15:04:05.999999999") + " UTC"
}

// finish checks that there are bars and returns them.
func (bl *builder) finish(endAt where) (Bars, *Error) {
	if len(bl.bars.Time) == 0 {
		if bl.rows == 0 {
			return Bars{}, bl.errAt(endAt, "", "no bars: the file has no data rows")
		}
		return Bars{}, bl.errAt(bl.firstAt, "", "no bars: all "+strconv.Itoa(bl.rows)+
			" rows have open, high, low and close missing (NaN, null or empty)")
	}
	return bl.bars, nil
}
