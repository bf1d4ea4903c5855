//go:build unix

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sweepbench/engine/data"
)

// TestEscapesFromOutside: a data file whose name holds a window-title
// sequence (ESC ]0;pwned BEL) and a colour (ESC [31m), with a header
// column holding an erase-screen, run through `run` (the table), then
// `sessions ls` and `sessions show` (table and JSON), and a broken file of
// such a name through the error path, all as the binary writes them: no
// ESC or BEL byte reaches stdout or stderr, and the name shows escaped
// (\x1b]0;pwned\x07) where the file is named; `sessions ls` keeps its
// columns aligned.
func TestEscapesFromOutside(t *testing.T) {
	dir := t.TempDir()
	name := "ev\x1b]0;pwned\x07il\x1b[31m.csv"
	shown := `ev\x1b]0;pwned\x07il\x1b[31m.csv`
	if data.Sanitize(name) != shown {
		t.Fatalf("Sanitize(%q) = %q", name, data.Sanitize(name))
	}
	raw := readGunzip(t, filepath.Join("..", "testdata", "data", "binance_archive_FILUSDT-1m-2023-08_head.csv"))
	lines := strings.SplitAfter(string(raw), "\n")
	body := strings.Replace(lines[0], "ignore", "ign\x1b[2Jore", 1) + strings.Join(lines[1:400], "")
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	dbDir := filepath.Join(dir, "db\x1b[31m")
	os.Mkdir(dbDir, 0o755)
	db := filepath.Join(dbDir, "sessions.db")

	clean := func(what string, r result) {
		t.Helper()
		for _, s := range []string{r.stdout, r.stderr} {
			if i := strings.IndexAny(s, "\x1b\x07"); i >= 0 {
				t.Errorf("%s: raw %q at byte %d:\n%s", what, s[i], i, s)
			}
		}
	}
	run := cliProcess(t, dir, nil, "run", "--data", p, "--db", db, "--hma", "10:20:10", "--hma3", "12:24:12", "--backend", "reference")
	clean("run", run)
	if run.code != 0 || !strings.HasPrefix(run.stdout, "data    "+filepath.Dir(p)+"/"+shown+": 399 bars ") ||
		!strings.Contains(run.stderr, `db\x1b[31m/sessions.db`) {
		t.Fatalf("run: %+v", run)
	}

	ls := cliProcess(t, dir, nil, "sessions", "ls", "--db", db)
	clean("sessions ls", ls)
	rows := strings.Split(ls.stdout, "\n")
	if ls.code != 0 || len(rows) < 2 || !strings.Contains(rows[1], shown) {
		t.Fatalf("sessions ls: %+v", ls)
	}
	if h, r := strings.Index(rows[0], "GRID"), strings.Index(rows[1], "10:20:10 x 12:24:12"); h != r {
		t.Errorf("sessions ls: GRID at %d, the grid at %d:\n%s", h, r, ls.stdout)
	}

	show := cliProcess(t, dir, nil, "sessions", "show", "1", "--db", db)
	clean("sessions show", show)
	if show.code != 0 || !strings.Contains(show.stdout, "\ndata    "+filepath.Dir(p)+"/"+shown+": 399 bars ") {
		t.Fatalf("sessions show: %+v", show)
	}
	js := cliProcess(t, dir, nil, "sessions", "show", "1", "--db", db, "--format", "json")
	clean("sessions show --format json", js)
	if js.code != 0 || !strings.Contains(js.stdout, `ev\u001b]0;pwned\u0007il\u001b[31m.csv`) {
		t.Fatalf("sessions show --format json: %+v", js)
	}

	// The error path: the name, a header and a field quoted.
	bad := filepath.Join(dir, "bad\x1b[31m.csv")
	os.WriteFile(bad, []byte("when\x1b]0;x\x07,open,high,low,close\n1,1,1,1,1\n"), 0o644)
	fail := cliProcess(t, dir, nil, "run", "--data", bad, "--no-save")
	clean("a refused file", fail)
	if fail.code != 1 || !strings.Contains(fail.stderr, `bad\x1b[31m.csv: line 1: no timestamp column`) ||
		!strings.Contains(fail.stderr, `found: when\x1b]0;x\x07, open`) {
		t.Errorf("a refused file: %+v", fail)
	}
}
