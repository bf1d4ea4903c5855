package data

import (
	"encoding/csv"
	"errors"
	"io"
	"strconv"
	"strings"
)

// timeColumnNames are the timestamp column names tried in order when
// Options.TimeColumn is empty (SPEC "Input files").
var timeColumnNames = []string{"open_time", "timestamp", "time", "datetime", "date"}

// parseHeaderCSV reads a delimited file whose first row names the columns:
// the layouts csv, csv-semicolon and binance-archive. Columns are matched
// case-insensitively: the timestamp column (see timeColumnNames), open, high,
// low, close and optionally volume (the column named "volume", else the first
// whose name starts with "volume", as in Bitstamp's "Volume_(BTC)"; none
// means volume 0). Other columns are ignored. semi is non-nil for
// csv-semicolon and decides its decimal mark.
func parseHeaderCSV(text io.Reader, name string, opt Options, comma rune, semi *semicolonNumbers, capacity int) (*builder, error) {
	r := newCSVReader(text, comma)
	hdr, err := r.Read()
	if err != nil {
		if err == io.EOF {
			return nil, &Error{File: name, Line: 1, Reason: "empty file: no bars"}
		}
		return nil, csvError(name, err)
	}
	hdrLine, _ := r.FieldPos(0)
	if len(hdr) > opt.Limits.MaxFields {
		return nil, fieldLimitError(name, hdrLine, len(hdr), opt.Limits)
	}
	header := make([]string, len(hdr))
	for i, h := range hdr {
		header[i] = strings.TrimSpace(h)
	}
	timeIdx, cols, reason, cause := matchColumns(header, opt.TimeColumn)
	if reason == "" && timeIdx < 0 {
		reason = noTimeColumn(header)
	}
	if reason != "" {
		return nil, &Error{File: name, Line: hdrLine, Reason: reason, Err: cause}
	}

	bl := newBuilder(name, capacity)
	bl.timeName = header[timeIdx]
	bl.semi = semi
	for i := range cols {
		if cols[i] >= 0 {
			bl.names[i] = header[cols[i]]
		}
	}
	tp := newTimeParser(opt.Location)
	bl.tp = tp
	var rw row
	rw.hasVol = cols[colVolume] >= 0
	last := colClose
	if rw.hasVol {
		last = colVolume
	}
	endLine := hdrLine + 1
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, withBars(csvError(name, err), bl.rows)
		}
		line, _ := r.FieldPos(0)
		endLine = line + 1
		if len(rec) != len(header) {
			if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
				continue // a line of blanks
			}
			if len(rec) > opt.Limits.MaxFields {
				return nil, fieldLimitError(name, line, len(rec), opt.Limits)
			}
			return nil, fieldCountError(name, line, rec, header, timeIdx, comma)
		}
		rw.at = where{line: line}
		t, reason := tp.parse(rec[timeIdx])
		if reason != "" {
			return nil, bl.timeError(rw.at, reason)
		}
		rw.t = t
		for i := colOpen; i <= last; i++ {
			s := strings.TrimSpace(rec[cols[i]])
			rw.raw[i] = s
			if semi != nil {
				rw.val[i], rw.kind[i] = semi.parse(s, line)
			} else {
				rw.val[i], rw.kind[i] = parseNumber(s)
			}
		}
		if e := bl.add(&rw); e != nil {
			return nil, e
		}
	}
	if _, e := bl.finish(where{line: endLine}); e != nil {
		return nil, e
	}
	return bl, nil
}

// matchColumns finds the columns of a header (names trimmed) the CSV way,
// case-insensitively: the time column (timeColumn, else the first of
// timeColumnNames), open, high, low, close, and volume (the column named
// "volume", else the first whose name starts with "volume"; -1 when none).
// A name found twice is an error (which one is meant would be a guess).
// timeIdx is -1 with no reason when timeColumn is "" and no default name is
// in the header (the caller may look further), and the other columns are
// then not looked at. cause is ErrTimeColumn when the reason is the time
// column asked for (not in the header, or twice), nil otherwise.
func matchColumns(header []string, timeColumn string) (timeIdx int, cols [nCols]int, reason string, cause error) {
	lower := make([]string, len(header))
	for i, h := range header {
		lower[i] = strings.ToLower(h)
	}
	found := foundList(header)
	find := func(want string) (int, string) {
		idx := -1
		for i, n := range lower {
			if n != want {
				continue
			}
			if idx >= 0 {
				return -1, "column " + quote(header[i]) + " appears twice (columns " +
					strconv.Itoa(idx+1) + " and " + strconv.Itoa(i+1) + "): rename one"
			}
			idx = i
		}
		return idx, ""
	}
	timeIdx = -1
	if timeColumn != "" {
		if timeIdx, reason = find(strings.ToLower(strings.TrimSpace(timeColumn))); reason != "" {
			return -1, cols, reason, ErrTimeColumn
		}
		if timeIdx < 0 {
			return -1, cols, "no column " + quote(timeColumn) + " (the time column asked for) in the header; " + found, ErrTimeColumn
		}
	} else {
		for _, n := range timeColumnNames {
			if timeIdx, reason = find(n); reason != "" {
				return -1, cols, reason, nil
			}
			if timeIdx >= 0 {
				break
			}
		}
		if timeIdx < 0 {
			return -1, cols, "", nil
		}
	}
	for i := colOpen; i <= colClose; i++ {
		if cols[i], reason = find(canonicalNames[i]); reason != "" {
			return -1, cols, reason, nil
		}
		if cols[i] < 0 {
			return -1, cols, "no " + quote(canonicalNames[i]) + " column in the header; " + found, nil
		}
	}
	if cols[colVolume], reason = find("volume"); reason != "" {
		return -1, cols, reason, nil
	}
	if cols[colVolume] < 0 {
		for i, n := range lower {
			if strings.HasPrefix(n, "volume") {
				cols[colVolume] = i
				break
			}
		}
	}
	return timeIdx, cols, "", nil
}

// noTimeColumn is the reason when no time column was found.
func noTimeColumn(header []string) string {
	return "no timestamp column (open_time, timestamp, time, datetime or date) in the header; " +
		foundList(header) + "; name it with --time-column"
}

// foundList names a header's columns for a message: the first 20,
// clipped and sanitised.
func foundList(header []string) string {
	shown := make([]string, 0, min(len(header), 20))
	for _, h := range header[:min(len(header), 20)] {
		shown = append(shown, clipName(h))
	}
	found := "found: " + strings.Join(shown, ", ")
	if len(header) > len(shown) {
		found += " and " + strconv.Itoa(len(header)-len(shown)) + " more"
	}
	return found
}

// parseFixedCSV reads a comma-separated file without a header whose first
// six of ncols fields are time, open, high, low, close, volume (Binance
// archive without header, LEAN). Prices are divided by scale.
func parseFixedCSV(text io.Reader, name string, ncols int, timeName string,
	parseTime func(string) (int64, string), scale float64, capacity int) (*builder, error) {
	r := newCSVReader(text, ',')
	bl := newBuilder(name, capacity)
	bl.timeName = timeName
	var rw row
	rw.hasVol = true
	endLine := 1
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, withBars(csvError(name, err), bl.rows)
		}
		line, _ := r.FieldPos(0)
		endLine = line + 1
		if len(rec) != ncols {
			if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
				continue
			}
			reason := "row has " + strconv.Itoa(len(rec)) + " fields, expected " + strconv.Itoa(ncols)
			if len(rec) > ncols {
				reason += ": a decimal comma or thousands separator in a comma-separated file?"
			}
			return nil, &Error{File: name, Line: line, Reason: reason}
		}
		rw.at = where{line: line}
		t, reason := parseTime(rec[0])
		if reason != "" {
			return nil, bl.timeError(rw.at, reason)
		}
		rw.t = t
		for i := colOpen; i <= colVolume; i++ {
			s := strings.TrimSpace(rec[1+i])
			rw.raw[i] = s
			rw.val[i], rw.kind[i] = parseNumber(s)
			if i != colVolume && rw.kind[i] == numOK {
				rw.val[i] /= scale
			}
		}
		if e := bl.add(&rw); e != nil {
			return nil, e
		}
	}
	if _, e := bl.finish(where{line: endLine}); e != nil {
		return nil, e
	}
	return bl, nil
}

func newCSVReader(text io.Reader, comma rune) *csv.Reader {
	r := csv.NewReader(text)
	r.Comma = comma
	r.FieldsPerRecord = -1
	r.ReuseRecord = true
	return r
}

// csvError converts encoding/csv's syntax errors into *Error; an *Error
// from the stream below (a limit, a damaged gzip) passes as it is.
func csvError(name string, err error) error {
	var de *Error
	if errors.As(err, &de) {
		return de
	}
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &Error{File: name, Line: pe.Line, Reason: "column " + strconv.Itoa(pe.Column) + ": " + pe.Err.Error()}
	}
	return &Error{File: name, Reason: "read: " + err.Error(), Err: err}
}

// fieldLimitError refuses a row with more fields than Limits.MaxFields.
func fieldLimitError(name string, line, n int, lim Limits) error {
	le := &LimitError{What: "fields in a row", Max: int64(lim.MaxFields), Env: EnvMaxFields}
	return &Error{File: name, Line: line, Reason: "row has " + thousands(n) + " fields: " + le.Error(), Err: le}
}

// fieldCountError explains a row whose field count differs from the
// header's. More fields than the header in a comma-separated file usually
// mean an unquoted decimal comma ("4,255") or thousands separator
// ("1,234.5"); the field named is the first number column whose value is
// followed by a run of digits that looks like its own continuation.
func fieldCountError(name string, line int, rec, header []string, timeIdx int, comma rune) error {
	reason := "row has " + strconv.Itoa(len(rec)) + " fields but the header has " + strconv.Itoa(len(header))
	field := ""
	if len(rec) > len(header) && comma == ',' {
		reason += ": a decimal comma or thousands separator in a comma-separated file? " +
			"Export with '.' as the decimal mark and no digit grouping"
		for k := 0; k < len(header) && k+1 < len(rec); k++ {
			if k != timeIdx && allDigits(strings.TrimSpace(rec[k])) && allDigits(strings.TrimSpace(rec[k+1])) {
				field = header[k]
				break
			}
		}
	}
	return &Error{File: name, Line: line, Field: field, Reason: reason}
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}
