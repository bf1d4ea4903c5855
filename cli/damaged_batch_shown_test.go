//go:build unix

package cli

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestSessionsKeepHowDataWasRead: a session of a LEAN file read as equity
// shows the same data line (scale, zone, the bars/year rule) from the
// database; a session on a folder of files resumes while the files are
// unchanged and is refused once a file is added (the manifest's hash).
// TestDamagedBatchShown: `sessions show` and `export` of a session one of
// whose stored batches was damaged (cut short in the file) fail, naming
// the session, the run and the batch, and say what to do; `ls` still
// lists the session.
func TestDamagedBatchShown(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "sessions.db")
	if r := cli(t, dir, "run", "--db", db, "-q", "--data", "embedded:btcusdt-1m", "--head", "2000",
		"--hma", "10:50:10", "--hma3", "12:48:12", "--backend", "reference", "--precision", "fp64"); r.code != 0 {
		t.Fatalf("run: %+v", r)
	}
	raw, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var first int
	if err := raw.QueryRow(`SELECT min(first_idx) FROM result_batches`).Scan(&first); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`UPDATE result_batches SET data = substr(data, 1, length(data) - 8) WHERE first_idx = ?`, first); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"show", "1"}, {"export", "1", "--format", "csv"}} {
		r := cli(t, dir, append(append([]string{"sessions"}, args...), "--db", db)...)
		want := "session 1, run 1:fp64: the saved batch of"
		if r.code == 0 || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, fmt.Sprintf("from combo %d cannot be read (it ends early)", first)) ||
			!strings.Contains(r.stderr, "sweepbench sessions rm 1") {
			t.Errorf("%v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
	if r := cli(t, dir, "sessions", "ls", "--db", db); r.code != 0 || !strings.Contains(r.stdout, "complete") {
		t.Errorf("ls: %+v", r)
	}
}
