package data

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"strconv"
	"strings"
)

// Limits bound what one load may consume, so that a hostile or broken file
// (a zip bomb, a file of one endless line, /dev/zero through a link) is
// refused with a message instead of exhausting memory. The zero value of a
// field means its default; each default can be raised for every front end
// at once through an environment variable, which the refusal names.
type Limits struct {
	// MaxBytes bounds the decompressed text of one file (default 8 GiB,
	// SWEEPBENCH_MAX_BYTES).
	MaxBytes int64
	// MaxLine bounds one row: a line of a text layout (a quoted field may
	// not carry it past the bound over several lines), one token of a JSON
	// file (default 1 MiB, at least 4 KiB; SWEEPBENCH_MAX_LINE).
	MaxLine int
	// MaxFields bounds the fields of one row or JSON record (default 1,000,
	// SWEEPBENCH_MAX_FIELDS).
	MaxFields int
	// MaxFiles bounds the files of a folder or glob (default 100,000,
	// SWEEPBENCH_MAX_FILES).
	MaxFiles int
	// MaxBlankLines bounds a run of consecutive blank lines (empty, or
	// spaces, tabs and CRs only) in a text layout (default 1,000,000,
	// SWEEPBENCH_MAX_BLANK_LINES). A real file has a few; a small gzip of
	// newlines (10 MB of it holds 10 GB of them) would otherwise
	// decompress for minutes before MaxBytes refuses it.
	MaxBlankLines int
}

// The limits' defaults and the environment variables that raise them.
const (
	DefaultMaxBytes  = 8 << 30
	DefaultMaxLine   = 1 << 20
	DefaultMaxFields = 1000
	DefaultMaxFiles  = 100000

	DefaultMaxBlankLines = 1000000

	EnvMaxBytes  = "SWEEPBENCH_MAX_BYTES"
	EnvMaxLine   = "SWEEPBENCH_MAX_LINE"
	EnvMaxFields = "SWEEPBENCH_MAX_FIELDS"
	EnvMaxFiles  = "SWEEPBENCH_MAX_FILES"

	EnvMaxBlankLines = "SWEEPBENCH_MAX_BLANK_LINES"

	minMaxLine = 4 << 10 // layout detection reads ahead this much
)

// resolve fills the zero fields from the environment, else the defaults.
// A malformed variable is an error naming it.
func (l Limits) resolve() (Limits, error) {
	env := func(dst *int64, name string, def int64) error {
		if *dst > 0 {
			return nil
		}
		*dst = def
		s := strings.TrimSpace(os.Getenv(name))
		if s == "" {
			return nil
		}
		v, ok := parseSize(s)
		if !ok {
			return errors.New(name + "=" + strconv.Quote(s) + ": want a positive size such as 16GiB, 4MiB or 5000")
		}
		*dst = v
		return nil
	}
	b, line, fields, files, blank := l.MaxBytes, int64(l.MaxLine), int64(l.MaxFields), int64(l.MaxFiles), int64(l.MaxBlankLines)
	err := errors.Join(env(&b, EnvMaxBytes, DefaultMaxBytes), env(&line, EnvMaxLine, DefaultMaxLine),
		env(&fields, EnvMaxFields, DefaultMaxFields), env(&files, EnvMaxFiles, DefaultMaxFiles),
		env(&blank, EnvMaxBlankLines, DefaultMaxBlankLines))
	const maxInt = int64(^uint(0) >> 1)
	return Limits{MaxBytes: b, MaxLine: int(min(max(line, minMaxLine), maxInt)),
		MaxFields: int(min(fields, maxInt)), MaxFiles: int(min(files, maxInt)), MaxBlankLines: int(min(blank, maxInt))}, err
}

// parseSize reads a positive decimal count with an optional binary unit
// (KiB, MiB, GiB, TiB; K, M, G, T and KB, MB, GB, TB mean the same).
func parseSize(s string) (int64, bool) {
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	if i == 0 || i > 18 {
		return 0, false
	}
	n, err := strconv.ParseInt(s[:i], 10, 64)
	if err != nil || n <= 0 {
		return 0, false
	}
	shift := 0
	switch strings.ToUpper(strings.TrimSpace(s[i:])) {
	case "", "B":
	case "K", "KB", "KIB":
		shift = 10
	case "M", "MB", "MIB":
		shift = 20
	case "G", "GB", "GIB":
		shift = 30
	case "T", "TB", "TIB":
		shift = 40
	default:
		return 0, false
	}
	if n > (1<<62)>>shift {
		return 0, false
	}
	return n << shift, true
}

// LimitError is a load refused by one of the Limits: which one, its value
// and the environment variable that raises it.
type LimitError struct {
	What string // "decompressed size", "row length", "JSON token length", "fields in a row", "files", "consecutive blank lines"
	Max  int64
	Env  string
	// Bars is, for the blank lines, how many bars were read before their
	// run (the parser's count: withBars).
	Bars int
}

// bytes reports whether the limit counts bytes (it is written as a size).
func (e *LimitError) bytes() bool { return e.Env == EnvMaxBytes || e.Env == EnvMaxLine }

func (e *LimitError) Error() string {
	v, more := thousands(int(e.Max)), strconv.FormatInt(4*e.Max, 10)
	if e.bytes() {
		v, more = formatSize(e.Max), strings.ReplaceAll(formatSize(4*e.Max), " ", "")
	}
	raise := "raise it with " + e.Env + " (e.g. " + e.Env + "=" + more + ")"
	if e.Env == EnvMaxBlankLines {
		// A file of blank lines alone is not worth raising the limit for,
		// nor the next one it suggests: say what was read first.
		before := ", with no bar before them"
		if e.Bars > 0 {
			before = " after " + thousands(e.Bars) + " bar"
			if e.Bars > 1 {
				before += "s"
			}
		}
		return e.What + " above the limit of " + v + before + ": if the file holds bars after them, " + raise
	}
	return e.What + " above the limit of " + v + ": " + raise
}

// withBars says in err, a run of blank lines above MaxBlankLines refused
// (the guard counts lines, not bars), that bars were read before it; any
// other err is returned as it is.
func withBars(err error, bars int) error {
	var de *Error
	var le *LimitError
	if errors.As(err, &de) && errors.As(de.Err, &le) && le.Env == EnvMaxBlankLines {
		le.Bars = bars
		de.Reason = le.Error()
	}
	return err
}

// formatSize writes a byte count in the largest binary unit that divides
// it, else in bytes.
func formatSize(v int64) string {
	for _, u := range []struct {
		shift int
		name  string
	}{{40, "TiB"}, {30, "GiB"}, {20, "MiB"}, {10, "KiB"}} {
		if v >= 1<<u.shift && v%(1<<u.shift) == 0 {
			return strconv.FormatInt(v>>u.shift, 10) + " " + u.name
		}
	}
	return thousands(int(v)) + " bytes"
}

// guard passes a decompressed stream through, counting bytes and lines,
// and fails the read that would cross a limit: MaxBytes in all, MaxLine in
// one row, MaxBlankLines in one run of blank lines (text mode). In text
// mode a row ends at a newline outside double quotes (a quoted CSV field
// cannot carry a row past the bound); in JSON mode a
// "row" is one token, ended by a structural character outside a string.
// Its errors are *Error values naming the file and line; a failure of the
// reader below (a damaged gzip stream) is wrapped the same way.
type guard struct {
	r      io.Reader
	name   string
	what   string // the decompressor below, for its errors: "gzip", "zip"
	lim    Limits
	ctx    context.Context // nil: none; once done, the next read fails
	n      int64           // bytes passed
	row    int             // bytes of the current row
	lines  int             // newlines passed
	json   bool
	rowAt  int  // the line the current row started on (text mode)
	inStr  bool // text: inside double quotes; JSON: inside a string
	escape bool // JSON: after a backslash inside a string
	err    error

	// JSON mode keeps the offsets of the newlines not yet trimmed, so that
	// an error at a decoder offset can name its line.
	nl     []int64
	nlBase int // newlines before nl[0]

	// Text mode: whether the current line so far is not blank (has more
	// than spaces, tabs and CRs), the blank lines just before it and the
	// line their run started on.
	notBlank  bool
	blankRun  int
	blankFrom int
}

func newGuard(r io.Reader, name, what string, lim Limits) *guard {
	return &guard{r: r, name: name, what: what, lim: lim}
}

func (g *guard) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	if err := ctxErr(g.ctx); err != nil {
		g.err = interrupted(g.name, err)
		return 0, g.err
	}
	n, err := g.r.Read(p)
	if n > 0 {
		if k, e := g.scan(p[:n]); e != nil {
			g.err = e
			if k > 0 {
				// The lines before the one refused pass first (the
				// parser counts their bars: withBars); the error comes
				// with the next read.
				return k, nil
			}
			return 0, e
		}
	}
	if err != nil && err != io.EOF {
		var de *Error
		if !errors.As(err, &de) {
			reason := err.Error()
			if g.what != "" {
				reason = g.what + ": " + reason
			}
			err = &Error{File: g.name, Reason: reason, Err: err}
		}
		g.err = err
	}
	return n, err
}

// scan counts p and checks the limits; a run of blank lines refused also
// returns how many bytes of p come before its refused line (the whole
// lines before it, passed on ahead of the error).
func (g *guard) scan(p []byte) (int, error) {
	if g.n += int64(len(p)); g.n > g.lim.MaxBytes {
		// Place it on the line of the first byte past the limit.
		g.lines += bytes.Count(p[:int64(len(p))-(g.n-g.lim.MaxBytes)], []byte{'\n'})
		le := &LimitError{What: "decompressed size", Max: g.lim.MaxBytes, Env: EnvMaxBytes}
		return 0, &Error{File: g.name, Line: g.lines + 1, Reason: le.Error(), Err: le}
	}
	start := g.n - int64(len(p))
	maxRow := g.lim.MaxLine
	if !g.json {
		for i := 0; i < len(p); {
			// The common case: no quote in the rest of the row.
			k := bytes.IndexAny(p[i:], "\n\"")
			if k < 0 {
				g.row += len(p) - i
				if !g.notBlank && !blankText(p[i:]) {
					g.notBlank = true
				}
				break
			}
			g.row += k
			if g.row > maxRow {
				return 0, g.limitErr(&LimitError{What: "row length", Max: int64(maxRow), Env: EnvMaxLine})
			}
			if !g.notBlank && !blankText(p[i:i+k]) {
				g.notBlank = true
			}
			if p[i+k] == '"' {
				g.inStr = !g.inStr
				g.row++
				g.notBlank = true
			} else {
				g.lines++
				if !g.inStr {
					g.row, g.rowAt = 0, g.lines
					if e := g.endLine(); e != nil {
						return i, e
					}
				}
			}
			i += k + 1
		}
		if g.row > maxRow {
			return 0, g.limitErr(&LimitError{What: "row length", Max: int64(maxRow), Env: EnvMaxLine})
		}
		return 0, nil
	}
	for i, c := range p {
		g.row++
		switch {
		case c == '\n':
			g.lines++
			g.nl = append(g.nl, start+int64(i))
		case g.inStr && g.escape:
			g.escape = false
		case g.inStr && c == '\\':
			g.escape = true
		case c == '"':
			g.inStr = !g.inStr
		case !g.inStr && (c == ',' || c == '[' || c == ']' || c == '{' || c == '}' || c == ':'):
			g.row = 0
		}
		if g.row > maxRow {
			return 0, g.limitErr(&LimitError{What: "JSON token length", Max: int64(maxRow), Env: EnvMaxLine})
		}
	}
	return 0, nil
}

// endLine counts the line just ended (text mode, outside quotes) into the
// run of blank lines, or ends the run; a run longer than MaxBlankLines is
// refused where it started.
func (g *guard) endLine() error {
	if g.notBlank {
		g.notBlank, g.blankRun = false, 0
		return nil
	}
	if g.blankRun++; g.blankRun == 1 {
		g.blankFrom = g.lines // the 1-based line that just ended
	}
	if g.blankRun > g.lim.MaxBlankLines {
		le := &LimitError{What: "consecutive blank lines", Max: int64(g.lim.MaxBlankLines), Env: EnvMaxBlankLines}
		return &Error{File: g.name, Line: g.blankFrom, Reason: le.Error(), Err: le}
	}
	return nil
}

// blankText reports text of spaces, tabs and CRs only (or none): a blank
// line's.
func blankText(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' && c != '\f' && c != '\v' {
			return false
		}
	}
	return true
}

// limitErr places a refusal: on the line the current row started (a
// quoted field may have run over many), else the current line.
func (g *guard) limitErr(le *LimitError) error {
	line := g.lines + 1
	if !g.json && le.What == "row length" {
		line = g.rowAt + 1
	}
	return &Error{File: g.name, Line: line, Reason: le.Error(), Err: le}
}

// startJSON switches to JSON mode. pending are the bytes already read from
// the guard but not yet consumed (a detection buffer), which start at
// stream offset off; their newlines are recorded.
func (g *guard) startJSON(pending []byte, off int64) {
	g.json, g.inStr, g.escape, g.row = true, false, false, 0
	g.nl = g.nl[:0]
	k := 0
	for i, c := range pending {
		if c == '\n' {
			g.nl = append(g.nl, off+int64(i))
			k++
		}
	}
	g.nlBase = g.lines - k
	// The pending bytes were counted as text; count them again as JSON.
	for _, c := range pending {
		switch {
		case g.inStr && g.escape:
			g.escape = false
		case g.inStr && c == '\\':
			g.escape = true
		case c == '"':
			g.inStr = !g.inStr
		case !g.inStr && (c == ',' || c == '[' || c == ']' || c == '{' || c == '}' || c == ':'):
			g.row = 0
			continue
		}
		g.row++
	}
}

// lineAt is the 1-based line of stream offset off, for an offset not before
// the last trim.
func (g *guard) lineAt(off int64) int {
	k := 0
	for k < len(g.nl) && g.nl[k] < off {
		k++
	}
	return g.nlBase + k + 1
}

// trim forgets the newlines before stream offset off.
func (g *guard) trim(off int64) {
	k := 0
	for k < len(g.nl) && g.nl[k] < off {
		k++
	}
	if k > 0 {
		g.nlBase += k
		g.nl = append(g.nl[:0], g.nl[k:]...)
	}
}
