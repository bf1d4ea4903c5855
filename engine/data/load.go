package data

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"io"
	"os"
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
	LayoutLEANCSV                = "lean-csv"                 // QuantConnect LEAN equity bars: yyyyMMdd HH:mm, prices x 10,000
)

// Layouts lists the layout names in the order detection documents them.
func Layouts() []string {
	return []string{LayoutCSV, LayoutCSVSemicolon, LayoutBinanceArchive, LayoutBinanceArchiveNoHeader,
		LayoutFreqtradeJSON, LayoutBinanceKlinesJSON, LayoutLEANCSV}
}

// Options changes how a file is read. The zero value detects everything.
type Options struct {
	// TimeColumn names the timestamp column of a CSV with a header
	// (case-insensitive); "" picks the first found of open_time, timestamp,
	// time, datetime, date.
	TimeColumn string
	// Location is the exchange time zone for local times without an offset
	// (LEAN, date-only values, naive ISO). nil means America/New_York for
	// LEAN and UTC otherwise. Times with an offset or in Unix units ignore it.
	Location *time.Location
	// Layout forces one of the Layout* names; "" detects it.
	Layout string
}

// Info describes a loaded dataset.
type Info struct {
	Name          string        // "embedded:filusdt-1m", the path as given to LoadFile, or Parse's name
	Path          string        // the path as given to LoadFile; "" for Parse and embedded data
	Layout        string        // one of the Layout* names
	SHA256        string        // hex SHA-256 of the bytes as stored (of the .gz bytes for a .gz)
	Bars          int           // bars loaded (after resampling, if any)
	First, Last   time.Time     // open times of the first and last bar, UTC
	Gaps          int           // spacings larger than MedianSpacing
	LargestGap    time.Duration // the largest such spacing; 0 when Gaps is 0
	MedianSpacing time.Duration // median time between consecutive bars (lower median); 0 for one bar
	DroppedNaN    int           // rows with open, high, low and close all NaN, dropped (Kaggle/Bitstamp style)
	MinPrice      float64       // lowest low
	MaxPrice      float64       // highest high
	Timeframe     string        // "" when not resampled, else e.g. "5m"
	SourceBars    int           // bars in the file, before resampling (equals Bars when not resampled)
}

// Dataset is a validated bar series and what is known about it.
type Dataset struct {
	Info Info
	Bars Bars
}

// SupportedExtensions lists the file name endings a file picker should offer.
// The layout is detected from the content, not the name.
func SupportedExtensions() []string { return []string{".csv", ".json", ".gz", ".txt"} }

// LoadFile reads the file at path, decompresses it when it is gzip (found by
// the magic bytes, whatever the name), detects the layout unless opt.Layout
// forces one, parses and validates it. Input problems come back as *Error.
func LoadFile(path string, opt Options) (*Dataset, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	d, err := parseBytes(raw, path, opt)
	if err != nil {
		return nil, err
	}
	d.Info.Path = path
	return d, nil
}

// Parse reads everything from r and loads it as LoadFile does; name stands
// for the file in Info.Name and in error messages.
func Parse(r io.Reader, name string, opt Options) (*Dataset, error) {
	raw, err := io.ReadAll(r)
	if err != nil {
		return nil, &Error{File: name, Reason: "read: " + err.Error()}
	}
	return parseBytes(raw, name, opt)
}

// Open loads "embedded:NAME" (see Embedded) or a file path.
func Open(spec string, opt Options) (*Dataset, error) {
	if name, ok := strings.CutPrefix(spec, embeddedPrefix); ok {
		return openEmbedded(name, opt)
	}
	if spec == "" {
		return nil, &Error{File: spec, Reason: "no dataset given: name a file or " + DefaultDataset}
	}
	return LoadFile(spec, opt)
}

// maxText bounds the decompressed size, so that a small malicious .gz cannot
// exhaust memory.
const maxText = 8 << 30

func parseBytes(raw []byte, name string, opt Options) (*Dataset, error) {
	sum := sha256.Sum256(raw)
	text := raw
	if isGzip(text) {
		var err error
		if text, err = gunzip(text); err != nil {
			return nil, &Error{File: name, Reason: "gzip: " + err.Error()}
		}
		if isGzip(text) {
			return nil, &Error{File: name, Reason: "gzip inside gzip: decompress the file once first"}
		}
	}
	if len(text) >= 2 && (text[0] == 0xff && text[1] == 0xfe || text[0] == 0xfe && text[1] == 0xff) {
		return nil, &Error{File: name, Line: 1, Reason: "UTF-16 text: save the file as UTF-8"}
	}
	text = bytes.TrimPrefix(text, []byte("\xef\xbb\xbf"))

	layout := opt.Layout
	if layout == "" {
		var err *Error
		if layout, err = detect(text, name); err != nil {
			return nil, err
		}
	}
	var (
		bl  *builder
		err error
	)
	switch layout {
	case LayoutCSV:
		bl, err = parseHeaderCSV(text, name, opt, ',', nil)
	case LayoutBinanceArchive:
		bl, err = parseHeaderCSV(text, name, opt, ',', nil)
	case LayoutCSVSemicolon:
		bl, err = parseHeaderCSV(text, name, opt, ';', &semicolonNumbers{})
	case LayoutBinanceArchiveNoHeader:
		bl, err = parseBinanceNoHeader(text, name, opt)
	case LayoutLEANCSV:
		bl, err = parseLEAN(text, name, opt)
	case LayoutFreqtradeJSON, LayoutBinanceKlinesJSON, layoutJSON:
		bl, layout, err = parseJSON(text, name, opt, layout)
	default:
		return nil, &Error{File: name, Reason: "unknown layout " + quote(layout) + " (Options.Layout): use one of " +
			strings.Join(Layouts(), ", ")}
	}
	if err != nil {
		return nil, err
	}
	d := &Dataset{Bars: bl.bars}
	d.Info = Info{
		Name: name, Layout: layout, SHA256: hex.EncodeToString(sum[:]),
		DroppedNaN: bl.dropped, SourceBars: bl.bars.Len(),
	}
	d.Info.setStats(&d.Bars)
	return d, nil
}

func isGzip(b []byte) bool { return len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b }

func gunzip(b []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	// The gzip trailer holds the uncompressed size mod 2^32 (of the last
	// member): a good first guess for the buffer, unless it is more than
	// deflate's best ratio (about 1032:1) allows, as in a damaged file.
	guess := int(binary.LittleEndian.Uint32(b[len(b)-4:])) + bytes.MinRead
	if guess > 1<<30 || guess > 1032*len(b)+bytes.MinRead || guess < len(b) {
		guess = 4 * len(b)
	}
	var out bytes.Buffer
	out.Grow(guess)
	n, err := out.ReadFrom(io.LimitReader(zr, maxText+1))
	if err != nil {
		return nil, err
	}
	if n > maxText {
		return nil, errTooLarge
	}
	return out.Bytes(), nil
}

type constError string

func (e constError) Error() string { return string(e) }

const errTooLarge = constError("decompressed data larger than 8 GiB")
