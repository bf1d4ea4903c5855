package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestIndentWriter: newlines become newline+prefix, a last one is dropped,
// whatever the chunks' boundaries.
func TestIndentWriter(t *testing.T) {
	for _, chunks := range [][]string{
		{"{\n  \"a\": 1\n}\n"},
		{"{", "\n", "  \"a\": 1", "\n}", "\n"},
		{"{\n", "  \"a\": 1\n", "}\n"},
	} {
		var b bytes.Buffer
		w := &indentWriter{w: &b, prefix: []byte(">>")}
		for _, c := range chunks {
			if n, err := w.Write([]byte(c)); n != len(c) || err != nil {
				t.Fatalf("Write(%q) = %d, %v", c, n, err)
			}
		}
		if want := "{\n>>  \"a\": 1\n>>}"; b.String() != want {
			t.Errorf("%q: got %q, want %q", chunks, b.String(), want)
		}
	}
}

// TestSuiteJSONIsIndented: the streamed suite document (each dataset's
// report written into it as it is, robustness included) is byte for byte
// the document encoding/json indents from its own compact form, so it reads
// as one document indented throughout and parses.
func TestSuiteJSONIsIndented(t *testing.T) {
	out := filepath.Join(t.TempDir(), "suite.json")
	args := append([]string{"run", "--format", "json", "--out", out, "--no-save", "--wf", "rolling:2"}, suiteFlags...)
	if _, stderr, err := execute(t, args...); err != "" {
		t.Fatalf("%s\n%s", err, stderr)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var compact, want bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if err := json.Indent(&want, compact.Bytes(), "", "  "); err != nil {
		t.Fatal(err)
	}
	want.WriteByte('\n')
	if !bytes.Equal(raw, want.Bytes()) {
		i := 0
		for i < len(raw) && i < want.Len() && raw[i] == want.Bytes()[i] {
			i++
		}
		t.Fatalf("differs from its indented form at byte %d: %q vs %q", i, raw[max(0, i-40):min(len(raw), i+40)], want.Bytes()[max(0, i-40):min(want.Len(), i+40)])
	}
	var doc struct {
		Datasets []struct {
			Robustness struct {
				PBO *float64 `json:"pbo"`
			} `json:"robustness"`
		} `json:"datasets"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil || len(doc.Datasets) != 2 || doc.Datasets[1].Robustness.PBO == nil {
		t.Fatalf("%v: %d datasets, robustness %+v", err, len(doc.Datasets), doc.Datasets)
	}
}

// TestSuiteRunsApart: the same suite run twice saves two runs of it (one
// suite id, two run names); `sessions show` of a dataset of the second
// names its place, the suite, the run and the session of the run's other
// dataset, not the first run's.
func TestSuiteRunsApart(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	args := append([]string{"run", "--db", db}, suiteFlags...)
	for range 2 {
		if _, stderr, err := execute(t, args...); err != "" {
			t.Fatalf("%s\n%s", err, stderr)
		}
	}
	out, stderr, err := execute(t, "--db", db, "sessions", "show", "3")
	if err != "" {
		t.Fatalf("%s\n%s", err, stderr)
	}
	m := regexp.MustCompile(`(?m)^suite   dataset 1 of 2 of suite ([0-9a-f]{12}), run (r[0-9a-f]{8}); dataset 2 session (\d+) `).FindStringSubmatch(out)
	if m == nil || m[3] != "4" {
		t.Fatalf("show 3: %v\n%s", m, out)
	}
	first, _, _ := execute(t, "--db", db, "sessions", "show", "1")
	if !strings.Contains(first, "of suite "+m[1]+", run ") || strings.Contains(first, m[2]) || !strings.Contains(first, "dataset 2 session 2 ") {
		t.Fatalf("show 1 (the first run):\n%s", first)
	}
}
