package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"sweepbench/engine"
	"sweepbench/reference"
)

// TestRunCSVInProcess: `run --format csv` prints what the engine's
// RunStudy of the same Spec writes, and `sessions export` of the saved
// session prints the same bytes (show and export read what run saved).
func TestRunCSVInProcess(t *testing.T) {
	db := filepath.Join(t.TempDir(), "sessions.db")
	args := []string{"run", "--data", "embedded:btcusdt-1m", "--head", "3000", "--hma", "10:30:10", "--hma3", "12:36:12",
		"--backend", "reference", "--format", "csv", "-q", "--db", db}
	out, _, err := execute(t, args...)
	if err != "" {
		t.Fatal(err)
	}
	spec := engine.DefaultSpec()
	spec.Data, spec.Head, spec.HMA, spec.HMA3, spec.Backend = "embedded:btcusdt-1m", 3000, "10:30:10", "12:36:12", "reference"
	reg := &engine.Registry{}
	reg.Register(reference.New())
	st, serr := spec.Build(reg)
	if serr != nil {
		t.Fatal(serr)
	}
	rep, rerr := engine.RunStudy(context.Background(), st, engine.StudyOptions{})
	if rerr != nil {
		t.Fatal(rerr)
	}
	var want bytes.Buffer
	if err := rep.WriteCSV(&want); err != nil {
		t.Fatal(err)
	}
	if out != want.String() || strings.Count(out, "\n") != 1+2*9 {
		t.Errorf("run's CSV (%d lines) differs from the engine's (%d lines)", strings.Count(out, "\n"), strings.Count(want.String(), "\n"))
	}
	exported, _, err := execute(t, "sessions", "export", "1", "--format", "csv", "--db", db)
	if err != "" {
		t.Fatal(err)
	}
	if exported != out {
		t.Errorf("sessions export differs from run's output:\n%s\nwant:\n%s", exported, out)
	}
}

// TestRunRowFormatsStreamed: `run --format csv|jsonl|parquet --out FILE`
// writes the rows while the study runs; the file is what `sessions
// export` of the saved session writes in the same format (byte for byte
// for CSV and JSON lines, row for row and key for key for Parquet), and
// the CSV is the engine's WriteCSV of the same study (TestRunCSVInProcess).
func TestRunRowFormatsStreamed(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	small := []string{"--data", "embedded:btcusdt-1m", "--head", "3000", "--hma", "10:30:10", "--hma3", "12:36:12",
		"--backend", "reference", "-q", "--db", db}
	for i, f := range []string{"csv", "jsonl", "parquet"} {
		out := filepath.Join(dir, "run."+f)
		if _, _, err := execute(t, append([]string{"run", "--format", f, "--out", out}, small...)...); err != "" {
			t.Fatalf("%s: %s", f, err)
		}
		exp := filepath.Join(dir, "export."+f)
		id := strconv.Itoa(i + 1)
		if _, _, err := execute(t, "sessions", "export", id, "--format", f, "--out", exp, "--db", db); err != "" {
			t.Fatalf("export %s: %s", f, err)
		}
		got, _ := os.ReadFile(out)
		want, _ := os.ReadFile(exp)
		if len(got) == 0 {
			t.Fatalf("%s: empty", f)
		}
		if f != "parquet" {
			if !bytes.Equal(got, want) {
				t.Errorf("%s: run's file (%d bytes) differs from the export's (%d bytes)", f, len(got), len(want))
			}
			continue
		}
		gr, gm := parquetRows(t, got)
		wr, wm := parquetRows(t, want)
		if len(gr) != 18 || !reflect.DeepEqual(gr, wr) || !reflect.DeepEqual(gm, wm) || gm["parity_verdict"] != "pass" {
			t.Errorf("parquet: run's %d rows %v, the export's %d rows %v", len(gr), gm, len(wr), wm)
		}
	}
}

// parquetRows reads a Parquet file with the module's reader: every row's
// values, and the key/value metadata.
func parquetRows(t *testing.T, b []byte) ([]parquet.Row, map[string]string) {
	t.Helper()
	f, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	meta := map[string]string{}
	for _, kv := range f.Metadata().KeyValueMetadata {
		meta[kv.Key] = kv.Value
	}
	r := parquet.NewReader(f)
	defer r.Close()
	rows := make([]parquet.Row, f.NumRows())
	n, err := r.ReadRows(rows)
	if n != len(rows) || (err != nil && !errors.Is(err, io.EOF)) {
		t.Fatalf("read %d rows of %d: %v", n, len(rows), err)
	}
	return rows, meta
}

// TestFormatsRefused: an unknown --format is refused naming the formats,
// before anything runs.
func TestFormatsRefused(t *testing.T) {
	if _, _, err := execute(t, "run", "--format", "xml", "--no-save"); err != `--format "xml": want table, json, csv, jsonl or parquet` {
		t.Errorf("run: %s", err)
	}
	if _, _, err := execute(t, "sessions", "export", "1", "--format", "table", "--db", filepath.Join(t.TempDir(), "none.db")); err != `--format "table": want csv, json, jsonl or parquet` {
		t.Errorf("export: %s", err)
	}
}
