package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutputsCannotDestroyData: --out refuses, before anything is
// computed, the sessions database, the input file and a missing directory
// (exit 1, saying so), and a report replaces an existing file only once it
// is complete.
func TestOutputsCannotDestroyData(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	small := []string{"--data", "embedded:btcusdt-1m", "--head", "3000", "--hma", "10:20:10", "--hma3", "12:24:12",
		"--backend", "reference", "-q", "--format", "csv", "--db", db}
	if _, _, err := execute(t, append([]string{"run"}, small...)...); err != "" {
		t.Fatal(err)
	}
	before, rerr := os.ReadFile(db)
	if rerr != nil {
		t.Fatal(rerr)
	}
	csvIn := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(csvIn, []byte("open_time,open,high,low,close,volume\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		says string
	}{
		{append([]string{"run", "--out", db}, small...), "is the sessions database: refusing to overwrite it"},
		{[]string{"run", "--data", csvIn, "--out", csvIn, "--no-save"}, "is the input data: refusing to overwrite it"},
		{append([]string{"run", "--out", filepath.Join(dir, "nope", "r.csv")}, small...), "the directory " + filepath.Join(dir, "nope") + " does not exist"},
		{[]string{"sessions", "export", "1", "--db", db, "--out", db}, "is the sessions database: refusing to overwrite it"},
		{[]string{"run", "--out", dir, "--no-save"}, "is a directory"},
	} {
		out, _, err := execute(t, c.args...)
		if !strings.Contains(err, c.says) || out != "" {
			t.Errorf("%v: err %q, %d bytes on stdout; want a refusal saying %q", c.args, err, len(out), c.says)
		}
	}
	if after, _ := os.ReadFile(db); !bytes.Equal(before, after) {
		t.Error("the sessions database changed")
	}
	if list, _, err := execute(t, "sessions", "ls", "--db", db); err != "" || strings.Count(list, "\n") != 2 {
		t.Errorf("sessions after the refusals: %q %s (want the one saved)", list, err)
	}
	// A report replaces an existing file, whole.
	target := filepath.Join(dir, "r.csv")
	os.WriteFile(target, []byte("old"), 0o644)
	want, _, _ := execute(t, append([]string{"run", "--no-save"}, small...)...)
	if _, _, err := execute(t, append([]string{"run", "--no-save", "--out", target}, small...)...); err != "" {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(target); string(got) != want {
		t.Errorf("--out wrote %d bytes, want the %d of stdout", len(got), len(want))
	}
	if tmp, _ := filepath.Glob(filepath.Join(dir, ".r.csv*")); len(tmp) != 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
}

// TestOutUnwritable: a report that cannot be created in --out's directory
// (not writable) goes to stdout, and the command still fails (exit 1), so
// that a script notices. Root writes anywhere: skipped as root.
func TestOutUnwritable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("as root every directory is writable")
	}
	dir := t.TempDir()
	os.Chmod(dir, 0o555)
	defer os.Chmod(dir, 0o755)
	out, _, err := execute(t, "run", "--data", "embedded:btcusdt-1m", "--head", "3000", "--hma", "10:20:10", "--hma3", "12:24:12",
		"--backend", "reference", "--no-save", "-q", "--format", "csv", "--out", filepath.Join(dir, "r.csv"))
	if !strings.Contains(err, "--out ") || !strings.Contains(err, "the report went to stdout") || strings.Count(out, "\n") != 1+2*4 {
		t.Errorf("err %q; stdout %d lines", err, strings.Count(out, "\n"))
	}
}
