package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sweepbench/engine/output"
	"sweepbench/sessions"
)

// TestSessionsStrategy: a crossover study saved by `run` is listed with
// its family and grid and its best combo by its parameters, exported a
// band at a time (exportRows by index; 4 combos a band, 3 bands of the 9,
// the last short) with the parameter columns `run` writes (Grid.Columns),
// byte for byte what the report with every result writes, and diffed
// against a z-score study refused naming both families.
func TestSessionsStrategy(t *testing.T) {
	old := exportBand
	exportBand = 4
	t.Cleanup(func() { exportBand = old })
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	if _, _, err := execute(t, "run", "--data", "embedded:btcusdt-1m", "--head", "3000", "--strategy", "cross", "--fast", "ema:5:15:5",
		"--slow", "sma:20:40:10", "--backend", "reference", "-q", "--db", db); err != "" {
		t.Fatal(err)
	}
	if _, _, err := execute(t, "run", "--data", "embedded:btcusdt-1m", "--head", "3000", "--strategy", "zscore", "--param", "length=10:30:10",
		"--precision", "fp64", "--backend", "reference", "-q", "--db", db); err != "" {
		t.Fatal(err)
	}
	st, err := sessions.OpenReadOnly(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rep, err := st.Open(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Grid.Family() != "cross" || rep.Grid.Len() != 9 || len(rep.Runs) != 2 {
		t.Fatalf("grid %s of %d combos, %d runs", rep.Grid.Family(), rep.Grid.Len(), len(rep.Runs))
	}
	ls, _, errOut := execute(t, "sessions", "ls", "--db", db)
	if errOut != "" {
		t.Fatal(errOut)
	}
	ss, err := st.Get(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, label, _, ok := ss.BestLabel(); !ok || label != "fast ema 10, slow sma 30" {
		t.Errorf("best combo %q (%v), want fast ema 10, slow sma 30", label, ok)
	}
	for _, want := range []string{"cross fast ema:5:15:5 x slow sma:20:40:10 (9)", "zscore length 10:30:10 x entry 1.5:3:0.25 x exit 0:1:0.5 (63)",
		"-51.513 (fast ema 10, slow sma 30)"} {
		if !strings.Contains(ls, want) {
			t.Errorf("sessions ls does not say %q:\n%s", want, ls)
		}
	}
	for _, f := range []output.RowFormat{output.RowsCSV, output.RowsJSONL} {
		var want bytes.Buffer
		if err := output.WriteRows(&want, rep, f); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "export."+string(f))
		if _, _, err := execute(t, "sessions", "export", "1", "--format", string(f), "--out", out, "--db", db); err != "" {
			t.Fatalf("export %s: %s", f, err)
		}
		got, _ := os.ReadFile(out)
		if !bytes.Equal(got, want.Bytes()) {
			t.Errorf("%s: the streamed export differs from WriteRows:\n%s\nwant:\n%s", f, got, want.Bytes())
		}
		if f == output.RowsCSV {
			lines := strings.Split(strings.TrimSpace(string(got)), "\n")
			if len(lines) != 1+18 || !strings.Contains(lines[0], "fast_kind,fast,slow_kind,slow,") {
				t.Errorf("csv: %d lines, header %q", len(lines), lines[0])
			}
		}
	}
	_, _, errOut = execute(t, "sessions", "diff", "1", "2", "--db", db)
	if !strings.Contains(errOut, "different strategy families") {
		t.Errorf("diff of a cross and a zscore study: %q, want it refused", errOut)
	}
}
