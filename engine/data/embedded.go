package data

import (
	"embed"
	"strings"
)

// The embedded sample datasets: the product runs with no file at hand.
// Where they come from is in embedded/SOURCES.md.
//
//go:embed embedded/filusdt_1m_2023-08_2023-11.csv.gz embedded/btcusdt_1m_2025-06.csv.gz
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
	file string
}

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
// Info.Name is "embedded:NAME" and Info.Path is "".
func openEmbedded(name string, opt Options) (*Dataset, error) {
	spec := embeddedPrefix + name
	for _, e := range embeddedSets {
		if e.Name != name {
			continue
		}
		f, err := embeddedFS.Open(e.file)
		if err != nil {
			return nil, &Error{File: spec, Reason: err.Error()}
		}
		defer f.Close()
		return Parse(f, spec, opt)
	}
	names := make([]string, len(embeddedSets))
	for i, e := range embeddedSets {
		names[i] = embeddedPrefix + e.Name
	}
	return nil, &Error{File: spec, Reason: "no such embedded dataset: use one of " + strings.Join(names, ", ")}
}
