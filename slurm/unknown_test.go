package slurm

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sweepbench/engine/shard"
)

// unknownFolder is a 6-task folder submitted as the arrays arrays and
// merge job merge ("" none), with the shards of the tasks done written.
func unknownFolder(t *testing.T, arrays []string, merge string, done ...int) *State {
	t.Helper()
	dir := t.TempDir()
	st, err := (&Plan{Dir: dir, Binary: "/opt/sweepbench", Chdir: "/work", Shards: 6}).Write()
	if err != nil {
		t.Fatal(err)
	}
	st.ArrayJobs, st.MergeJob = arrays, merge
	if err := st.save(); err != nil {
		t.Fatal(err)
	}
	for _, k := range done {
		if err := os.WriteFile(filepath.Join(dir, shard.ShardName(k, 6)), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

var (
	errDown    = errors.New("squeue: exit status 1: slurm_load_jobs error: Unable to contact slurm controller (connect failure)")
	errDBDown  = errors.New("sacct: exit status 1: sacct: error: Problem talking to the database: Connection refused")
	errPurged  = errors.New("squeue: exit status 1: slurm_load_jobs error: Invalid job id specified")
	allPending = "1_0 COMPLETED\n1_1 RUNNING\n1_2 RUNNING\n1_3 PENDING\n1_4 PENDING\n1_5 PENDING\n2 PENDING\n"
)

// TestUnknown: what each way squeue and sacct answer (or do not) makes
// of the tasks' phases, and whether Resubmit refuses. A task is unknown
// only when squeue failed and sacct did not tell where its latest
// submission stands; squeue answering without a task means Slurm neither
// runs nor holds it (missing).
func TestUnknown(t *testing.T) {
	for _, c := range []struct {
		name          string
		arrays        []string
		merge         string
		done          []int
		f             fakeSlurm
		phases        []string
		redo, unknown []int
		refused       string // Refusal's message ("" none)
	}{
		{name: "squeue and sacct fail", arrays: []string{"1"}, merge: "2", done: []int{0},
			f:       fakeSlurm{queue: allPending, squeueErr: errDown, sacctErr: errDBDown},
			phases:  []string{"done", "unknown", "unknown", "unknown", "unknown", "unknown"},
			unknown: []int{1, 2, 3, 4, 5},
			refused: "squeue failed: exit status 1: slurm_load_jobs error: Unable to contact slurm controller (connect failure); " +
				"sacct failed too: exit status 1: sacct: error: Problem talking to the database: Connection refused; " +
				"the states of tasks 1,2,3,4,5 are unknown: nothing resubmitted"},
		{name: "squeue fails, accounting off", arrays: []string{"1"}, merge: "2", done: []int{0, 1, 2, 3, 4},
			f:       fakeSlurm{queue: allPending, squeueErr: errDown},
			phases:  []string{"done", "done", "done", "done", "done", "unknown"},
			unknown: []int{5},
			refused: "squeue failed: exit status 1: slurm_load_jobs error: Unable to contact slurm controller (connect failure); " +
				"sacct failed too: exit status 1: Slurm accounting storage is disabled; the state of task 5 is unknown: nothing resubmitted"},
		{name: "squeue fails, sacct tells every task", arrays: []string{"1"}, merge: "2", done: []int{0},
			f:      fakeSlurm{squeueErr: errDown, acct: "1_0|COMPLETED\n1_1|FAILED\n1_2|CANCELLED by 0\n1_3|RUNNING\n1_[4-5%2]|PENDING\n2|PENDING\n"},
			phases: []string{"done", "failed", "failed", "running", "pending", "pending"},
			redo:   []int{1, 2}},
		{name: "squeue fails, sacct lags behind a resubmission", arrays: []string{"1", "3"}, merge: "4", done: []int{0},
			f:       fakeSlurm{squeueErr: errDown, acct: "1_0|COMPLETED\n1_1|FAILED\n1_2|RUNNING\n1_3|RUNNING\n1_4|RUNNING\n1_5|RUNNING\n2|CANCELLED\n"},
			phases:  []string{"done", "unknown", "unknown", "unknown", "unknown", "unknown"},
			unknown: []int{1, 2, 3, 4, 5},
			refused: "the states of tasks 1,2,3,4,5 are unknown: nothing resubmitted"},
		{name: "squeue fails, sacct has the resubmission", arrays: []string{"1", "3"}, merge: "4", done: []int{0},
			f:      fakeSlurm{squeueErr: errDown, acct: "1_0|COMPLETED\n1_1|FAILED\n1_2|RUNNING\n1_3|RUNNING\n1_4|RUNNING\n1_5|RUNNING\n2|CANCELLED\n3_1|RUNNING\n4|PENDING\n"},
			phases: []string{"done", "running", "running", "running", "running", "running"}},
		{name: "squeue answers without tasks, accounting off", arrays: []string{"1"}, merge: "2", done: []int{0},
			f:      fakeSlurm{queue: "1_0 COMPLETED\n1_2 RUNNING\n1_3 PENDING\n2 PENDING\n"},
			phases: []string{"done", "missing", "running", "pending", "missing", "missing"},
			redo:   []int{1, 4, 5}},
		{name: "squeue asked for one job it no longer holds", arrays: []string{"1"}, done: []int{0},
			f:      fakeSlurm{squeueErr: errPurged},
			phases: []string{"done", "missing", "missing", "missing", "missing", "missing"},
			redo:   []int{1, 2, 3, 4, 5}},
		{name: "every shard there, the merge unknown", arrays: []string{"1"}, merge: "2", done: []int{0, 1, 2, 3, 4, 5},
			f:       fakeSlurm{squeueErr: errDown},
			phases:  []string{"done", "done", "done", "done", "done", "done"},
			refused: "the state of merge job 2 is unknown: nothing resubmitted"},
		{name: "squeue answers", arrays: []string{"1"}, merge: "2", done: []int{0},
			f:      fakeSlurm{queue: "1_0 COMPLETED\n1_1 FAILED\n1_2 RUNNING\n1_[3-5] PENDING\n2 PENDING\n"},
			phases: []string{"done", "failed", "running", "pending", "pending", "pending"},
			redo:   []int{1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := unknownFolder(t, c.arrays, c.merge, c.done...)
			f := c.f
			s, err := st.Status(context.Background(), &f)
			if err != nil {
				t.Fatal(err)
			}
			var phases []string
			for _, task := range s.Tasks {
				phases = append(phases, task.Phase().String())
			}
			if !reflect.DeepEqual(phases, c.phases) || !reflect.DeepEqual(s.Redo(), c.redo) || !reflect.DeepEqual(s.Unknown(), c.unknown) {
				t.Fatalf("phases %v, redo %v, unknown %v; want %v, %v, %v", phases, s.Redo(), s.Unknown(), c.phases, c.redo, c.unknown)
			}
			if got := s.Counts().Unknown; got != len(c.unknown) {
				t.Errorf("counts %+v", s.Counts())
			}
			if (s.Unanswered != nil) != (f.squeueErr != nil && f.squeueErr != errPurged) {
				t.Errorf("unanswered %v with squeue's error %v", s.Unanswered, f.squeueErr)
			}
			refusal := s.Refusal()
			f.calls = nil
			res, err := st.Resubmit(context.Background(), &f, false)
			redo := res.Tasks
			if c.refused == "" {
				if refusal != nil || err != nil {
					t.Fatalf("refused: %v / %v", refusal, err)
				}
				if !reflect.DeepEqual(redo, c.redo) {
					t.Errorf("resubmitted %v, want %v", redo, c.redo)
				}
				return
			}
			var ue *UnknownError
			if !errors.As(err, &ue) || !errors.As(refusal, &ue) || !strings.HasSuffix(err.Error(), c.refused) || refusal.Error() != err.Error() {
				t.Fatalf("Resubmit: %v (refusal %v), want an *UnknownError ending %q", err, refusal, c.refused)
			}
			if !reflect.DeepEqual(ue.Tasks, c.unknown) || !errors.Is(err, f.squeueErr) {
				t.Errorf("unknown error's tasks %v, want %v; wraps squeue's: %v", ue.Tasks, c.unknown, errors.Is(err, f.squeueErr))
			}
			for _, call := range f.calls {
				if !strings.HasPrefix(call, "squeue ") && !strings.HasPrefix(call, "sacct ") {
					t.Errorf("refused, yet ran %q", call)
				}
			}
		})
	}
}

// TestResubmitForce: squeue and sacct failing, a forced Resubmit submits
// the unknown tasks and cancels the merge job it could not see; with
// every shard there, it submits the merge again.
func TestResubmitForce(t *testing.T) {
	st := unknownFolder(t, []string{"1"}, "2", 0, 3)
	f := &fakeSlurm{next: 2, squeueErr: errDown, sacctErr: errDBDown}
	res, err := st.Resubmit(context.Background(), f, true)
	redo := res.Tasks
	if err != nil {
		t.Fatal(err)
	}
	dir := st.Plan.Dir
	want := []string{"scancel 2", "sbatch --parsable --array=1,2,4,5 " + filepath.Join(dir, ArrayScript),
		"sbatch --parsable --dependency=afterok:3 " + filepath.Join(dir, MergeScript)}
	if got := f.calls[2:]; !reflect.DeepEqual(redo, []int{1, 2, 4, 5}) || !reflect.DeepEqual(got, want) {
		t.Fatalf("resubmitted %v with %q, want %q", redo, got, want)
	}
	st = unknownFolder(t, []string{"1"}, "2", 0, 1, 2, 3, 4, 5)
	f = &fakeSlurm{next: 2, squeueErr: errDown}
	if res, err = st.Resubmit(context.Background(), f, true); err != nil || res.Tasks != nil || res.Array != "" || res.Merge != "3" {
		t.Fatal(res, err)
	}
	if got := f.calls[2:]; !reflect.DeepEqual(got, []string{"sbatch --parsable " + filepath.Join(st.Plan.Dir, MergeScript)}) || st.MergeJob != "3" {
		t.Fatalf("calls %q, merge %s", got, st.MergeJob)
	}
}

func TestExpandIDs(t *testing.T) {
	for in, want := range map[string][]string{
		"7":             {"7"},
		"7_3":           {"7_3"},
		"7_[2-4,6%2]":   {"7_2", "7_3", "7_4", "7_6"},
		"7_[5]":         {"7_5"},
		"7_[x-2]":       {"7_[x-2]"},
		"7_[4-2]":       {"7_[4-2]"},
		"7_[1-3":        {"7_[1-3"},
		"12_[0-1%1000]": {"12_0", "12_1"},
	} {
		if got := expandIDs(in); !reflect.DeepEqual(got, want) {
			t.Errorf("expandIDs(%q) = %q, want %q", in, got, want)
		}
	}
}
