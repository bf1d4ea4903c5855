package common

import (
	"os"
	"path/filepath"
	"testing"
)

func TestShortPath(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	long := "/check/work/main/testdata/data/binance_archive_FILUSDT-1m-2023-08_head.csv"
	cases := []struct {
		in   string
		max  int
		want string
	}{
		{"embedded:filusdt-1m", 40, "embedded:filusdt-1m"},
		{"embedded:btcusdt-1m[:5000]", 20, "embedded:btcusdt-1m[:5000]"}, // never elided

		{"bars.csv", 40, "bars.csv"},
		{filepath.Join(wd, "x", "bars.csv"), 40, "x/bars.csv"}, // under the working directory
		{long, 100, long},
		// 60 cells: the base name (43) whole, "..." and "/" (4), the first 13 runes of the directories.
		{long, 60, "/check/work/m.../binance_archive_FILUSDT-1m-2023-08_head.csv"},
		{long, 30, "binance_archiv...3-08_head.csv"}, // the base name's own middle
		{long, 7, "binance"},
		{long, 3, "bin"},
	}
	for _, c := range cases {
		got := ShortPath(c.in, c.max)
		if got != c.want {
			t.Errorf("ShortPath(%q, %d) = %q, want %q", c.in, c.max, got, c.want)
		}
		if c.max > 0 && len([]rune(got)) > c.max && got != c.in {
			t.Errorf("ShortPath(%q, %d) is %d runes", c.in, c.max, len([]rune(got)))
		}
	}
}
