package data

import (
	"errors"
	"strconv"
	"strings"
)

// Error is the error every loader returns for bad input: the file, the place
// in it and what is wrong, e.g.
//
//	data.csv: line 17: field "close": price -3 is not positive
//	klines.json: record 5: field "high": high 4.1 is below low 4.2
//
// Callers that decide on the place (an editor jumping to the line) take it
// apart with errors.As.
type Error struct {
	File string // the name given to Parse, or the path as given to LoadFile
	// Line is the 1-based physical line in the (decompressed) file; 0 when the
	// error is not tied to a line (a JSON record, a gzip stream).
	Line int
	// Record is the 1-based index of the element in a JSON file's outer array
	// (record 1 is the first bar); 0 for text layouts.
	Record int
	// Row is the 1-based row of a columnar file (Parquet, Arrow); 0 otherwise.
	Row    int
	Field  string // the column or field name; "" when the whole row or file is meant
	Reason string // what is wrong and, where it helps, what to do
	// Err is the cause when a caller may decide on it: a *LimitError, an
	// *fs.PathError of a file that cannot be read; nil otherwise.
	Err error
}

// Unwrap returns the cause (errors.As finds a *LimitError through it).
func (e *Error) Unwrap() error { return e.Err }

// Error formats the error as "file: line N: field "x": reason", leaving out
// the parts that are empty, through Sanitize (a path or a header from the
// file cannot move the terminal's cursor).
func (e *Error) Error() string {
	var sb strings.Builder
	sb.WriteString(e.File)
	if e.Line > 0 {
		sb.WriteString(": line ")
		sb.WriteString(strconv.Itoa(e.Line))
	}
	if e.Record > 0 {
		sb.WriteString(": record ")
		sb.WriteString(strconv.Itoa(e.Record))
	}
	if e.Row > 0 {
		sb.WriteString(": row ")
		sb.WriteString(strconv.Itoa(e.Row))
	}
	if e.Field != "" {
		sb.WriteString(": field ")
		sb.WriteString(strconv.Quote(e.Field))
	}
	sb.WriteString(": ")
	sb.WriteString(e.Reason)
	return Sanitize(sb.String())
}

// ErrTimeColumn is the cause (Error.Err) of a load refused because of
// Options.TimeColumn: the column is not in the header (or is there twice),
// or the layout has no header to name it in. A front end names its own
// option for it (errors.Is).
var ErrTimeColumn = errors.New("the time column asked for cannot be used")

// where is a place in an input: a physical line (text layouts), a record
// of a JSON array or a row of a columnar file. It names the place in messages that refer to another row
// ("same as line 16").
type where struct {
	line   int
	record int
	row    int
}

func (w where) String() string {
	switch {
	case w.record > 0:
		return "record " + strconv.Itoa(w.record)
	case w.row > 0:
		return "row " + strconv.Itoa(w.row)
	}
	return "line " + strconv.Itoa(w.line)
}
