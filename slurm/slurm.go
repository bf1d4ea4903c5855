// Package slurm runs a sharded sweepbench study on a Slurm cluster: it
// writes an sbatch array script whose task K runs `sweepbench run ...
// --shard K/N` into a shared folder, and a merge job that depends on the
// array (--dependency=afterok) and runs `sweepbench merge` there; it
// submits both (sbatch --parsable), reads the tasks' states (squeue, sacct
// when accounting is on, and the shard files present) and resubmits the
// tasks that failed or never ran. It knows the shard file names
// (engine.ShardName) and nothing else of the engine; it runs Slurm's
// commands through a Runner, so that tests need no cluster.
package slurm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"sweepbench/engine"
	"sweepbench/engine/shard"
)

// Files in a job folder.
const (
	ArrayScript = "array.sbatch"
	MergeScript = "merge.sbatch"
	StateFile   = "slurm.json"
	MergedFile  = "merged.json"
	// SessionsFile is where the merge job records the sessions it saved
	// (merge --sessions-json; see Merged).
	SessionsFile = "sessions.json"
	LogDir       = "logs"
)

// Plan is what `sweepbench slurm` writes: N array tasks of `Binary run
// RunArgs --shard K/N --shard-dir Dir`, then the merge.
type Plan struct {
	Dir         string   `json:"dir"`           // the shared job folder (absolute)
	Binary      string   `json:"binary"`        // the sweepbench binary every node runs (absolute)
	Chdir       string   `json:"chdir"`         // the tasks' working folder (relative --data paths are read from it)
	Shards      int      `json:"shards"`        // N
	GPUsPerTask int      `json:"gpus_per_task"` // 0 = none asked
	CPUsPerTask int      `json:"cpus_per_task"` // 0 = Slurm's default
	Partition   string   `json:"partition"`     // "" = the default partition
	Time        string   `json:"time"`          // the tasks' time limit ("" = the partition's)
	RunArgs     []string `json:"run_args"`      // run's flags, as given after --
	DB          string   `json:"db"`            // the merge's sessions database ("" = its default)
}

// State is slurm.json: the plan and the jobs submitted for it.
type State struct {
	Plan      Plan      `json:"plan"`
	ArrayJobs []string  `json:"array_jobs"`         // every array job submitted, first the whole array, then resubmissions
	MergeJob  string    `json:"merge_job"`          // the latest merge job
	Submitted time.Time `json:"submitted,omitzero"` // the latest submission; absent (zero) before the first
}

// quote is s as one bash word.
func quote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=,@%+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func words(ws []string) string {
	q := make([]string, len(ws))
	for i, w := range ws {
		q[i] = quote(w)
	}
	return strings.Join(q, " ")
}

// ArrayScriptText is the array job: task K computes shard K of N. N is
// written in, not read from SLURM_ARRAY_TASK_COUNT, so that a resubmitted
// subset of tasks (--array=2,5) still computes shards of N.
func (p *Plan) ArrayScriptText() string {
	var b strings.Builder
	b.WriteString("#!/bin/bash\n")
	fmt.Fprintf(&b, "#SBATCH --job-name=sweepbench-shards\n#SBATCH --array=0-%d\n", p.Shards-1)
	fmt.Fprintf(&b, "#SBATCH --output=%s\n", filepath.Join(p.Dir, LogDir, "task-%a.out"))
	fmt.Fprintf(&b, "#SBATCH --chdir=%s\n#SBATCH --ntasks=1\n", p.Chdir)
	if p.CPUsPerTask > 0 {
		fmt.Fprintf(&b, "#SBATCH --cpus-per-task=%d\n", p.CPUsPerTask)
	}
	if p.GPUsPerTask > 0 {
		fmt.Fprintf(&b, "#SBATCH --gpus-per-task=%d\n", p.GPUsPerTask)
	}
	if p.Partition != "" {
		fmt.Fprintf(&b, "#SBATCH --partition=%s\n", p.Partition)
	}
	if p.Time != "" {
		fmt.Fprintf(&b, "#SBATCH --time=%s\n", p.Time)
	}
	b.WriteString("# Written by `sweepbench slurm`: shard K of N of one study into the shared folder below.\n")
	b.WriteString("set -euo pipefail\n")
	args := append([]string{p.Binary, "run"}, p.RunArgs...)
	args = append(args, "--no-save", "--shard-dir", p.Dir) // the task's log gets its summary line
	fmt.Fprintf(&b, "exec %s --shard \"${SLURM_ARRAY_TASK_ID}/%d\"\n", words(args), p.Shards)
	return b.String()
}

// MergeScriptText is the merge job: every shard into DIR/merged.json and a
// session.
func (p *Plan) MergeScriptText() string {
	var b strings.Builder
	b.WriteString("#!/bin/bash\n#SBATCH --job-name=sweepbench-merge\n#SBATCH --ntasks=1\n")
	fmt.Fprintf(&b, "#SBATCH --output=%s\n", filepath.Join(p.Dir, LogDir, "merge.out"))
	fmt.Fprintf(&b, "#SBATCH --chdir=%s\n", p.Chdir)
	if p.Partition != "" {
		fmt.Fprintf(&b, "#SBATCH --partition=%s\n", p.Partition)
	}
	if p.Time != "" {
		fmt.Fprintf(&b, "#SBATCH --time=%s\n", p.Time)
	}
	b.WriteString("# Written by `sweepbench slurm`: submitted with --dependency=afterok on the array job.\n")
	b.WriteString("set -euo pipefail\n")
	args := []string{p.Binary, "merge", p.Dir, "--format", "json", "--out", filepath.Join(p.Dir, MergedFile),
		"--sessions-json", filepath.Join(p.Dir, SessionsFile)}
	if p.DB != "" {
		args = append(args, "--db", p.DB)
	}
	fmt.Fprintf(&b, "exec %s\n", words(args))
	return b.String()
}

// Write writes the plan's scripts and state into Dir (made if missing).
func (p *Plan) Write() (*State, error) {
	if p.Shards < 1 {
		return nil, fmt.Errorf("shards %d: want at least 1", p.Shards)
	}
	if err := os.MkdirAll(filepath.Join(p.Dir, LogDir), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(p.Dir, ArrayScript), []byte(p.ArrayScriptText()), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(p.Dir, MergeScript), []byte(p.MergeScriptText()), 0o755); err != nil {
		return nil, err
	}
	st := &State{Plan: *p}
	return st, st.save()
}

func (st *State) save() error {
	js, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(st.Plan.Dir, StateFile+".tmp")
	if err := os.WriteFile(tmp, append(js, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(st.Plan.Dir, StateFile))
}

// NotAJobDirError: the folder holds no slurm.json.
type NotAJobDirError struct{ Dir string }

func (e *NotAJobDirError) Error() string {
	return fmt.Sprintf("%s: no %s here: not a folder `sweepbench slurm --out` wrote", e.Dir, StateFile)
}

// NoFolderError: the job folder does not exist.
type NoFolderError struct{ Dir string }

func (e *NoFolderError) Error() string { return e.Dir + ": no such folder" }

// Load reads the state of job folder dir: a *NoFolderError when dir does
// not exist, a *NotAJobDirError when it holds no slurm.json.
func Load(dir string) (*State, error) {
	js, err := os.ReadFile(filepath.Join(dir, StateFile))
	if errors.Is(err, os.ErrNotExist) {
		if _, serr := os.Stat(dir); errors.Is(serr, os.ErrNotExist) {
			return nil, &NoFolderError{dir}
		}
		return nil, &NotAJobDirError{dir}
	}
	if err != nil {
		return nil, err
	}
	var st State
	if err := json.Unmarshal(js, &st); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, StateFile), err)
	}
	return &st, nil
}

// Runner runs a Slurm command and returns its standard output.
type Runner interface {
	Run(ctx context.Context, name string, args ...string) (string, error)
}

// Exec runs the commands on this machine, each under a minute.
type Exec struct{}

func (Exec) Run(ctx context.Context, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return string(out), fmt.Errorf("%s: %w: %s", name, err, msg)
		}
		return string(out), fmt.Errorf("%s: %w", name, err)
	}
	return string(out), nil
}

// jobID reads sbatch --parsable's output: "ID" or "ID;cluster".
func jobID(out string) (string, error) {
	id, _, _ := strings.Cut(strings.TrimSpace(out), ";")
	if _, err := strconv.Atoi(id); err != nil {
		return "", fmt.Errorf("sbatch --parsable printed %q, not a job id", strings.TrimSpace(out))
	}
	return id, nil
}

// Submit submits the array (only tasks when not nil: a resubmission),
// then the merge job depending on it, and records both. hold submits the
// array held (scontrol release starts it). The merge job also waits for
// the jobs after (tasks of an earlier submission still running).
func (st *State) Submit(ctx context.Context, r Runner, tasks []int, hold bool, after ...string) error {
	args := []string{"--parsable"}
	if tasks != nil {
		args = append(args, "--array="+TaskList(tasks))
	}
	if hold {
		args = append(args, "--hold")
	}
	out, err := r.Run(ctx, "sbatch", append(args, filepath.Join(st.Plan.Dir, ArrayScript))...)
	if err != nil {
		return err
	}
	arr, err := jobID(out)
	if err != nil {
		return err
	}
	st.ArrayJobs = append(st.ArrayJobs, arr)
	st.Submitted = time.Now().UTC()
	if err := st.save(); err != nil {
		return err
	}
	dep := "--dependency=afterok:" + strings.Join(append([]string{arr}, after...), ":")
	out, err = r.Run(ctx, "sbatch", "--parsable", dep, filepath.Join(st.Plan.Dir, MergeScript))
	if err != nil {
		return fmt.Errorf("the array is submitted (job %s) but not the merge: %w", arr, err)
	}
	if st.MergeJob, err = jobID(out); err != nil {
		return err
	}
	return st.save()
}

// Task is one array task's state.
type Task struct {
	Index int
	Job   string // the Slurm job id of its latest submission ("ARRAY_K"); "" when unknown
	State string // PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, ... from squeue or sacct; "" when neither knows it
	Shard string // the shard file, when present
	Size  int64  // its size in bytes
	// Unknown: it has no shard, and Slurm could not be asked about it
	// (squeue failed, and sacct did not say where its latest submission
	// stands); Job and State are then "". A task squeue answered for and
	// does not list is not unknown: Slurm neither runs nor holds it.
	Unknown bool
}

// Done reports whether the task's shard file is there.
func (t *Task) Done() bool { return t.Shard != "" }

// Active reports whether Slurm still runs or will run it.
func (t *Task) Active() bool {
	switch t.State {
	case "PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "REQUEUED", "RESIZING", "SUSPENDED":
		return true
	}
	return false
}

// Phase is where a task stands, from its shard file first, then from
// what Slurm says of it.
type Phase int

const (
	Done    Phase = iota // its shard file is there
	Running              // no shard yet; running (or configuring, completing)
	Pending              // no shard yet; waiting to run (pending, requeued, suspended)
	Failed               // no shard, and Slurm no longer runs it: failed, cancelled, timed out...
	Missing              // no shard, and Slurm answered without it (squeue does not list it, nor sacct): never ran, or forgotten
	Unknown              // no shard, and Slurm could not be asked (squeue failed, sacct off or silent): it may be running
)

var phaseNames = [...]string{"done", "running", "pending", "failed", "missing", "unknown"}

func (p Phase) String() string {
	if p < 0 || int(p) >= len(phaseNames) {
		return fmt.Sprintf("phase %d", int(p))
	}
	return phaseNames[p]
}

// Phase is where t stands.
func (t *Task) Phase() Phase {
	switch {
	case t.Done():
		return Done
	case t.State == "PENDING" || t.State == "REQUEUED" || t.State == "SUSPENDED" || t.State == "RESIZING":
		return Pending
	case t.Active():
		return Running
	case t.State != "":
		return Failed
	case t.Unknown:
		return Unknown
	}
	return Missing
}

// Counts is how many tasks stand in each phase.
type Counts struct {
	Done, Running, Pending, Failed, Missing, Unknown int
}

// Active is the tasks Slurm runs or will run.
func (c Counts) Active() int { return c.Running + c.Pending }

// Counts counts the tasks by phase.
func (s *Status) Counts() Counts {
	var c Counts
	for i := range s.Tasks {
		switch s.Tasks[i].Phase() {
		case Done:
			c.Done++
		case Running:
			c.Running++
		case Pending:
			c.Pending++
		case Failed:
			c.Failed++
		case Unknown:
			c.Unknown++
		default:
			c.Missing++
		}
	}
	return c
}

// Redo is the tasks Resubmit submits again: those without a shard file
// that Slurm does not run or hold now (failed or missing), in order; in a
// folder never submitted, every task without a shard. Tasks whose state is unknown are not among them (Unknown lists them).
func (s *Status) Redo() []int { return s.phases(Failed, Missing) }

// Unknown is the tasks without a shard file whose state Slurm could not
// be asked (Phase Unknown), in order: Resubmit refuses while there are
// any, and submits them again when forced.
func (s *Status) Unknown() []int { return s.phases(Unknown) }

// phases is the tasks in any of the phases ps, in order.
func (s *Status) phases(ps ...Phase) []int {
	var out []int
	for i := range s.Tasks {
		if slices.Contains(ps, s.Tasks[i].Phase()) {
			out = append(out, s.Tasks[i].Index)
		}
	}
	return out
}

// MergeLive reports whether the merge job is pending or running.
func (s *Status) MergeLive() bool { return s.Merge == "PENDING" || s.Merge == "RUNNING" }

// MergeUnknown reports whether a merge job was submitted and Slurm could
// not be asked where it stands (squeue failed, sacct off or silent).
func (s *Status) MergeUnknown() bool { return s.Unanswered != nil && s.MergeJob != "" && s.Merge == "" }

// Status is the job folder's state: each task's, the merge job's, and
// whether merged.json is there. Note says what could not be asked (sacct
// without accounting, when squeue answered; Unanswered says it otherwise).
type Status struct {
	Tasks    []Task
	Merge    string // the merge job's state ("" unknown)
	MergeJob string
	Merged   bool
	Note     string
	// Unanswered is why Slurm's states are unknown: squeue failed (and
	// sacct, when it answered, did not tell every task); nil when squeue
	// answered. Tasks without a shard that neither command told are then
	// Unknown, and so is the merge (MergeUnknown).
	Unanswered *QueryError
	ArrayJobs  []string
	Submitted  time.Time
	ShardCount int
	// Saved is what the merge job recorded of the sessions it saved
	// (SessionsFile); nil when it recorded nothing (not merged yet,
	// --no-save, or a job folder written before the record existed).
	Saved *Merged
}

// jobStates asks sacct, then squeue, for the states of jobs (their array
// tasks one by one, a pending range of sacct's "7_[2-5%2]" too): "ARRAY_K"
// or "JOB" -> state, squeue's over sacct's (it knows the live ones best).
// squeueErr is squeue's failure, nil when it answered: squeue lists every
// job slurmctld holds (pending, running, and finished ones for MinJobAge),
// so a job it does not list then is one Slurm neither runs nor holds.
// Asked for a single job slurmctld no longer holds, squeue exits 1 with
// "Invalid job id specified": that is an answer too (none listed).
// sacctErr is sacct's failure (accounting off, slurmdbd down).
func jobStates(ctx context.Context, r Runner, jobs []string) (states map[string]string, squeueErr, sacctErr error) {
	states = map[string]string{}
	if len(jobs) == 0 {
		return states, nil, nil
	}
	list := strings.Join(jobs, ",")
	out, sacctErr := r.Run(ctx, "sacct", "-n", "-P", "-X", "-j", list, "-o", "JobID,State")
	if sacctErr == nil {
		for _, line := range strings.Split(out, "\n") {
			id, state, ok := strings.Cut(strings.TrimSpace(line), "|")
			if ok {
				state, _, _ = strings.Cut(state, " ") // "CANCELLED by 0"
				for _, id := range expandIDs(id) {
					states[id] = state
				}
			}
		}
	}
	out, squeueErr = r.Run(ctx, "squeue", "-h", "-r", "-t", "all", "-j", list, "-o", "%i %T")
	if squeueErr != nil && len(jobs) == 1 && strings.Contains(squeueErr.Error(), "Invalid job id specified") {
		out, squeueErr = "", nil
	}
	if squeueErr == nil {
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) == 2 {
				for _, id := range expandIDs(f[0]) {
					states[id] = f[1]
				}
			}
		}
	}
	return states, squeueErr, sacctErr
}

// expandIDs is the job ids a Slurm job id stands for: "7_[2-4,6%2]" (an
// array's tasks not yet started, as sacct and squeue without -r print
// them; %2 is the throttle) is 7_2, 7_3, 7_4 and 7_6; any other id is
// itself.
func expandIDs(id string) []string {
	arr, rest, ok := strings.Cut(id, "_[")
	if !ok || !strings.HasSuffix(rest, "]") {
		return []string{id}
	}
	rest, _, _ = strings.Cut(strings.TrimSuffix(rest, "]"), "%")
	var ids []string
	for _, part := range strings.Split(rest, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, errA := strconv.Atoi(lo)
		b, errB := a, error(nil)
		if isRange {
			b, errB = strconv.Atoi(hi)
		}
		if errA != nil || errB != nil || b < a || b-a > 1<<20 {
			return []string{id}
		}
		for k := a; k <= b; k++ {
			ids = append(ids, fmt.Sprintf("%s_%d", arr, k))
		}
	}
	return ids
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// Status reads the folder's tasks: the shard files present, and from
// squeue and sacct each task's latest submission's state. When squeue
// fails (Status.Unanswered), a task without a shard is Unknown unless
// sacct told its state and every array job submitted after the one it
// told of: a later resubmission sacct does not have yet (slurmdbd lags
// behind slurmctld) may hold the task.
func (st *State) Status(ctx context.Context, r Runner) (*Status, error) {
	n := st.Plan.Shards
	s := &Status{MergeJob: st.MergeJob, ArrayJobs: st.ArrayJobs, Submitted: st.Submitted, ShardCount: n}
	jobs := append([]string{}, st.ArrayJobs...)
	if st.MergeJob != "" {
		jobs = append(jobs, st.MergeJob)
	}
	states, squeueErr, sacctErr := jobStates(ctx, r, jobs)
	switch {
	case squeueErr != nil:
		s.Unanswered = &QueryError{Squeue: squeueErr, Sacct: sacctErr} // it says sacct's failure too
	case sacctErr != nil:
		s.Note = firstLine(sacctErr.Error()) + " (finished tasks are told by their shard files)"
	}
	told := map[string]bool{} // the array jobs sacct or squeue told of
	for id := range states {
		if arr, _, ok := strings.Cut(id, "_"); ok {
			told[arr] = true
		}
	}
	for k := 0; k < n; k++ {
		t := Task{Index: k}
		from := -1
		for i, arr := range st.ArrayJobs { // the latest submission that knows the task
			id := fmt.Sprintf("%s_%d", arr, k)
			if state, ok := states[id]; ok {
				t.Job, t.State, from = id, state, i
			}
		}
		p := filepath.Join(st.Plan.Dir, shard.ShardName(k, n))
		if fi, err := os.Stat(p); err == nil {
			t.Shard, t.Size = p, fi.Size()
		}
		if squeueErr != nil && slices.ContainsFunc(st.ArrayJobs[from+1:], func(arr string) bool { return !told[arr] }) {
			t.Job, t.State, t.Unknown = "", "", !t.Done()
		}
		s.Tasks = append(s.Tasks, t)
	}
	if st.MergeJob != "" {
		s.Merge = states[st.MergeJob]
	}
	if _, err := os.Stat(filepath.Join(st.Plan.Dir, MergedFile)); err == nil {
		s.Merged = true
	}
	saved, err := ReadMerged(st.Plan.Dir)
	if err != nil {
		s.Note = engine.JoinNote(s.Note, err.Error())
	}
	s.Saved = saved
	return s, nil
}

// Refusal is why Resubmit, not forced, would submit nothing now: an
// *UnknownError when squeue failed and a task without a shard is Unknown
// (it may be running or pending: submitting it again would run it twice
// into the same shard, and the new merge would not wait for it), or when
// Resubmit would submit the merge job alone again and the old one's state
// is unknown (it may be running). Nil otherwise.
func (s *Status) Refusal() error {
	if s.Unanswered == nil {
		return nil
	}
	if unknown := s.Unknown(); len(unknown) > 0 {
		return &UnknownError{Query: s.Unanswered, Tasks: unknown}
	}
	if s.MergeUnknown() && len(s.Redo()) == 0 && !s.Merged && s.Counts().Active() == 0 {
		return &UnknownError{Query: s.Unanswered, Merge: s.MergeJob}
	}
	return nil
}

// Complete reports whether nothing is left to do: every shard file is
// there and merged.json is written.
func (s *Status) Complete() bool { return s.Merged && s.Counts().Done == len(s.Tasks) }

// Resubmitted is what Resubmit submitted.
type Resubmitted struct {
	Tasks []int  // the tasks submitted again, in order; none when only the merge job was, or nothing
	Array string // the array job submitted; "" when none
	Merge string // the merge job submitted (State.MergeJob now); "" when none
	// Complete: nothing submitted, as nothing is left to do (every shard
	// is there and merged.json is written: Status.Complete).
	Complete bool
}

// Summary says what Resubmit did to job folder dir, in the words the
// command line and the workbench both print: first when the folder had
// never been submitted, shards its number of shards.
func (r *Resubmitted) Summary(dir string, first bool, shards int) string {
	tasks := map[bool]string{true: "task", false: "tasks"}[len(r.Tasks) == 1]
	switch {
	case first && r.Array != "" && len(r.Tasks) == shards:
		return fmt.Sprintf("submitted array job %s (%d %s) and merge job %s", r.Array, shards, tasks, r.Merge)
	case first && r.Array != "":
		return fmt.Sprintf("submitted %s %s as array job %s (the other shards are there); merge job %s waits for them", tasks, TaskList(r.Tasks), r.Array, r.Merge)
	case r.Array != "":
		return fmt.Sprintf("resubmitted %s %s as array job %s; merge job %s waits for them", tasks, TaskList(r.Tasks), r.Array, r.Merge)
	case r.Merge != "":
		return fmt.Sprintf("every shard is there: submitted merge job %s", r.Merge)
	case r.Complete:
		return NothingLeft(dir)
	}
	return "no task to resubmit: the tasks without a shard, or the merge job, are pending or running"
}

// NothingLeft says that job folder dir has nothing left to submit.
func NothingLeft(dir string) string {
	return fmt.Sprintf("nothing to resubmit: every shard is there and %s is written", filepath.Join(dir, MergedFile))
}

// Submitted reports whether Resubmit submitted anything.
func (r *Resubmitted) Submitted() bool { return r.Array != "" || r.Merge != "" }

// Resubmit submits again the tasks that have no shard file and that Slurm
// does not run or hold now (failed, cancelled, timed out, lost), then a
// new merge job depending on them; a merge job still pending on the old
// array (whose dependency can no longer be met) is cancelled first. It
// returns what it submitted: the tasks and the jobs; with every shard
// there and merged.json not written, the merge job alone (unless one is
// pending or running); nothing when every shard is there and merged.json
// is written (Complete), or when the tasks without a shard are all
// pending or running, or the merge job is. A
// folder never submitted (slurm without --submit) follows the same rule:
// its tasks without a shard (all of them, the whole array, unless some
// were computed by hand) and the merge.
//
// While Slurm cannot be asked (Status.Refusal) it submits nothing and
// returns an *UnknownError. force submits the Unknown tasks again too (and
// cancels a merge job whose state is unknown, or submits the merge again):
// for when the caller knows they are not running, squeue being down.
func (st *State) Resubmit(ctx context.Context, r Runner, force bool) (Resubmitted, error) {
	s, err := st.Status(ctx, r)
	if err != nil {
		return Resubmitted{}, err
	}
	if err := s.Refusal(); err != nil && !force {
		return Resubmitted{}, err
	}
	redo := s.Redo()
	if force {
		redo = append(redo, s.Unknown()...)
		slices.Sort(redo)
	}
	var after []string
	for _, t := range s.Tasks {
		if !t.Done() && t.Active() {
			after = append(after, t.Job)
		}
	}
	if len(redo) == 0 {
		if s.Merged || s.MergeLive() || len(after) > 0 {
			return Resubmitted{Complete: s.Complete()}, nil // done, or on its way
		}
		out, err := r.Run(ctx, "sbatch", "--parsable", filepath.Join(st.Plan.Dir, MergeScript))
		if err != nil {
			return Resubmitted{}, err
		}
		id, err := jobID(out)
		if err != nil {
			return Resubmitted{}, err
		}
		st.MergeJob = id
		return Resubmitted{Merge: id}, st.save()
	}
	if st.MergeJob != "" && (s.Merge == "PENDING" || s.MergeUnknown()) {
		// It waits on an array with a failed task: its dependency can no
		// longer be met. (Unknown, it is cancelled too: scancel leaves a
		// finished job as it is.)
		_, _ = r.Run(ctx, "scancel", st.MergeJob)
	}
	tasks := redo
	if len(st.ArrayJobs) == 0 && len(redo) == st.Plan.Shards {
		tasks = nil // the whole array, as its script says
	}
	n, merge := len(st.ArrayJobs), st.MergeJob
	err = st.Submit(ctx, r, tasks, false, after...)
	res := Resubmitted{Tasks: redo}
	if len(st.ArrayJobs) > n {
		res.Array = st.ArrayJobs[len(st.ArrayJobs)-1]
	}
	if st.MergeJob != merge {
		res.Merge = st.MergeJob
	}
	return res, err
}
