//go:build unix

package cli

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSessionsShowRefusesEditedRecord: an edit through SQL of what
// `sessions show` prints besides the results (the parity report's verdict,
// its largest dPnL, its flip count, a flip's margin, the study's fee, the
// dataset's name or bar count, the note) makes show, export and diff exit
// 1 naming the part that changed and what to do; show printed the edited
// values with exit 0. ls still lists the session and rm removes it.
func TestSessionsShowRefusesEditedRecord(t *testing.T) {
	for _, c := range []struct{ name, part, sql string }{
		{"verdict", "parity report", `UPDATE parities SET verdict = CASE verdict WHEN 'pass' THEN 'collapse' ELSE 'pass' END`},
		{"max_abs_dpnl_pp", "parity report", `UPDATE parities SET max_abs_dpnl_pp = coalesce(max_abs_dpnl_pp, 0) + 1`},
		{"flip_count", "parity report", `UPDATE parities SET flip_count = flip_count + 1`},
		{"a flip's margin", "parity report", `UPDATE flips SET margin = coalesce(margin, 0) + 0.5 WHERE rank = 0`},
		{"studies.fee", "settings", `UPDATE studies SET fee = fee * 2`},
		{"the dataset's name", "dataset", `UPDATE datasets SET name = 'embedded:other'`},
		{"the dataset's bar count", "dataset", `UPDATE datasets SET bars = bars + 1`},
		{"the note", "note", `UPDATE studies SET note = 'edited'`},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			db := filepath.Join(dir, "sessions.db")
			if r := cli(t, dir, "run", "--db", db, "-q", "--data", "embedded:btcusdt-1m", "--head", "3000",
				"--hma", "10:60:10", "--hma3", "12:48:12", "--wma", "prefix", "--backend", "reference"); r.code != 0 && r.code != 3 {
				t.Fatalf("run: %+v", r)
			}
			if r := cli(t, dir, "sessions", "show", "1", "--db", db); r.code != 0 {
				t.Fatalf("show before the edit: %+v", r)
			}
			raw, err := sql.Open("sqlite", db)
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close()
			var flips int
			if err := raw.QueryRow(`SELECT count(*) FROM flips`).Scan(&flips); err != nil || flips == 0 {
				t.Fatalf("the study has %d flips (%v): want some", flips, err)
			}
			if _, err := raw.Exec(c.sql); err != nil {
				t.Fatal(err)
			}
			want := "sweepbench: session 1: its " + c.part + " does not match the digest saved with it: it was changed or damaged in the database after it was saved, " +
				"so the session is not used (sweepbench sessions rm 1 removes the session; run the study again to compute it anew)\n"
			for _, args := range [][]string{{"show", "1"}, {"show", "1", "--format", "json"}, {"export", "1", "--format", "csv"}, {"diff", "1", "1:fp32"}} {
				r := cli(t, dir, append(append([]string{"sessions"}, args...), "--db", db)...)
				if r.code != 1 || r.stdout != "" || r.stderr != want {
					t.Errorf("%v: %+v, want exit 1 and %q", args, r, want)
				}
			}
			if r := cli(t, dir, "sessions", "ls", "--db", db); r.code != 0 || !strings.Contains(r.stdout, "complete") {
				t.Errorf("ls: %+v", r)
			}
			if r := cli(t, dir, "sessions", "rm", "1", "--db", db); r.code != 0 {
				t.Errorf("rm: %+v", r)
			}
		})
	}
}

// TestSessionsShowSaysWhatIsUnverified: a session saved before record
// digests (digest_version 0, as a session of schema version 11 reads
// after the migration) is shown as before, its edits not caught, and
// show, export and diff say on stderr which of its parts are read
// unverified; a session saved now says nothing of the kind.
func TestSessionsShowSaysWhatIsUnverified(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "sessions.db")
	for i := 0; i < 2; i++ {
		if r := cli(t, dir, "run", "--db", db, "-q", "--data", "embedded:btcusdt-1m", "--head", "2000",
			"--hma", "10:30:10", "--hma3", "12:24:12", "--backend", "reference"); r.code != 0 && r.code != 3 {
			t.Fatalf("run: %+v", r)
		}
	}
	raw, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(`UPDATE studies SET digest_version = 0, settings_digest = NULL, dataset_digest = NULL, note_digest = NULL,
		robustness_digest = NULL, parity_digest = NULL WHERE id = 1`); err != nil {
		t.Fatal(err)
	}
	// The file's record epoch after it, as the migration to v13 records
	// it for a session saved before v12.
	if _, err := raw.Exec(`UPDATE meta SET value = 2 WHERE name = 'record_digests_from'`); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`UPDATE parities SET flip_count = 12345 WHERE study_id = 1`); err != nil {
		t.Fatal(err)
	}
	note := "note: session 1 was saved before sweepbench digested more than its results: its settings, dataset, note, robustness summary, parity report are read unverified\n"
	show := cli(t, dir, "sessions", "show", "1", "--db", db, "--format", "json")
	if show.code != 0 || show.stderr != note || !strings.Contains(show.stdout, `"flip_count": 12345`) {
		t.Errorf("show of the old session: %+v, want its edit shown and %q", show, note)
	}
	for _, args := range [][]string{{"export", "1", "--format", "csv"}, {"diff", "1", "2"}} {
		if r := cli(t, dir, append(append([]string{"sessions"}, args...), "--db", db)...); r.code != 0 || r.stderr != note {
			t.Errorf("%v: %+v, want %q", args, r, note)
		}
	}
	if r := cli(t, dir, "sessions", "show", "2", "--db", db); r.code != 0 || r.stderr != "" {
		t.Errorf("show of a new session: %+v, want nothing on stderr", r)
	}
	// report says so too, on stderr and on the page; ls marks it.
	page := filepath.Join(dir, "s1.html")
	r := cli(t, dir, "sessions", "report", "1", "--db", db, "--out", page)
	if r.code != 0 || !strings.HasPrefix(r.stderr, note) {
		t.Errorf("report of the old session: %+v, want %q on stderr", r, note)
	}
	if html, err := os.ReadFile(page); err != nil || !strings.Contains(string(html), `<p class="note">Unverified: session 1 was saved before sweepbench digested more than its results: its settings, dataset, note, robustness summary, parity report are read unverified.`) {
		t.Errorf("the old session's page does not say what is unverified (%v)", err)
	}
	if r := cli(t, dir, "sessions", "report", "2", "--db", db, "--out", filepath.Join(dir, "s2.html")); r.code != 0 || strings.Contains(r.stderr, "unverified") {
		t.Errorf("report of a new session: %+v, want no unverified note", r)
	}
	if html, err := os.ReadFile(filepath.Join(dir, "s2.html")); err != nil || strings.Contains(string(html), "Unverified") {
		t.Errorf("the new session's page says Unverified (%v)", err)
	}
	ls := cli(t, dir, "sessions", "ls", "--db", db)
	lines := strings.Split(strings.TrimSpace(ls.stdout), "\n")
	if ls.code != 0 || len(lines) != 3 || strings.Contains(lines[1], "[unverified]") || !strings.HasSuffix(lines[2], " [unverified]") {
		t.Errorf("ls: %+v, want session 1 alone marked [unverified]", ls)
	}
}

// TestSessionsDigestsCannotBeTurnedOff, the trial's findings: NULLing a
// run's digest and flipping bits of its results, or setting the session's
// digest_version back to 0 and forging its parity verdict and fee, made
// show print the edits as computed (rc 0; at most a note that the session
// predates the digests). Both are refused now, naming what; a session
// whose digest version is newer than this build's is refused as saved by
// a newer sweepbench.
func TestSessionsDigestsCannotBeTurnedOff(t *testing.T) {
	for _, c := range []struct{ name, sql, want string }{
		{"run digest NULL, results changed", `UPDATE runs SET digest = NULL; UPDATE result_batches SET data = zeroblob(length(data))`,
			"sweepbench: session 1, run 1:fp64: the digest of its saved results is missing, though the session was saved after this database began digesting results: " +
				"it was removed from the database, so they are not used (sweepbench sessions rm 1 removes the session; run the study again to compute it anew)\n"},
		{"digest_version 0, parity and fee forged", `UPDATE studies SET digest_version = 0; UPDATE parities SET verdict = 'collapse', reasons = '["forged"]'; UPDATE studies SET fee = 0.1`,
			"sweepbench: session 1: its digest version reads 0, but the session was saved with record digests: the version was changed in the database after it was saved, " +
				"so its settings, dataset, note, robustness summary, parity report cannot be verified and the session is not used (sweepbench sessions rm 1 removes the session; run the study again to compute it anew)\n"},
		{"digest_version newer", `UPDATE studies SET digest_version = 7`,
			"sweepbench: session 1 was saved by a newer sweepbench (record digest version 7; this one knows 4), so it is not used: read it with that sweepbench or a later one\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			db := filepath.Join(dir, "t6.db")
			if r := cli(t, dir, "run", "--db", db, "-q", "--data", "embedded:btcusdt-1m", "--head", "2000",
				"--hma", "10:30:10", "--hma3", "12:24:12", "--backend", "reference"); r.code != 0 && r.code != 3 {
				t.Fatalf("run: %+v", r)
			}
			raw, err := sql.Open("sqlite", db)
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close()
			if _, err := raw.Exec(c.sql); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{{"show", "1"}, {"export", "1", "--format", "csv"}, {"report", "1", "--out", filepath.Join(dir, "x.html")}} {
				r := cli(t, dir, append(append([]string{"sessions"}, args...), "--db", db)...)
				if r.code != 1 || r.stdout != "" || r.stderr != c.want {
					t.Errorf("%v: %+v, want exit 1 and %q", args, r, c.want)
				}
			}
			if r := cli(t, dir, "sessions", "ls", "--db", db); r.code != 0 || strings.Contains(r.stdout, "unverified") {
				t.Errorf("ls: %+v, want the session listed unmarked", r)
			}
		})
	}
}
