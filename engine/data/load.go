package data

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"strings"
	"time"
	_ "time/tzdata" // LEAN and Options.Location zones must resolve on machines without zoneinfo
)

// The layouts the loaders read. Info.Layout reports the one used, and
// Options.Layout forces one.
const (
	LayoutCSV                    = "csv"                      // header row naming the columns
	LayoutCSVSemicolon           = "csv-semicolon"            // ';'-separated, decimal commas (European spreadsheet export)
	LayoutBinanceArchive         = "binance-archive"          // data.binance.vision kline CSV with its header row
	LayoutBinanceArchiveNoHeader = "binance-archive-noheader" // the same without the header (older archives)
	LayoutFreqtradeJSON          = "freqtrade-json"           // [[ms, o, h, l, c, v], ...]
	LayoutBinanceKlinesJSON      = "binance-klines-json"      // REST /api/v3/klines: 12 fields, prices as strings
	LayoutLEANCSV                = "lean-csv"                 // QuantConnect LEAN hour and daily bars: yyyyMMdd HH:mm
	LayoutLEANDayCSV             = "lean-day-csv"             // LEAN second and minute day files: milliseconds since midnight
)

// Layouts lists the layout names in the order detection documents them.
func Layouts() []string {
	return []string{LayoutCSV, LayoutCSVSemicolon, LayoutBinanceArchive, LayoutBinanceArchiveNoHeader,
		LayoutFreqtradeJSON, LayoutBinanceKlinesJSON, LayoutLEANCSV, LayoutLEANDayCSV, LayoutParquet, LayoutArrow}
}

// Options changes how a file is read. The zero value detects everything.
type Options struct {
	// TimeColumn names the timestamp column of a CSV with a header
	// (case-insensitive); "" picks the first found of open_time, timestamp,
	// time, datetime, date. A layout without a header refuses it.
	TimeColumn string
	// Location is the exchange time zone for local times without an offset
	// (LEAN, date-only values, naive ISO). nil means the LEAN convention's
	// zone for LEAN files and UTC otherwise. Times with an offset or in
	// Unix units ignore it.
	Location *time.Location
	// Layout forces one of the Layout* names; "" detects it.
	Layout string
	// LEANAsset is the LEAN security type of a LEAN file whose path does
	// not say it (one of LEANAssets); "" takes it from the path.
	LEANAsset string
	// Limits bound the load (zero fields: the defaults, see Limits).
	Limits Limits

	ctx context.Context // the load's context (the *Context functions); nil: none
}

// Info describes a loaded dataset.
type Info struct {
	Name   string // "embedded:filusdt-1m", the path as given to LoadFile, or Parse's name
	Path   string // the path as given to LoadFile; "" for Parse and embedded data
	Layout string // one of the Layout* names
	// SHA256 is the hex SHA-256 of the bytes as stored (of the .gz or .zip
	// for a compressed file); for a folder or glob, of the manifest of its
	// files (see LoadFile).
	SHA256        string
	Files         int           // files read: 1, or the members of a folder or glob
	Bars          int           // bars loaded (after resampling, if any)
	First, Last   time.Time     // open times of the first and last bar, UTC
	Gaps          int           // spacings larger than MedianSpacing
	LargestGap    time.Duration // the largest such spacing; 0 when Gaps is 0
	MedianSpacing time.Duration // median time between consecutive bars (lower median); 0 for one bar
	// DroppedNaN counts the rows with open, high, low and close all missing
	// (NaN, null or empty), dropped; DroppedAt names the first few of them
	// ("line 3", "record 5", "b.csv line 7").
	DroppedNaN int
	DroppedAt  []string
	MinPrice   float64 // lowest low
	MaxPrice   float64 // highest high
	Timeframe  string  // "" when not resampled, else e.g. "5m"
	SourceBars int     // bars in the file, before resampling (equals Bars when not resampled)

	// PriceScale is what the file's prices were divided by: 10,000 for LEAN
	// equity and option files, 1 otherwise (0 for an Info that was not
	// made by a loader, e.g. read back from an old session).
	PriceScale float64
	// Times says how the file wrote its times: TimesUnix, TimesOffset,
	// TimesLocal or TimesMixed ("" when unknown). TimeZone is the zone its
	// local times were read in ("" when it had none).
	Times    string
	TimeZone string
	// Convention names the file convention that decided PriceScale and
	// TimeZone, e.g. "LEAN equity/usa (from the path)"; "" for none.
	Convention string
	// Calendar is Calendar247 or CalendarSessions, what the bars follow
	// (""when the span is too short to tell); CalendarWhy says what was
	// seen (coverage, gaps). The annualisation follows it.
	Calendar    string
	CalendarWhy string
}

// How a file wrote its times (Info.Times).
const (
	TimesUnix   = "unix"   // Unix seconds .. nanoseconds, or typed timestamps: UTC instants
	TimesOffset = "offset" // ISO 8601 with a UTC offset (or Z)
	TimesLocal  = "local"  // local wall-clock times, read in Info.TimeZone
	TimesMixed  = "mixed"  // more than one of the above
)

// Dataset is a validated bar series and what is known about it.
type Dataset struct {
	Info Info
	Bars Bars

	firstAt, lastAt where // the rows of the first and last bars in the file (loadMany's messages)
}

// SupportedExtensions lists the file name endings a file picker should offer.
// The layout is detected from the content, not the name.
func SupportedExtensions() []string {
	return []string{".csv", ".json", ".gz", ".zip", ".txt", ".parquet", ".feather", ".arrow"}
}

// Parse reads r and loads it as LoadFile loads a file; name stands for the
// file in Info.Name and in error messages (a "#member" suffix picks a zip
// member, and LEAN conventions are read from it as from a path). A zip is
// read into memory (up to Limits.MaxBytes); anything else is parsed as it
// streams.
func Parse(r io.Reader, name string, opt Options) (*Dataset, error) {
	return ParseContext(context.Background(), r, name, opt)
}

// ParseContext is Parse under ctx: once ctx is done, the next read of r or
// of the decompressed text fails and the load returns an *Error wrapping
// ctx's error (errors.Is(err, context.Canceled)).
func ParseContext(ctx context.Context, r io.Reader, name string, opt Options) (*Dataset, error) {
	lim, err := opt.Limits.resolve()
	if err != nil {
		return nil, &Error{File: name, Reason: err.Error()}
	}
	opt.Limits, opt.ctx = lim, ctx
	var hint int64
	if st, ok := r.(interface{ Stat() (fs.FileInfo, error) }); ok {
		if fi, err := st.Stat(); err == nil {
			hint = fi.Size()
		}
	}
	if ctx.Done() != nil {
		r = &readerWithContext{ctx: ctx, r: r, name: name}
	}
	file, member := splitMember(name)
	h := sha256.New()
	br := bufio.NewReader(io.TeeReader(r, h))
	if magic, _ := br.Peek(8); isZip(magic) {
		raw, err := io.ReadAll(io.LimitReader(br, lim.MaxBytes+1))
		if err != nil {
			return nil, readError(name, err)
		}
		if int64(len(raw)) > lim.MaxBytes {
			le := &LimitError{What: "decompressed size", Max: lim.MaxBytes, Env: EnvMaxBytes}
			return nil, &Error{File: name, Reason: le.Error(), Err: le}
		}
		return loadZip(bytes.NewReader(raw), int64(len(raw)), sumOf(h), origin{name: file, path: file, member: member}, opt)
	}
	d, err := parseStream(br, origin{name: name, path: name}, opt, hint)
	if err != nil {
		return nil, err
	}
	if _, err := io.Copy(io.Discard, br); err != nil { // the rest of the bytes, for the hash
		return nil, readError(name, err)
	}
	d.Info.SHA256 = sumOf(h)
	return d, nil
}

// Open loads "embedded:NAME" (see Embedded) or what LoadFile loads.
func Open(spec string, opt Options) (*Dataset, error) {
	return OpenContext(context.Background(), spec, opt)
}

// OpenContext is Open under ctx (see LoadFileContext).
func OpenContext(ctx context.Context, spec string, opt Options) (*Dataset, error) {
	if name, ok := strings.CutPrefix(spec, embeddedPrefix); ok {
		return openEmbedded(name, opt)
	}
	if spec == "" {
		return nil, &Error{File: spec, Reason: "no dataset given: name a file or " + DefaultDataset}
	}
	return LoadFileContext(ctx, spec, opt)
}

func sumOf(h interface{ Sum([]byte) []byte }) string { return hex.EncodeToString(h.Sum(nil)) }

// origin is where a text came from: the name messages give it, the path
// conventions are read from (LEAN's folders and file names) and the zip
// member it was read from.
type origin struct {
	name   string // for messages and Info.Name
	path   string // the file's path as given, without "#member"
	member string // the zip member, "" when not from a zip
}

// conventionPath is the path whose folders and file name say how to read
// it: the member's name inside the zip's path.
func (o origin) conventionPath() string {
	if o.member == "" {
		return o.path
	}
	return o.path + "/" + o.member
}

// parseStream parses one file's bytes as stored (gzip is found by its
// magic bytes and decompressed as it streams) into a Dataset whose
// SHA256 the caller sets. hint is the stored size when known (0 if not),
// to size the bar arrays.
func parseStream(r io.Reader, org origin, opt Options, hint int64) (*Dataset, error) {
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReader(r)
	}
	text := io.Reader(br)
	magic, _ := br.Peek(8)
	if isGzip(magic) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, &Error{File: org.name, Reason: "gzip: " + err.Error(), Err: err}
		}
		defer zr.Close()
		zbr := bufio.NewReader(&named{r: zr, name: org.name, what: "gzip"})
		magic, _ = zbr.Peek(8)
		text, hint = zbr, hint*4
	}
	if isZip(magic) {
		return nil, &Error{File: org.name, Reason: "a zip inside a compressed file: extract it first"}
	}
	if kind := columnar(magic); kind != "" {
		// The columnar readers need random access: the decompressed bytes
		// are read into memory, up to Limits.MaxBytes.
		raw, err := io.ReadAll(io.LimitReader(text, opt.Limits.MaxBytes+1))
		if err != nil {
			return nil, readError(org.name, err)
		}
		if int64(len(raw)) > opt.Limits.MaxBytes {
			le := &LimitError{What: "decompressed size", Max: opt.Limits.MaxBytes, Env: EnvMaxBytes}
			return nil, &Error{File: org.name, Reason: le.Error(), Err: le}
		}
		return loadColumnar(bytes.NewReader(raw), int64(len(raw)), kind, org, opt)
	}
	g := newGuard(text, org.name, "", opt.Limits)
	g.ctx = opt.ctx
	bl, layout, conv, err := parseText(g, org, opt, hint)
	if err != nil {
		return nil, err
	}
	d := &Dataset{Bars: bl.bars, firstAt: bl.firstBarAt, lastAt: bl.lastBarAt}
	d.Info = Info{Name: org.name, Layout: layout, Files: 1, DroppedNaN: bl.dropped, DroppedAt: bl.droppedAt,
		SourceBars: bl.bars.Len()}
	conv.describe(&d.Info, bl.tp)
	d.Info.setStats(&d.Bars)
	return d, nil
}

// parseText detects the layout of a decompressed text (unless forced),
// then parses it. Leading blank lines (spaces only, too) are skipped but
// keep their line numbers; a UTF-8 BOM is dropped (two are refused);
// UTF-16 and UTF-32, with or without a BOM, are refused.
func parseText(g *guard, org origin, opt Options, hint int64) (*builder, string, convention, error) {
	name := org.name
	fail := func(e *Error) (*builder, string, convention, error) { return nil, "", convention{}, e }
	br := bufio.NewReaderSize(g, minMaxLine)
	if enc := wideText(peekUpTo(br, 64)); enc != "" {
		return fail(&Error{File: name, Line: 1, Reason: enc + ": save the file as UTF-8"})
	}
	if b, _ := br.Peek(3); bytes.Equal(b, utf8BOM) {
		br.Discard(3)
		if b, _ := br.Peek(3); bytes.Equal(b, utf8BOM) {
			return fail(&Error{File: name, Line: 1, Reason: "two UTF-8 byte-order marks (BOM) at the start, " +
				"as when a file is converted to UTF-8 twice: remove the second one (EF BB BF)"})
		}
	}
	if b, _ := br.Peek(4); isGzip(b) {
		return fail(&Error{File: name, Reason: "gzip inside gzip: decompress the file once first"})
	}
	blank := 0 // newlines before the first non-blank character
	for {
		c, err := br.ReadByte()
		if err != nil {
			if err == io.EOF {
				return fail(&Error{File: name, Line: 1, Reason: "empty file: no bars"})
			}
			return nil, "", convention{}, err
		}
		if c == '\n' {
			blank++
			continue
		}
		if c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v' {
			continue
		}
		br.UnreadByte()
		break
	}
	capacity := int(min(hint/40, 1<<24))
	layout := opt.Layout
	first, _ := br.Peek(1)
	if layout == "" && (first[0] == '[' || first[0] == '{') {
		layout = layoutJSON
	}
	switch layout {
	case LayoutFreqtradeJSON, LayoutBinanceKlinesJSON, layoutJSON:
		if opt.TimeColumn != "" {
			return fail(noHeaderTimeColumn(name, opt.TimeColumn, "JSON"))
		}
		pending, _ := br.Peek(br.Buffered())
		off := g.n - int64(len(pending))
		g.startJSON(pending, off)
		bl, layout, err := parseJSON(br, g, off, name, opt, layout, capacity)
		return bl, layout, plainConvention(opt), err
	}
	if crOnly(peekUpTo(br, minMaxLine)) {
		return fail(&Error{File: name, Line: blank + 1, Reason: "the lines end in CR alone (classic Mac OS line endings), " +
			"which are not read as line ends: save the file with LF or CRLF line endings"})
	}
	// The first non-blank line, for detection, then the text again from
	// the start: the skipped lines as empty lines (numbers kept), the line,
	// the rest.
	line, err := br.ReadString('\n')
	if err != nil && err != io.EOF {
		return nil, "", convention{}, err
	}
	text := io.MultiReader(newlinesReader(blank), strings.NewReader(line), br)
	lean := leanFromPath(org.conventionPath())
	if layout == "" {
		var e *Error
		if layout, e = detect(strings.TrimSpace(line), blank+1, name, lean, opt); e != nil {
			return fail(e)
		}
	}
	if layout == layoutJSON {
		return fail(&Error{File: name, Reason: "unknown layout " + quote(layout)})
	}
	var bl *builder
	conv := plainConvention(opt)
	switch layout {
	case LayoutCSV, LayoutBinanceArchive:
		bl, err = parseHeaderCSV(text, name, opt, ',', nil, capacity)
	case LayoutCSVSemicolon:
		bl, err = parseHeaderCSV(text, name, opt, ';', &semicolonNumbers{}, capacity)
	case LayoutBinanceArchiveNoHeader:
		if opt.TimeColumn != "" {
			return fail(noHeaderTimeColumn(name, opt.TimeColumn, layout))
		}
		bl, err = parseBinanceNoHeader(text, name, opt, capacity)
	case LayoutLEANCSV, LayoutLEANDayCSV:
		if opt.TimeColumn != "" {
			return fail(noHeaderTimeColumn(name, opt.TimeColumn, layout))
		}
		bl, conv, err = parseLEAN(text, name, layout, lean, opt, capacity)
	case LayoutParquet, LayoutArrow:
		return fail(&Error{File: name, Reason: "not a " + layout + " file (it does not start with the format's magic bytes)"})
	default:
		return fail(&Error{File: name, Reason: "unknown layout " + quote(layout) + " (Options.Layout): use one of " +
			strings.Join(Layouts(), ", ")})
	}
	if err != nil {
		return nil, "", convention{}, err
	}
	return bl, layout, conv, nil
}

// crOnly reports a text whose first line (in b, the start of the text)
// ends in a CR that no LF follows, outside double quotes: a file with the
// classic Mac OS line endings, which would read as one endless line.
func crOnly(b []byte) bool {
	quoted := false
	for i, c := range b {
		switch {
		case c == '\n':
			return false
		case c == '"':
			quoted = !quoted
		case c == '\r' && !quoted && i+1 < len(b) && b[i+1] != '\n':
			return true
		}
	}
	return false
}

var utf8BOM = []byte("\xef\xbb\xbf")

// peekUpTo returns up to n bytes ahead without consuming them.
func peekUpTo(br *bufio.Reader, n int) []byte {
	b, _ := br.Peek(n)
	return b
}

// wideText names the encoding of text in UTF-16 or UTF-32 from its first
// bytes ("UTF-16 text", "UTF-16 text without a byte-order mark"): a
// byte-order mark, or, without one, zero bytes in every other position
// (ASCII characters as UTF-16), in three of four (UTF-32). "" for
// anything else.
func wideText(b []byte) string {
	switch {
	case bytes.HasPrefix(b, []byte("\xff\xfe\x00\x00")) || bytes.HasPrefix(b, []byte("\x00\x00\xfe\xff")):
		return "UTF-32 text"
	case bytes.HasPrefix(b, []byte("\xff\xfe")) || bytes.HasPrefix(b, []byte("\xfe\xff")):
		return "UTF-16 text"
	}
	k := len(b) &^ 3
	if k < 4 {
		return ""
	}
	var zero [4]int // zero bytes by position mod 4
	for i, c := range b[:k] {
		if c == 0 {
			zero[i%4]++
		}
	}
	q := k / 4
	switch {
	case zero[1] == q && zero[2] == q && zero[3] == q && zero[0] == 0, zero[0] == q && zero[1] == q && zero[2] == q && zero[3] == 0:
		return "UTF-32 text without a byte-order mark"
	case zero[1]+zero[3] == 2*q && zero[0]+zero[2] == 0, zero[0]+zero[2] == 2*q && zero[1]+zero[3] == 0:
		return "UTF-16 text without a byte-order mark"
	}
	return ""
}

// noHeaderTimeColumn refuses a time column named for a layout that has no
// header to find it in.
func noHeaderTimeColumn(name, col, layout string) *Error {
	return &Error{File: name, Reason: "a time column (" + quote(col) + ") was named, but the " + layout +
		" layout has no header row: its time is always the first field; leave the time column unset", Err: ErrTimeColumn}
}

// newlines is a reader of n '\n' bytes.
type newlines int

func (n *newlines) Read(p []byte) (int, error) {
	if *n <= 0 {
		return 0, io.EOF
	}
	k := min(len(p), int(*n))
	for i := range k {
		p[i] = '\n'
	}
	*n -= newlines(k)
	return k, nil
}

func newlinesReader(n int) io.Reader { v := newlines(n); return &v }

func isGzip(b []byte) bool { return len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b }

// isZip reports a zip's local file header, or the end record of an empty
// zip.
func isZip(b []byte) bool {
	return len(b) >= 4 && b[0] == 'P' && b[1] == 'K' && (b[2] == 3 && b[3] == 4 || b[2] == 5 && b[3] == 6)
}
