package data

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"io"
	"strings"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// The embedded sample datasets: the product runs with no file at hand.
// Where they come from is in embedded/SOURCES.md. Each ships twice: its
// source (.csv.gz, what Info.SHA256 hashes and what a load with other
// Options parses) and its parsed form under the default Options (.bars.zst,
// parsed.go, compressed), which a default load reads instead of parsing. `go generate`
// writes the .bars.zst files from the sources (internal/genembedded);
// TestEmbeddedParsedCurrent fails when one is stale. The whole folder is
// embedded so that a missing .bars.zst is a miss, not a build failure.
//
//go:generate go run ./internal/genembedded
//go:embed embedded
var embeddedFS embed.FS

const embeddedPrefix = "embedded:"

// DefaultDataset is the dataset the product opens when none is named.
const DefaultDataset = embeddedPrefix + "filusdt-1m"

// EmbeddedInfo describes one embedded dataset.
type EmbeddedInfo struct {
	Name        string // open it as "embedded:" + Name
	Description string
	Bars        int
}

type embeddedEntry struct {
	EmbeddedInfo
	file string // the source, in embeddedFS
}

// parsed is the file of the entry's parsed form in embeddedFS: the
// source's name with .bars.zst for .csv.gz, the parsed form compressed
// with zstd (a quarter of its 48 bytes a bar in the binary and the
// repository; decoded at about a gigabyte a second).
func (e embeddedEntry) parsed() string { return strings.TrimSuffix(e.file, ".csv.gz") + ".bars.zst" }

// embeddedSets is in the order Embedded reports, the default first. Bars
// are checked against the files by the tests.
var embeddedSets = []embeddedEntry{
	{EmbeddedInfo{"filusdt-1m", "FIL/USDT 1-minute bars, Binance, 2023-08-01 00:00 .. 2023-11-30 23:59 UTC, gap-free", 175680},
		"embedded/filusdt_1m_2023-08_2023-11.csv.gz"},
	{EmbeddedInfo{"btcusdt-1m", "BTC/USDT 1-minute bars, Binance, 2025-06-01 17:23 .. 2025-07-01 17:30 UTC, gap-free", 43208},
		"embedded/btcusdt_1m_2025-06.csv.gz"},
}

// Embedded lists the embedded datasets, the default (filusdt-1m) first.
func Embedded() []EmbeddedInfo {
	out := make([]EmbeddedInfo, len(embeddedSets))
	for i, e := range embeddedSets {
		out[i] = e.EmbeddedInfo
	}
	return out
}

// openEmbedded loads an embedded dataset by name (without the prefix).
// Info.Name is "embedded:NAME" and Info.Path is "". The source is hashed
// (1.3 ms for the FIL set) and its parsed form read when it was made from
// these bytes with these Options; otherwise the source is parsed, through
// the cache (CacheDir) like a file.
func openEmbedded(name string, opt Options) (*Dataset, error) {
	spec := embeddedPrefix + name
	e, err := embeddedEntryOf(name)
	if err != nil {
		return nil, err
	}
	lim, err := opt.Limits.resolve()
	if err != nil {
		return nil, &Error{File: spec, Reason: err.Error()}
	}
	opt.Limits = lim
	f, err := embeddedFS.Open(e.file)
	if err != nil {
		return nil, &Error{File: spec, Reason: err.Error()}
	}
	h := sha256.New()
	_, err = io.Copy(h, f)
	f.Close()
	if err != nil {
		return nil, &Error{File: spec, Reason: err.Error()}
	}
	k := newCacheKey(sumOf(h), spec, "", opt)
	if d := readEmbeddedParsed(e, k.digest()); d != nil && d.Info.SHA256 == k.source {
		return d, nil
	}
	return loadCached(CacheDir(), k, func() (*Dataset, error) { return parseEmbedded(e, opt) })
}

// embeddedEntryOf finds the embedded dataset name (without the prefix).
func embeddedEntryOf(name string) (embeddedEntry, error) {
	for _, e := range embeddedSets {
		if e.Name == name {
			return e, nil
		}
	}
	names := make([]string, len(embeddedSets))
	for i, e := range embeddedSets {
		names[i] = embeddedPrefix + e.Name
	}
	return embeddedEntry{}, &Error{File: embeddedPrefix + name, Reason: "no such embedded dataset: use one of " + strings.Join(names, ", ")}
}

// parseEmbedded parses an embedded dataset's source.
func parseEmbedded(e embeddedEntry, opt Options) (*Dataset, error) {
	spec := embeddedPrefix + e.Name
	f, err := embeddedFS.Open(e.file)
	if err != nil {
		return nil, &Error{File: spec, Reason: err.Error()}
	}
	defer f.Close()
	return Parse(f, spec, opt)
}

// readEmbeddedParsed reads the parsed form shipped for e when it is stored
// under key; nil otherwise.
func readEmbeddedParsed(e embeddedEntry, key [32]byte) *Dataset {
	z, err := embeddedFS.ReadFile(e.parsed())
	if err != nil {
		return nil
	}
	raw, err := zstdDecoder().DecodeAll(z, nil)
	if err != nil {
		return nil
	}
	return readParsed(bytes.NewReader(raw), int64(len(raw)), key)
}

// zstdDecoder is one decoder for the process (it is safe for concurrent
// DecodeAll), single-threaded: the forms are a few megabytes.
var zstdDecoder = sync.OnceValue(func() *zstd.Decoder {
	d, _ := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	return d
})

// compressParsed is the shipped form of a parsed form: zstd, its content
// size in the frame.
func compressParsed(form []byte) []byte {
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBetterCompression), zstd.WithEncoderConcurrency(1))
	defer enc.Close()
	return enc.EncodeAll(form, nil)
}

// embeddedDefaults are the Options the embedded sets ship parsed with:
// Options{} under the default Limits (a load under limits raised or
// lowered through the environment parses the source).
var embeddedDefaults = Options{Limits: Limits{MaxBytes: DefaultMaxBytes, MaxLine: DefaultMaxLine,
	MaxFields: DefaultMaxFields, MaxFiles: DefaultMaxFiles, MaxBlankLines: DefaultMaxBlankLines}}

// EmbeddedParsed parses the source of the embedded dataset name (without
// "embedded:") with the default Options and returns its parsed form and
// the file it ships in, relative to this package's folder (e.g.
// "embedded/filusdt_1m_2023-08_2023-11.bars.zst"): what `go generate` writes
// there. It never reads the parsed form it replaces.
func EmbeddedParsed(name string) (file string, form []byte, err error) {
	e, err := embeddedEntryOf(name)
	if err != nil {
		return "", nil, err
	}
	d, err := parseEmbedded(e, embeddedDefaults)
	if err != nil {
		return "", nil, err
	}
	k := newCacheKey(d.Info.SHA256, embeddedPrefix+name, "", embeddedDefaults)
	return e.parsed(), compressParsed(encodeParsed(d, k.digest())), nil
}
