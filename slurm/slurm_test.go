package slurm

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"sweepbench/engine/shard"
)

// fakeSlurm answers sbatch with increasing job ids, squeue and sacct from
// tables, and records every command. sacct is off (accounting disabled)
// unless acct is set; squeueErr and sacctErr make them fail.
type fakeSlurm struct {
	next      int
	queue     string // squeue's output
	acct      string // sacct's output ("": accounting is off)
	squeueErr error
	sacctErr  error
	calls     []string
}

func (f *fakeSlurm) Run(_ context.Context, name string, args ...string) (string, error) {
	f.calls = append(f.calls, name+" "+strings.Join(args, " "))
	switch name {
	case "sbatch":
		f.next++
		return strconv.Itoa(f.next) + "\n", nil
	case "squeue":
		if f.squeueErr != nil {
			return "", f.squeueErr
		}
		return f.queue, nil
	case "sacct":
		if f.sacctErr != nil {
			return "", f.sacctErr
		}
		if f.acct == "" {
			return "", errors.New("sacct: exit status 1: Slurm accounting storage is disabled")
		}
		return f.acct, nil
	}
	return "", nil
}

func TestSubmitStatusResubmit(t *testing.T) {
	dir := t.TempDir()
	p := &Plan{Dir: dir, Binary: "/opt/sweepbench", Chdir: "/work", Shards: 4, GPUsPerTask: 1, Partition: "gpu",
		RunArgs: []string{"--hma", "10:100:10", "--data", "my data.csv"}}
	st, err := p.Write()
	if err != nil {
		t.Fatal(err)
	}
	arr, _ := os.ReadFile(filepath.Join(dir, ArrayScript))
	for _, want := range []string{"#SBATCH --array=0-3", "#SBATCH --gpus-per-task=1", "#SBATCH --partition=gpu",
		`'my data.csv'`, `--shard "${SLURM_ARRAY_TASK_ID}/4"`} {
		if !strings.Contains(string(arr), want) {
			t.Errorf("array script lacks %q:\n%s", want, arr)
		}
	}
	f := &fakeSlurm{}
	if err := st.Submit(context.Background(), f, nil, false); err != nil {
		t.Fatal(err)
	}
	if st.ArrayJobs[0] != "1" || st.MergeJob != "2" || !strings.Contains(f.calls[1], "--dependency=afterok:1 ") {
		t.Fatalf("submitted %v / %s: %v", st.ArrayJobs, st.MergeJob, f.calls)
	}
	// Shards 0 and 3 written, task 1 failed, task 2 running; the merge waits.
	for _, k := range []int{0, 3} {
		if err := os.WriteFile(filepath.Join(dir, shard.ShardName(k, 4)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f.queue = "1_0 COMPLETED\n1_1 FAILED\n1_2 RUNNING\n1_3 COMPLETED\n2 PENDING\n"
	back, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	s, err := back.Status(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	var states []string
	for _, task := range s.Tasks {
		states = append(states, task.State+":"+map[bool]string{true: "shard", false: "-"}[task.Done()])
	}
	if want := []string{"COMPLETED:shard", "FAILED:-", "RUNNING:-", "COMPLETED:shard"}; !reflect.DeepEqual(states, want) || s.Merge != "PENDING" {
		t.Fatalf("status %v, merge %s", states, s.Merge)
	}
	f.calls = nil
	res, err := back.Resubmit(context.Background(), f, false)
	redo := res.Tasks
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(redo, []int{1}) {
		t.Fatalf("resubmitted %v, want [1]", redo)
	}
	// The old merge cancelled, task 1 alone, a merge after it and the running task 2.
	want := []string{"scancel 2", "sbatch --parsable --array=1 " + filepath.Join(dir, ArrayScript),
		"sbatch --parsable --dependency=afterok:3:1_2 " + filepath.Join(dir, MergeScript)}
	got := f.calls[len(f.calls)-3:]
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("calls %q, want %q", got, want)
	}
}

// TestPhases: every task's phase from its shard file and its state, the
// counts, the tasks Resubmit would submit, the shards' sizes and the
// merge's record of its sessions.
func TestPhases(t *testing.T) {
	dir := t.TempDir()
	st, err := (&Plan{Dir: dir, Binary: "/opt/sweepbench", Chdir: "/work", Shards: 7}).Write()
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeSlurm{}
	if err := st.Submit(context.Background(), f, nil, false); err != nil {
		t.Fatal(err)
	}
	// 0 done, 1 failed, 2 running, 3 pending, 4 missing (unknown), 5
	// timed out, 6 completed by Slurm but its shard is gone (failed).
	if err := os.WriteFile(filepath.Join(dir, shard.ShardName(0, 7)), []byte("12345"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.queue = "1_0 COMPLETED\n1_1 FAILED\n1_2 RUNNING\n1_3 PENDING\n1_5 TIMEOUT\n1_6 COMPLETED\n2 PENDING\n"
	s, err := st.Status(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	var phases []string
	for _, task := range s.Tasks {
		phases = append(phases, task.Phase().String())
	}
	if want := []string{"done", "failed", "running", "pending", "missing", "failed", "failed"}; !reflect.DeepEqual(phases, want) {
		t.Errorf("phases %v, want %v", phases, want)
	}
	if c, want := s.Counts(), (Counts{Done: 1, Running: 1, Pending: 1, Failed: 3, Missing: 1}); c != want {
		t.Errorf("counts %+v, want %+v", c, want)
	}
	if redo := s.Redo(); !reflect.DeepEqual(redo, []int{1, 4, 5, 6}) {
		t.Errorf("redo %v", redo)
	}
	if s.Tasks[0].Size != 5 || s.Saved != nil {
		t.Errorf("size %d, saved %+v", s.Tasks[0].Size, s.Saved)
	}
	if err := WriteMerged(filepath.Join(dir, SessionsFile), &Merged{DB: "/x/sessions.db", Sessions: []int64{4, 5}}); err != nil {
		t.Fatal(err)
	}
	if s, err = st.Status(context.Background(), f); err != nil || s.Saved == nil || s.Saved.DB != "/x/sessions.db" || !reflect.DeepEqual(s.Saved.Sessions, []int64{4, 5}) {
		t.Fatalf("saved %+v, %v", s.Saved, err)
	}
	if script, _ := os.ReadFile(filepath.Join(dir, MergeScript)); !strings.Contains(string(script), "--sessions-json "+filepath.Join(dir, SessionsFile)) {
		t.Errorf("the merge script does not record its sessions:\n%s", script)
	}
}

// TestResubmitFirst: a folder written without --submit is submitted whole
// by Resubmit, as slurm --submit would.
func TestResubmitFirst(t *testing.T) {
	dir := t.TempDir()
	st, err := (&Plan{Dir: dir, Binary: "/opt/sweepbench", Chdir: "/work", Shards: 3}).Write()
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeSlurm{}
	res, err := st.Resubmit(context.Background(), f, false)
	redo := res.Tasks
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"sbatch --parsable " + filepath.Join(dir, ArrayScript), "sbatch --parsable --dependency=afterok:1 " + filepath.Join(dir, MergeScript)}
	if !reflect.DeepEqual(redo, []int{0, 1, 2}) || !reflect.DeepEqual(f.calls, want) || st.MergeJob != "2" {
		t.Fatalf("resubmitted %v with %q, merge %s", redo, f.calls, st.MergeJob)
	}
}

// TestNeverSubmittedState: slurm.json of a folder never submitted has no
// "submitted" (it was "0001-01-01T00:00:00Z"); a file written so by an
// older sweepbench still reads, as never submitted; once submitted, the
// time is recorded.
func TestNeverSubmittedState(t *testing.T) {
	dir := t.TempDir()
	st, err := (&Plan{Dir: dir, Binary: "/opt/sweepbench", Chdir: "/work", Shards: 2}).Write()
	if err != nil {
		t.Fatal(err)
	}
	js, err := os.ReadFile(filepath.Join(dir, StateFile))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(js), `"submitted"`) {
		t.Errorf("slurm.json of a folder never submitted records a submission:\n%s", js)
	}
	old := strings.Replace(string(js), `"merge_job": ""`, `"merge_job": "",
  "submitted": "0001-01-01T00:00:00Z"`, 1)
	if old == string(js) {
		t.Fatalf("no merge_job in:\n%s", js)
	}
	if err := os.WriteFile(filepath.Join(dir, StateFile), []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	back, err := Load(dir)
	if err != nil || !back.Submitted.IsZero() || len(back.ArrayJobs) != 0 {
		t.Fatalf("an older slurm.json: %+v, %v", back, err)
	}
	if err := st.Submit(context.Background(), &fakeSlurm{}, nil, false); err != nil {
		t.Fatal(err)
	}
	if back, err = Load(dir); err != nil || back.Submitted.IsZero() || time.Since(back.Submitted) > time.Minute {
		t.Errorf("submitted: %+v, %v", back, err)
	}
}

// TestLoadErrors: a folder that does not exist and one without slurm.json
// are told apart (NoFolderError, NotAJobDirError).
func TestLoadErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope")
	var nf *NoFolderError
	if _, err := Load(missing); !errors.As(err, &nf) || nf.Dir != missing {
		t.Errorf("Load(%s): %v, want a NoFolderError", missing, err)
	}
	empty := t.TempDir()
	var nj *NotAJobDirError
	if _, err := Load(empty); !errors.As(err, &nj) || nj.Dir != empty {
		t.Errorf("Load(%s): %v, want a NotAJobDirError", empty, err)
	}
}

// TestResubmitNeverSubmitted: a folder never submitted follows the
// resubmit rule: only the tasks without a shard (some computed by hand),
// as an --array list, and the merge; the whole array when none is there;
// the merge alone when every shard is.
func TestResubmitNeverSubmitted(t *testing.T) {
	for _, tc := range []struct {
		name   string
		shards []int // present before the first submission
		redo   []int
		calls  []string // sbatch's, DIR for the folder
	}{
		{"none there", nil, []int{0, 1, 2}, []string{"sbatch --parsable DIR/array.sbatch", "sbatch --parsable --dependency=afterok:1 DIR/merge.sbatch"}},
		{"2 of 3 there", []int{0, 1}, []int{2}, []string{"sbatch --parsable --array=2 DIR/array.sbatch", "sbatch --parsable --dependency=afterok:1 DIR/merge.sbatch"}},
		{"all there", []int{0, 1, 2}, nil, []string{"sbatch --parsable DIR/merge.sbatch"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			st, err := (&Plan{Dir: dir, Binary: "/opt/sweepbench", Chdir: "/work", Shards: 3}).Write()
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range tc.shards {
				if err := os.WriteFile(filepath.Join(dir, shard.ShardName(k, 3)), []byte("x"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			f := &fakeSlurm{}
			s, err := st.Status(context.Background(), f)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Redo(); !reflect.DeepEqual(got, tc.redo) {
				t.Errorf("Redo %v, want %v", got, tc.redo)
			}
			res, err := st.Resubmit(context.Background(), f, false)
			redo := res.Tasks
			if err != nil || !reflect.DeepEqual(redo, tc.redo) {
				t.Fatalf("Resubmit %v, %v; want %v", redo, err, tc.redo)
			}
			var sb []string
			for _, c := range f.calls {
				if strings.HasPrefix(c, "sbatch ") {
					sb = append(sb, strings.ReplaceAll(c, dir, "DIR"))
				}
			}
			if !reflect.DeepEqual(sb, tc.calls) {
				t.Errorf("sbatch %q, want %q", sb, tc.calls)
			}
		})
	}
}

// TestResubmitEveryShard: every shard computed by hand in a folder never
// submitted. Without merged.json, Resubmit submits the merge job alone
// and records its id; with merged.json written, it submits nothing and
// says so (Complete), and slurm.json keeps no merge job.
func TestResubmitEveryShard(t *testing.T) {
	for _, merged := range []bool{false, true} {
		t.Run(map[bool]string{false: "not merged", true: "merged"}[merged], func(t *testing.T) {
			dir := t.TempDir()
			st, err := (&Plan{Dir: dir, Binary: "/opt/sweepbench", Chdir: "/work", Shards: 2}).Write()
			if err != nil {
				t.Fatal(err)
			}
			for k := range 2 {
				if err := os.WriteFile(filepath.Join(dir, shard.ShardName(k, 2)), []byte("x"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if merged {
				if err := os.WriteFile(filepath.Join(dir, MergedFile), []byte("{}"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			f := &fakeSlurm{}
			res, err := st.Resubmit(context.Background(), f, false)
			if err != nil {
				t.Fatal(err)
			}
			back, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			var sb []string
			for _, c := range f.calls {
				if strings.HasPrefix(c, "sbatch ") {
					sb = append(sb, c)
				}
			}
			if merged {
				if want := (Resubmitted{Complete: true}); !reflect.DeepEqual(res, want) || res.Submitted() || len(sb) != 0 || back.MergeJob != "" {
					t.Fatalf("merged: %+v (submitted %v), sbatch %q, merge job %q; want %+v and no sbatch", res, res.Submitted(), sb, back.MergeJob, want)
				}
				return
			}
			want := []string{"sbatch --parsable " + filepath.Join(dir, MergeScript)}
			if !reflect.DeepEqual(res, Resubmitted{Merge: "1"}) || !reflect.DeepEqual(sb, want) || back.MergeJob != "1" || len(back.ArrayJobs) != 0 {
				t.Fatalf("not merged: %+v, sbatch %q, merge job %q, arrays %v; want merge job 1 by %q", res, sb, back.MergeJob, back.ArrayJobs, want)
			}
		})
	}
}
