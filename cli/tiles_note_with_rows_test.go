package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sweepbench/engine"
)

// TestTilesNoteWithRows: a study that ran in tiles says so on stderr when
// its results go to a rows file (CSV), which carries no note; the CSV is
// the untiled study's byte for byte.
func TestTilesNoteWithRows(t *testing.T) {
	dir := t.TempDir()
	args := func(out string) []string {
		return []string{"run", "--no-save", "--data", "embedded:btcusdt-1m", "--head", "3000", "--hma", "10:60:10", "--hma3", "12:72:12",
			"--backend", "reference", "--format", "csv", "--out", filepath.Join(dir, out)}
	}
	if _, stderr, err := execute(t, args("whole.csv")...); err != "" || strings.Contains(stderr, "tiles") {
		t.Fatalf("untiled: %s %s", err, stderr)
	}
	t.Setenv(engine.SeriesBudgetEnv, "256KiB")
	_, stderr, err := execute(t, args("tiled.csv")...)
	if err != "" || !strings.Contains(stderr, "run in ") || !strings.Contains(stderr, "tiles of the grid") {
		t.Fatalf("tiled: %s; stderr %q: want the tiles named", err, stderr)
	}
	a, _ := os.ReadFile(filepath.Join(dir, "whole.csv"))
	b, _ := os.ReadFile(filepath.Join(dir, "tiled.csv"))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Errorf("the tiled CSV (%d bytes) differs from the untiled one (%d bytes)", len(b), len(a))
	}
}
