package data

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestEmbedded(t *testing.T) {
	list := Embedded()
	want := []struct {
		name string
		bars int
		sha  string // sha256sum of the file in engine/data/embedded
	}{
		{"filusdt-1m", 175680, "bd4d721e65d23cb1fbcb4211418d01ea0c332975d6643b4fa20f169a69aef02f"},
		{"btcusdt-1m", 43208, "384c11bd0227c7bf0f1ad35461e8b48f6e69f81d597c1b859e723144c3636988"},
	}
	if len(list) != len(want) {
		t.Fatalf("%d embedded datasets, want %d", len(list), len(want))
	}
	if DefaultDataset != "embedded:"+list[0].Name {
		t.Errorf("DefaultDataset %q is not the first embedded set %q", DefaultDataset, list[0].Name)
	}
	for i, w := range want {
		e := list[i]
		if e.Name != w.name || e.Bars != w.bars || e.Description == "" {
			t.Errorf("entry %d: %+v, want %s %d", i, e, w.name, w.bars)
		}
		d, err := Open("embedded:"+e.Name, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if d.Info.Bars != w.bars || d.Info.SHA256 != w.sha || d.Info.Name != "embedded:"+w.name || d.Info.Path != "" {
			t.Errorf("%s: info %+v", e.Name, d.Info)
		}
	}
}

func TestOpenErrors(t *testing.T) {
	tests := []struct{ spec, want string }{
		{"embedded:nope", "embedded:nope: no such embedded dataset: use one of embedded:filusdt-1m, embedded:btcusdt-1m"},
		{"", ": no dataset given: name a file or embedded:filusdt-1m"},
	}
	for _, tc := range tests {
		_, err := Open(tc.spec, Options{})
		var de *Error
		if !errors.As(err, &de) || err.Error() != tc.want {
			t.Errorf("Open(%q): %v, want %s", tc.spec, err, tc.want)
		}
	}
	if _, err := Open(testdata+"no-such-file.csv", Options{}); err == nil || !strings.Contains(err.Error(), "no-such-file.csv") {
		t.Errorf("missing file: %v", err)
	}
}

func TestSupportedExtensions(t *testing.T) {
	if got := strings.Join(SupportedExtensions(), " "); got != ".csv .json .gz .zip .txt .parquet .feather .arrow" {
		t.Errorf("SupportedExtensions() = %s", got)
	}
	if got := len(Layouts()); got != 10 {
		t.Errorf("%d layouts", got)
	}
}

// TestEmbeddedParsedCurrent fails when an embedded set's parsed form
// (embedded/*.bars) is not what its source parses to today: every bar bit
// for bit and every Info field, under the key of the source's bytes. Run
// `CGO_ENABLED=0 go generate ./engine/data` and commit the .bars files.
func TestEmbeddedParsedCurrent(t *testing.T) {
	for _, e := range embeddedSets {
		t.Run(e.Name, func(t *testing.T) {
			const regenerate = ": run `CGO_ENABLED=0 go generate ./engine/data` and commit engine/data/embedded/*.bars.zst"
			want, err := parseEmbedded(e, embeddedDefaults)
			if err != nil {
				t.Fatal(err)
			}
			k := newCacheKey(want.Info.SHA256, embeddedPrefix+e.Name, "", embeddedDefaults)
			got := readEmbeddedParsed(e, k.digest())
			if got == nil {
				t.Fatalf("%s is missing, damaged or made from other bytes, Options or loader version"+regenerate, e.parsed())
			}
			sameDataset(t, e.parsed()+" is stale"+regenerate, want, got)
			file, form, err := EmbeddedParsed(e.Name)
			if err != nil {
				t.Fatal(err)
			}
			// The content, not the zstd bytes (which a module update may
			// change for the same content).
			shipped, err := embeddedFS.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			a, err1 := zstdDecoder().DecodeAll(shipped, nil)
			b, err2 := zstdDecoder().DecodeAll(form, nil)
			if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
				t.Fatalf("%s differs from what go generate writes today (%v, %v)"+regenerate, file, err1, err2)
			}
		})
	}
}

// TestEmbeddedServedParsed: a default load of an embedded set reads its
// parsed form (nothing is parsed, so nothing is cached); a load with
// other Options or limits parses the source through the cache.
func TestEmbeddedServedParsed(t *testing.T) {
	cache := t.TempDir()
	t.Setenv(EnvCacheDir, cache)
	for _, e := range embeddedSets {
		if _, err := Open(embeddedPrefix+e.Name, Options{}); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(entries(t, cache)); n != 0 {
		t.Fatalf("%d entries: a default load parsed", n)
	}
	if _, err := Open(DefaultDataset, Options{LEANAsset: "crypto"}); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvMaxLine, "2MiB")
	if _, err := Open(DefaultDataset, Options{}); err != nil {
		t.Fatal(err)
	}
	if n := len(entries(t, cache)); n != 2 {
		t.Fatalf("%d entries, want one per other option", n)
	}
}
