package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
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

// TestSuiteParquetMetadata: a suite's Parquet file says at the top what the
// datasets share and the suite's overall verdict, and per dataset its own
// name, hash, bars and runs (the top level described the first dataset
// only: fresh-user trial).
func TestSuiteParquetMetadata(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "suite.parquet")
	js := filepath.Join(dir, "suite.json")
	for _, a := range [][]string{{"--format", "parquet", "--out", out}, {"--format", "json", "--out", js}} {
		args := append(append([]string{"run", "--no-save"}, a...), suiteFlags...)
		if _, stderr, err := execute(t, args...); err != "" {
			t.Fatalf("%s\n%s", err, stderr)
		}
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	rows, md := parquetRows(t, b)
	var doc struct {
		Datasets []struct {
			Dataset struct {
				Name   string `json:"name"`
				SHA256 string `json:"sha256"`
				Bars   int    `json:"bars"`
			} `json:"dataset"`
		} `json:"datasets"`
		Parity struct {
			Overall struct{ Verdict string } `json:"overall"`
		} `json:"parity"`
	}
	raw, _ := os.ReadFile(js)
	if err := json.Unmarshal(raw, &doc); err != nil || len(doc.Datasets) != 2 {
		t.Fatalf("%v: %d datasets", err, len(doc.Datasets))
	}
	var per []map[string]string
	if err := json.Unmarshal([]byte(md["suite_per_dataset"]), &per); err != nil || len(per) != 2 {
		t.Fatalf("suite_per_dataset %q: %v", md["suite_per_dataset"], err)
	}
	for d, p := range per {
		w := doc.Datasets[d].Dataset
		if p["dataset"] != w.Name || p["dataset_sha256"] != w.SHA256 || p["bars"] != strconv.Itoa(w.Bars) || !strings.Contains(p["runs"], "fp64 reference") {
			t.Errorf("dataset %d: %v, want %s %s %d bars", d+1, p, w.Name, w.SHA256, w.Bars)
		}
	}
	if _, ok := md["dataset"]; ok || md["parity_verdict"] != doc.Parity.Overall.Verdict || md["complete"] != "true" || md["hma"] != "10:30:10" {
		t.Errorf("top-level metadata: dataset %q, verdict %q (want %q), complete %q, hma %q", md["dataset"], md["parity_verdict"], doc.Parity.Overall.Verdict, md["complete"], md["hma"])
	}
	if len(rows) != 2*2*3*6 {
		t.Errorf("%d rows, want 2 datasets x 2 precisions x 18 combos", len(rows))
	}
}
