//go:build unix

package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sweepbench/engine"
	"sweepbench/slurm"
)

// fakeSlurmBin puts fake sbatch, scancel, squeue and sacct first on PATH:
// each appends its command line to DIR/calls; sbatch prints ids from 1
// (or fails, as with a partition that does not exist, when
// DIR/sbatch-fails exists),
// squeue prints DIR/queue or, when DIR/down exists, fails as with
// slurmctld down; sacct fails as without accounting.
func fakeSlurmBin(t *testing.T) string {
	t.Helper()
	bin := t.TempDir()
	scripts := map[string]string{
		"sbatch": `if [ -e "$D/sbatch-fails" ]; then echo "sbatch: error: Batch job submission failed: Invalid partition name specified" >&2; exit 1; fi
n=$(($(cat "$D/next" 2>/dev/null || echo 0) + 1)); echo $n >"$D/next"; echo $n`,
		"scancel": `:`,
		"squeue": `if [ -e "$D/down" ]; then echo "slurm_load_jobs error: Unable to contact slurm controller (connect failure)" >&2; exit 1; fi
cat "$D/queue" 2>/dev/null || true`,
		"sacct": `echo "Slurm accounting storage is disabled" >&2; exit 1`,
	}
	for name, body := range scripts {
		sh := "#!/bin/sh\nD=" + bin + "\necho \"" + name + " $*\" >>\"$D/calls\"\n" + body + "\n"
		if err := os.WriteFile(filepath.Join(bin, name), []byte(sh), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return bin
}

// TestSlurmUnknown: with squeue failing and sacct off, slurm status says
// the tasks without a shard are unknown and why, slurm resubmit submits
// nothing and exits 1 naming --force, and --force resubmits them; once
// squeue answers, resubmit acts as before.
func TestSlurmUnknown(t *testing.T) {
	bin := fakeSlurmBin(t)
	xdg, dir := t.TempDir(), filepath.Join(t.TempDir(), "job")
	r := cli(t, xdg, "slurm", "--shards", "3", "--out", dir, "--submit", "--binary", "/opt/sweepbench", "--",
		"--data", "embedded:btcusdt-1m", "--hma", "10:30:10")
	if r.code != 0 || !strings.Contains(r.stdout, "submitted array job 1 (3 tasks) and merge job 2") {
		t.Fatalf("slurm --submit: %+v", r)
	}
	if err := os.WriteFile(filepath.Join(dir, engine.ShardName(0, 3)), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "down"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	calls := func() string { b, _ := os.ReadFile(filepath.Join(bin, "calls")); return string(b) }

	r = cli(t, xdg, "slurm", "status", dir)
	for _, want := range []string{
		"1     -    unknown  missing",
		"1 of 3 shards present, 0 computing; merge job 2: unknown; merged.json not yet",
		"unknown: squeue failed: exit status 1: slurm_load_jobs error: Unable to contact slurm controller (connect failure); " +
			"sacct failed too: exit status 1: Slurm accounting storage is disabled; tasks 1,2 may be running or pending: " +
			"resubmit submits nothing until squeue answers (--force submits them anyway)",
	} {
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Errorf("status lacks %q: %+v", want, r)
		}
	}
	r = cli(t, xdg, "slurm", "resubmit", dir)
	if r.code != 1 || !strings.Contains(r.stderr, "the states of tasks 1,2 are unknown: nothing resubmitted (they may be running or pending") ||
		!strings.Contains(r.stderr, "sweepbench slurm resubmit --force "+dir) {
		t.Errorf("resubmit with squeue down: %+v", r)
	}
	if n := strings.Count(calls(), "sbatch "); n != 2 {
		t.Fatalf("resubmit refused, yet sbatch ran:\n%s", calls())
	}
	r = cli(t, xdg, "slurm", "resubmit", "--force", dir)
	if r.code != 0 || !strings.Contains(r.stdout, "resubmitted tasks 1,2 as array job 3; merge job 4 waits for them") ||
		!strings.Contains(calls(), "scancel 2\nsbatch --parsable --array=1,2 ") {
		t.Fatalf("resubmit --force: %+v\n%s", r, calls())
	}

	// squeue answers: task 2 (of array 3) runs, task 1 failed.
	if err := os.Remove(filepath.Join(bin, "down")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "queue"), []byte("1_0 COMPLETED\n3_1 FAILED\n3_2 RUNNING\n4 PENDING\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = cli(t, xdg, "slurm", "status", dir)
	if r.code != 0 || strings.Contains(r.stdout, "unknown") || !strings.Contains(r.stdout, "1 task failed or never ran: sweepbench slurm resubmit DIR submits them again") {
		t.Errorf("status with squeue up: %+v", r)
	}
	r = cli(t, xdg, "slurm", "resubmit", dir)
	if r.code != 0 || !strings.Contains(r.stdout, "resubmitted task 1 as array job 5; merge job 6 waits for them") {
		t.Errorf("resubmit with squeue up: %+v", r)
	}
}

// TestSlurmNeverSubmitted: slurm status on a folder written without
// --submit says the merge job is not submitted and what submits it;
// on a folder that does not exist, that it does not exist; resubmit
// there, once shards 0 and 1 are computed by hand, submits task 2 alone;
// when sbatch fails, the error names the folder.
func TestSlurmNeverSubmitted(t *testing.T) {
	bin := fakeSlurmBin(t)
	xdg, dir := t.TempDir(), filepath.Join(t.TempDir(), "job")
	r := cli(t, xdg, "slurm", "--shards", "3", "--out", dir, "--binary", "/opt/sweepbench", "--",
		"--data", "embedded:btcusdt-1m", "--hma", "10:30:10")
	if r.code != 0 {
		t.Fatalf("slurm: %+v", r)
	}
	r = cli(t, xdg, "slurm", "status", dir)
	if want := "0 of 3 shards present, 0 computing; merge job: not submitted (sweepbench slurm resubmit DIR submits the array and the merge); merged.json not yet\n"; r.code != 0 || !strings.Contains(r.stdout, want) {
		t.Errorf("status lacks %q: %+v", want, r)
	}
	missing := filepath.Join(t.TempDir(), "nope")
	for _, sub := range []string{"status", "resubmit"} {
		r = cli(t, xdg, "slurm", sub, missing)
		if want := missing + ": the folder does not exist: give the folder sweepbench slurm --out DIR wrote"; r.code != 1 || !strings.Contains(r.stderr, want) {
			t.Errorf("slurm %s on a missing folder: %+v, want %q", sub, r, want)
		}
	}
	// Shards 0 and 1 computed by hand: resubmit submits task 2 alone and the merge.
	for _, k := range []int{0, 1} {
		if err := os.WriteFile(filepath.Join(dir, engine.ShardName(k, 3)), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r = cli(t, xdg, "slurm", "resubmit", dir)
	calls, _ := os.ReadFile(filepath.Join(bin, "calls"))
	if want := "submitted task 2 as array job 1 (the other shards are there); merge job 2 waits for them\n"; r.code != 0 || r.stdout != want ||
		!strings.Contains(string(calls), "sbatch --parsable --array=2 "+filepath.Join(dir, "array.sbatch")) {
		t.Errorf("resubmit of a folder never submitted: %+v, want %q\n%s", r, want, calls)
	}

	// sbatch fails: the error names the folder.
	if err := os.WriteFile(filepath.Join(bin, "sbatch-fails"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, engine.ShardName(0, 3))); err != nil {
		t.Fatal(err)
	}
	r = cli(t, xdg, "slurm", "resubmit", dir)
	if want := "resubmit " + dir + ": sbatch: exit status 1: sbatch: error: Batch job submission failed: Invalid partition name specified"; r.code != 1 || !strings.Contains(r.stderr, want) {
		t.Errorf("resubmit with sbatch failing: %+v, want %q", r, want)
	}
}

// TestSlurmResubmitEveryShard: every shard computed by hand in a folder
// never submitted. With merged.json written, status says there is
// nothing left and resubmit says there is nothing to resubmit and calls
// no sbatch (it said "submitted merge job " with no id: fresh-user
// trial); without it, status says what merges them (it said resubmit
// submits the array), and resubmit submits the merge job and records its
// id.
func TestSlurmResubmitEveryShard(t *testing.T) {
	bin := fakeSlurmBin(t)
	xdg, dir := t.TempDir(), filepath.Join(t.TempDir(), "job")
	r := cli(t, xdg, "slurm", "--shards", "2", "--out", dir, "--binary", "/opt/sweepbench", "--",
		"--data", "embedded:btcusdt-1m", "--hma", "10:30:10")
	if r.code != 0 {
		t.Fatalf("slurm: %+v", r)
	}
	for _, f := range []string{engine.ShardName(0, 2), engine.ShardName(1, 2), "merged.json"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	calls := func() string { b, _ := os.ReadFile(filepath.Join(bin, "calls")); return string(b) }
	mergeJob := func() string {
		st, err := slurm.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		return st.MergeJob
	}
	r = cli(t, xdg, "slurm", "status", dir)
	if want := "2 of 2 shards present, 0 computing; merge job: not submitted (every shard is there and merged: nothing to resubmit); merged.json written\n"; r.code != 0 || !strings.Contains(r.stdout, want) {
		t.Errorf("status with merged.json written: %+v, want %q", r, want)
	}
	r = cli(t, xdg, "slurm", "resubmit", dir)
	if want := "nothing to resubmit: every shard is there and " + filepath.Join(dir, "merged.json") + " is written\n"; r.code != 0 || r.stdout != want ||
		strings.Contains(calls(), "sbatch") || mergeJob() != "" {
		t.Errorf("resubmit with merged.json written: %+v, want %q; merge job %q; calls:\n%s", r, want, mergeJob(), calls())
	}
	if err := os.Remove(filepath.Join(dir, "merged.json")); err != nil {
		t.Fatal(err)
	}
	r = cli(t, xdg, "slurm", "status", dir)
	if want := "2 of 2 shards present, 0 computing; merge job: not submitted (every shard is there: sweepbench merge DIR merges them here, " +
		"or sweepbench slurm resubmit DIR submits the merge job); merged.json not yet\n"; r.code != 0 || !strings.Contains(r.stdout, want) {
		t.Errorf("status with every shard there: %+v, want %q", r, want)
	}
	r = cli(t, xdg, "slurm", "resubmit", dir)
	if want := "every shard is there: submitted merge job 1\n"; r.code != 0 || r.stdout != want ||
		!strings.Contains(calls(), "sbatch --parsable "+filepath.Join(dir, "merge.sbatch")) || mergeJob() != "1" {
		t.Errorf("resubmit without merged.json: %+v, want %q; merge job %q; calls:\n%s", r, want, mergeJob(), calls())
	}
}

// TestSlurmStatusSeesMerge: slurm status sees a job folder merged by hand
// with `sweepbench merge DIR` (what its own advice says to run) as it sees
// one merged by the merge job: merged.json written, the session saved
// named, and resubmit has nothing left to do. It said "merged.json not
// yet" after `merge DIR`, which wrote neither merged.json nor the record
// of the sessions. Both ways, status is asked before and after the merge.
func TestSlurmStatusSeesMerge(t *testing.T) {
	fakeSlurmBin(t)
	run := []string{"--data", "embedded:btcusdt-1m", "--head", "3000", "--hma", "10:30:10", "--hma3", "12:20:4", "--backend", "reference"}
	for _, c := range []struct {
		name  string
		merge func(dir string) []string
	}{
		{"by hand", func(dir string) []string { return []string{"merge", dir} }},
		{"as the merge job", func(dir string) []string {
			return []string{"merge", dir, "--format", "json", "--out", filepath.Join(dir, slurm.MergedFile),
				"--sessions-json", filepath.Join(dir, slurm.SessionsFile)}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			xdg, dir := t.TempDir(), filepath.Join(t.TempDir(), "job")
			r := cli(t, xdg, append([]string{"slurm", "--shards", "2", "--out", dir, "--binary", "/opt/sweepbench", "--"}, run...)...)
			if r.code != 0 {
				t.Fatalf("slurm: %+v", r)
			}
			for k := 0; k < 2; k++ {
				r = cli(t, xdg, append([]string{"run", "-q", "--no-save", "--shard", fmt.Sprintf("%d/2", k), "--shard-dir", dir}, run...)...)
				if r.code != 0 {
					t.Fatalf("shard %d: %+v", k, r)
				}
			}
			r = cli(t, xdg, "slurm", "status", dir)
			if want := "2 of 2 shards present, 0 computing; merge job: not submitted (every shard is there: sweepbench merge DIR merges them here, " +
				"or sweepbench slurm resubmit DIR submits the merge job); merged.json not yet\n"; r.code != 0 || !strings.Contains(r.stdout, want) {
				t.Fatalf("status before the merge: %+v, want %q", r, want)
			}
			r = cli(t, xdg, c.merge(dir)...)
			if r.code != 0 {
				t.Fatalf("merge: %+v", r)
			}
			js, err := os.ReadFile(filepath.Join(dir, slurm.MergedFile))
			if err != nil {
				t.Fatalf("merged.json: %v", err)
			}
			if rep := decodeJSON(t, js).(map[string]any); rep["runs"] == nil {
				t.Errorf("merged.json is not the merged report: %.200s", js)
			}
			db := filepath.Join(xdg, "sweepbench", "sessions.db")
			r = cli(t, xdg, "slurm", "status", dir)
			for _, want := range []string{
				"2 of 2 shards present, 0 computing; merge job: not submitted (every shard is there and merged: nothing to resubmit); merged.json written\n",
				"saved as session 1 (sweepbench sessions show 1) in " + db + "\n",
			} {
				if r.code != 0 || !strings.Contains(r.stdout, want) {
					t.Errorf("status after the merge lacks %q: %+v", want, r)
				}
			}
			r = cli(t, xdg, "slurm", "resubmit", dir)
			if want := slurm.NothingLeft(dir) + "\n"; r.code != 0 || r.stdout != want {
				t.Errorf("resubmit after the merge: %+v, want %q", r, want)
			}
		})
	}
}
