package slurm

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/muesli/termenv"

	"sweepbench/engine"
	store "sweepbench/sessions"
	cluster "sweepbench/slurm"
	"sweepbench/tui/common"
	"sweepbench/tui/keys"
	"sweepbench/tui/theme"
)

// fakeSlurm answers sbatch with increasing job ids from 100, squeue from
// a table (sacct is off, as on a cluster without accounting), and
// records every command; the commands in missing are not found, and
// squeueErr makes squeue fail.
type fakeSlurm struct {
	mu        sync.Mutex
	next      int
	queue     string
	calls     []string
	missing   []string
	squeueErr error
}

func (f *fakeSlurm) Run(_ context.Context, name string, args ...string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, name+" "+strings.Join(args, " "))
	if slices.Contains(f.missing, name) {
		return "", &exec.Error{Name: name, Err: exec.ErrNotFound}
	}
	switch name {
	case "sbatch":
		f.next++
		return strconv.Itoa(100+f.next) + "\n", nil
	case "squeue":
		if f.squeueErr != nil {
			return "", f.squeueErr
		}
		return f.queue, nil
	case "sacct":
		return "", errors.New("sacct: Slurm accounting storage is disabled")
	}
	return "", nil
}

func (f *fakeSlurm) sbatches() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.calls {
		if strings.HasPrefix(c, "sbatch ") {
			out = append(out, c)
		}
	}
	return out
}

// host records the intents the screen hands the root and keeps the
// status line the screen's messages change.
type host struct {
	intents []tea.Msg
	status  common.Status
}

func (h *host) Do(intent tea.Msg) tea.Cmd {
	if !h.status.Apply(intent) {
		h.intents = append(h.intents, intent)
	}
	return nil
}
func (h *host) Screen() common.ScreenID { return common.SlurmScreen }
func (h *host) Running() bool           { return false }
func (h *host) Status() common.Status   { return h.status }
func (h *host) last() tea.Msg           { return h.intents[len(h.intents)-1] }
func (h *host) backs() (n int) {
	for _, i := range h.intents {
		if _, ok := i.(common.BackMsg); ok {
			n++
		}
	}
	return n
}

// jobFolder writes a 6-task job folder submitted as array 1 and merge 2:
// task 0 and 3 have their shard, 1 failed, 2 runs, 4 is pending and 5
// neither squeue nor sacct knows.
func jobFolder(t *testing.T) (string, *fakeSlurm) {
	t.Helper()
	dir := t.TempDir()
	p := &cluster.Plan{Dir: dir, Binary: "/opt/sweepbench", Chdir: "/work", Shards: 6, GPUsPerTask: 1, Partition: "gpu",
		Time: "1:00:00", RunArgs: []string{"--data", "embedded:btcusdt-1m", "--hma", "10:200:10", "--backend", "cuda"}}
	st, err := p.Write()
	if err != nil {
		t.Fatal(err)
	}
	st.ArrayJobs, st.MergeJob = []string{"1"}, "2"
	if err := writeState(st); err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{0, 3} {
		if err := os.WriteFile(filepath.Join(dir, engine.ShardName(k, 6)), make([]byte, 2500*(k+1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, &fakeSlurm{queue: "1_0 COMPLETED\n1_1 FAILED\n1_2 RUNNING\n1_3 COMPLETED\n1_4 PENDING\n2 PENDING\n"}
}

// writeState records st's jobs as Submit would (Submit itself through a
// fake sbatch, whose ids are then the ones the test names).
func writeState(st *cluster.State) error {
	f := &fakeSlurm{}
	arr, merge := st.ArrayJobs, st.MergeJob
	st.ArrayJobs, st.MergeJob = nil, ""
	if err := st.Submit(context.Background(), f, nil, false); err != nil {
		return err
	}
	// Submit gave 101 and 102: write the test's ids over them.
	js, err := os.ReadFile(filepath.Join(st.Plan.Dir, cluster.StateFile))
	if err != nil {
		return err
	}
	s := strings.Replace(string(js), `"101"`, `"`+arr[0]+`"`, 1)
	s = strings.Replace(s, `"merge_job": "102"`, `"merge_job": "`+merge+`"`, 1)
	return os.WriteFile(filepath.Join(st.Plan.Dir, cluster.StateFile), []byte(s), 0o644)
}

func newScreen(t *testing.T, r cluster.Runner, dirs ...string) (*Model, *host) {
	t.Helper()
	ctx := &common.Context{Theme: theme.New(termenv.Ascii, true), Keys: keys.Default(), Deterministic: true}
	h := &host{}
	m := New(ctx, h, context.Background(), Config{Runner: r, Dirs: dirs, Unavailable: "not here"})
	m.SetSize(100, 30)
	return m, h
}

// do runs cmd and hands the screen its answers, following the commands
// they return except the refresh timer's (the screen's own tick, which
// would wait Every): it reports whether a timer was armed.
func do(t *testing.T, m *Model, cmd tea.Cmd) (armed bool) {
	t.Helper()
	for cmd != nil {
		msg := cmd()
		if b, ok := msg.(tea.BatchMsg); ok {
			for _, c := range b {
				armed = do(t, m, c) || armed
			}
			return armed
		}
		sm, ok := msg.(common.ScreenMsg)
		if !ok || sm.ID != common.SlurmScreen {
			return armed // the text field's
		}
		next := m.Update(sm.Msg)
		if _, ok := sm.Msg.(statusMsg); ok {
			return next != nil // the timer: not followed
		}
		cmd = next
	}
	return armed
}

func press(t *testing.T, m *Model, k string) bool {
	t.Helper()
	var msg tea.KeyMsg
	switch k {
	case "esc":
		msg = tea.KeyMsg{Type: tea.KeyEsc}
	case "enter":
		msg = tea.KeyMsg{Type: tea.KeyEnter}
	default:
		msg = tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
	}
	return do(t, m, m.Update(msg))
}

func TestStatusView(t *testing.T) {
	dir, f := jobFolder(t)
	m, _ := newScreen(t, f, dir)
	if !do(t, m, m.Shown(true)) {
		t.Error("no refresh timer armed while shown")
	}
	v := m.View()
	for _, want := range []string{
		"Slurm: " + dir,
		"6 shards; partition gpu; 1 GPU a task; time 1:00:00",
		"--data embedded:btcusdt-1m --hma 10:200:10 --backend cuda",
		"array 1",
		"tasks    6: 2 done, 1 running, 1 pending, 1 failed, 1 missing",
		"merge    job 2: PENDING; merged.json not yet",
		"note     sacct: Slurm accounting storage is disabled",
		"TASK  JOB  STATE      SHARD                    SIZE",
		"   0  1_0  COMPLETED  shard-0-of-6.parquet   2.5 kB",
		"   1  1_1  FAILED     missing",
		"   2  1_2  RUNNING    (computing)",
		"   3  1_3  COMPLETED  shard-3-of-6.parquet  10.0 kB",
		"   4  1_4  PENDING    (computing)",
		"   5  -    -          missing",
	} {
		if !strings.Contains(v, want) {
			t.Errorf("the view lacks %q:\n%s", want, v)
		}
	}
	// A stale timer does nothing; the current one reads the folder again.
	f.calls = nil
	if m.Update(tickMsg{gen: m.tick - 1}) != nil {
		t.Error("a stale timer read the folder")
	}
	do(t, m, m.Update(tickMsg{gen: m.tick}))
	if len(f.calls) == 0 {
		t.Error("the timer did not read the folder")
	}
	// Off display, the timer stops.
	m.Shown(false)
	if m.Update(tickMsg{gen: m.tick}) != nil {
		t.Error("the timer runs while the screen is not shown")
	}
}

// TestResubmitAsks: R asks first, any other key cancels, y submits
// exactly the failed and missing tasks.
func TestResubmitAsks(t *testing.T) {
	dir, f := jobFolder(t)
	m, _ := newScreen(t, f, dir)
	do(t, m, m.Shown(true))
	press(t, m, "R")
	if !m.Confirming() || !strings.Contains(m.View(), "resubmit tasks 1, 5 (failed or missing) and a merge job that waits for them? y submits") {
		t.Fatalf("R did not ask:\n%s", m.View())
	}
	if !m.Takes(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")}) {
		t.Error("the question does not take every key")
	}
	press(t, m, "n")
	if m.Confirming() || len(f.sbatches()) != 0 || !strings.Contains(m.View(), "resubmit cancelled") {
		t.Fatalf("n did not cancel: %v\n%s", f.sbatches(), m.View())
	}
	press(t, m, "R")
	press(t, m, "y")
	want := []string{"sbatch --parsable --array=1,5 " + filepath.Join(dir, cluster.ArrayScript),
		"sbatch --parsable --dependency=afterok:101:1_2:1_4 " + filepath.Join(dir, cluster.MergeScript)}
	if got := f.sbatches(); !reflect.DeepEqual(got, want) {
		t.Fatalf("sbatch %q, want %q", got, want)
	}
	if v := m.View(); !strings.Contains(v, "resubmitted tasks 1,5 as array job 101; merge job 102 waits for them") {
		t.Errorf("the view does not say what was resubmitted:\n%s", v)
	}
}

// TestResubmitNeverSubmitted: R on a folder never submitted whose shards
// 0 and 1 were computed by hand asks for task 2 alone, and y submits it
// (--array=2) and the merge.
func TestResubmitNeverSubmitted(t *testing.T) {
	dir := t.TempDir()
	if _, err := (&cluster.Plan{Dir: dir, Binary: "/opt/sweepbench", Chdir: "/work", Shards: 3}).Write(); err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{0, 1} {
		if err := os.WriteFile(filepath.Join(dir, engine.ShardName(k, 3)), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f := &fakeSlurm{}
	m, _ := newScreen(t, f, dir)
	do(t, m, m.Shown(true))
	if v := flat(m.View()); !strings.Contains(v, "jobs not submitted yet (R submits the tasks without a shard and their merge)") {
		t.Errorf("the jobs line with shards 0 and 1 there:\n%s", m.View())
	}
	press(t, m, "R")
	if v := flat(m.View()); !m.Confirming() || !strings.Contains(v, "submit task 2 (their shards are missing; the others are there) and a merge job that waits for them? (never submitted) y submits") {
		t.Fatalf("R did not ask for task 2:\n%s", m.View())
	}
	press(t, m, "y")
	want := []string{"sbatch --parsable --array=2 " + filepath.Join(dir, cluster.ArrayScript),
		"sbatch --parsable --dependency=afterok:101 " + filepath.Join(dir, cluster.MergeScript)}
	if got := f.sbatches(); !reflect.DeepEqual(got, want) {
		t.Fatalf("sbatch %q, want %q", got, want)
	}
	if v := flat(m.View()); !strings.Contains(v, "submitted task 2 as array job 101 (the other shards are there); merge job 102 waits for them") {
		t.Errorf("the view does not say what was submitted:\n%s", m.View())
	}
}

// TestErrors: a folder that is not a job folder, and Slurm's commands
// missing, are said with the folder and the command; esc goes back.
func TestErrors(t *testing.T) {
	m, _ := newScreen(t, &fakeSlurm{}, t.TempDir())
	do(t, m, m.Shown(true))
	if v := m.View(); !strings.Contains(v, "no slurm.json here: not a folder") {
		t.Errorf("not a job folder:\n%s", v)
	}
	missing := filepath.Join(t.TempDir(), "nope")
	m, _ = newScreen(t, &fakeSlurm{}, missing)
	do(t, m, m.Shown(true))
	if v := flat(m.View()); !strings.Contains(v, missing+": the folder does not exist (a job folder is one sweepbench slurm --out DIR wrote)") {
		t.Errorf("a folder that does not exist:\n%s", v)
	}
	dir, f := jobFolder(t)
	f.missing = []string{"sbatch"}
	m, _ = newScreen(t, f, dir)
	do(t, m, m.Shown(true))
	press(t, m, "R")
	press(t, m, "y")
	if v := m.View(); !strings.Contains(v, "resubmit "+dir+": sbatch is not on this machine's PATH") {
		t.Errorf("sbatch missing:\n%s", v)
	}
	// squeue missing: the states are unknown, R refuses (TestUnknown).
	f.missing = []string{"squeue", "sacct", "sbatch"}
	press(t, m, "r")
	if v := m.View(); !strings.Contains(v, `squeue failed: exec: "squeue": executable file not found`) || !strings.Contains(v, "5  -    unknown  missing") {
		t.Errorf("squeue missing:\n%s", v)
	}
	m2, h2 := newScreen(t, nil)
	if v := m2.View(); !strings.Contains(v, "not here") {
		t.Errorf("without a runner:\n%s", v)
	}
	press(t, m2, "R")
	press(t, m2, "esc")
	if h2.backs() != 1 {
		t.Errorf("esc did not go back: %v", h2.intents)
	}
}

// TestFolderField: with no folder the field takes the keys; enter shows
// the folder typed, which is remembered with the others once read. e
// opens the field empty (the folder shown as its placeholder), so that
// what is typed replaces it; a folder that cannot be read is shown with
// its error but not kept among those left/right cycles through.
func TestFolderField(t *testing.T) {
	dir, f := jobFolder(t)
	m, _ := newScreen(t, f)
	do(t, m, m.Shown(true))
	if !m.Takes(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")}) || !strings.Contains(m.View(), "folder: ") {
		t.Fatalf("no folder field:\n%s", m.View())
	}
	do(t, m, m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(dir), Paste: true}))
	press(t, m, "enter")
	if m.Dir() != dir || !strings.Contains(m.View(), "2 done, 1 running") {
		t.Fatalf("enter did not show %s:\n%s", dir, m.View())
	}
	press(t, m, "e")
	if m.input.Value() != "" || m.input.Placeholder != dir {
		t.Fatalf("e opened the field with %q (placeholder %q), want it empty with %q as placeholder", m.input.Value(), m.input.Placeholder, dir)
	}
	press(t, m, "enter") // nothing typed: the folder shown stays
	if m.editing || m.Dir() != dir {
		t.Fatalf("enter on an empty field: editing %v, shown %s", m.editing, m.Dir())
	}
	other, _ := jobFolder(t)
	bad := filepath.Join(t.TempDir(), "nope")
	for _, d := range []string{other, bad} {
		press(t, m, "e")
		do(t, m, m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(d), Paste: true}))
		if m.input.Value() != d {
			t.Fatalf("typed %q into the field, it holds %q", d, m.input.Value())
		}
		press(t, m, "enter")
	}
	if v := flat(m.View()); m.Dir() != bad || !reflect.DeepEqual(m.dirs, []string{dir, other}) ||
		!strings.Contains(v, bad+": the folder does not exist") || !strings.Contains(v, "folder never read (left/right: the 2 folders read)") {
		t.Fatalf("dirs %v, shown %s:\n%s", m.dirs, m.Dir(), m.View())
	}
	do(t, m, m.Update(tea.KeyMsg{Type: tea.KeyLeft}))
	if m.Dir() != other || !strings.Contains(m.View(), "folder   2 of 2") {
		t.Errorf("left did not go back to %s:\n%s", other, m.View())
	}
	do(t, m, m.Update(tea.KeyMsg{Type: tea.KeyLeft}))
	if m.Dir() != dir || !strings.Contains(m.View(), "folder   1 of 2") {
		t.Errorf("left did not go to %s:\n%s", dir, m.View())
	}
}

// TestOpenMerged: enter opens the merged session only from the
// workbench's own database, and says where it is otherwise.
func TestOpenMerged(t *testing.T) {
	dir, f := jobFolder(t)
	for _, k := range []int{1, 2, 4, 5} {
		if err := os.WriteFile(filepath.Join(dir, engine.ShardName(k, 6)), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f.queue = "2 COMPLETED\n"
	if err := os.WriteFile(filepath.Join(dir, cluster.MergedFile), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	m, h := newScreen(t, f, dir)
	st, err := store.Open(filepath.Join(t.TempDir(), "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m.cfg.Store = st
	do(t, m, m.Shown(true))
	press(t, m, "enter")
	if !strings.Contains(h.status.LastErr, "the merge recorded no session") {
		t.Errorf("enter without a record: %q", h.status.LastErr)
	}
	db := filepath.Join(t.TempDir(), "other.db")
	if err := cluster.WriteMerged(filepath.Join(dir, cluster.SessionsFile), &cluster.Merged{DB: db, Sessions: []int64{7}}); err != nil {
		t.Fatal(err)
	}
	press(t, m, "r")
	if v := m.View(); !strings.Contains(v, "6: 6 done") || !strings.Contains(v, "merged.json written; saved as session 7 in") || !strings.Contains(v, db) {
		t.Errorf("merged:\n%s", v)
	}
	// A suite of two datasets: its sessions, as the command line names them.
	if err := cluster.WriteMerged(filepath.Join(dir, cluster.SessionsFile), &cluster.Merged{DB: db, Sessions: []int64{7, 8}}); err != nil {
		t.Fatal(err)
	}
	press(t, m, "r")
	if v := m.View(); !strings.Contains(v, "saved as sessions 7, 8 in") {
		t.Errorf("merged as two sessions:\n%s", v)
	}
	press(t, m, "enter")
	if !strings.Contains(h.status.LastErr, "not in this workbench's database: open it with sweepbench tui --db "+db) {
		t.Errorf("enter with another database: %q", h.status.LastErr)
	}
	// In the workbench's database: enter reads it there (this one is not
	// saved: the store says so; the tui's tests open a real one).
	if err := cluster.WriteMerged(filepath.Join(dir, cluster.SessionsFile), &cluster.Merged{DB: st.Path(), Sessions: []int64{7}}); err != nil {
		t.Fatal(err)
	}
	press(t, m, "r")
	if !strings.Contains(m.View(), "(enter opens it)") {
		t.Errorf("enter is not offered:\n%s", m.View())
	}
	h.status.SetErr(nil)
	press(t, m, "enter")
	if !strings.Contains(h.status.LastErr, "7") || len(h.intents) != 0 {
		t.Errorf("enter on a session the store lacks: %q, intents %v", h.status.LastErr, h.intents)
	}
}

// TestUnknown: squeue failing (slurmctld restarting) and sacct off, the
// tasks without a shard are unknown, not missing: the screen says so and
// why, and R refuses (nothing is submitted) instead of asking; a question
// already asked is withdrawn when a refresh finds the states unknown; once
// squeue answers, R asks again as before.
func TestUnknown(t *testing.T) {
	dir, f := jobFolder(t)
	f.squeueErr = errors.New("squeue: exit status 1: slurm_load_jobs error: Unable to contact slurm controller (connect failure)")
	m, _ := newScreen(t, f, dir)
	do(t, m, m.Shown(true))
	v := m.View()
	for _, want := range []string{
		"tasks    6: 2 done, 0 running, 0 pending, 0 failed, 0 missing, 4 unknown",
		"merge    job 2: unknown; merged.json not yet",
		"unknown  squeue failed: exit status 1: slurm_load_jobs error: Unable to contact slurm controller",
		"   0  -    -        shard-0-of-6.parquet   2.5 kB",
		"   2  -    unknown  missing",
	} {
		if !strings.Contains(v, want) {
			t.Errorf("the view lacks %q:\n%s", want, v)
		}
	}
	if !strings.Contains(flat(v), "tasks 1,2,4,5 may be running or pending: R submits nothing until squeue answers") {
		t.Errorf("the view does not say what R does:\n%s", v)
	}
	press(t, m, "R")
	v = m.View()
	if m.Confirming() || !strings.Contains(flat(v), "the states of tasks 1,2,4,5 are unknown: nothing resubmitted") ||
		!strings.Contains(flat(v), "sweepbench slurm resubmit --force "+dir) {
		t.Errorf("R did not refuse:\n%s", v)
	}
	press(t, m, "y")
	if got := f.sbatches(); len(got) != 0 {
		t.Fatalf("submitted %q with the states unknown", got)
	}
	// Asked while squeue answered, refused when it stops answering.
	f.squeueErr = nil
	press(t, m, "r")
	press(t, m, "R")
	if !m.Confirming() {
		t.Fatalf("R did not ask once squeue answered:\n%s", m.View())
	}
	f.squeueErr = errors.New("squeue: signal: killed")
	do(t, m, m.refresh())
	if m.Confirming() || !strings.Contains(flat(m.View()), "squeue failed: signal: killed") {
		t.Errorf("the question stayed with the states unknown:\n%s", m.View())
	}
	press(t, m, "y")
	if got := f.sbatches(); len(got) != 0 {
		t.Fatalf("submitted %q with the states unknown", got)
	}
	// The states turn unknown between y and Resubmit: it refuses itself.
	f.squeueErr = nil
	press(t, m, "r")
	press(t, m, "R")
	f.squeueErr = errors.New("squeue: signal: killed")
	press(t, m, "y")
	if got := f.sbatches(); len(got) != 0 || !strings.Contains(flat(m.View()), "resubmit "+dir+": squeue failed: signal: killed") {
		t.Fatalf("submitted %q:\n%s", got, m.View())
	}
}

// flat is a view's words, one space apart, without the pane's borders:
// a sentence the pane wrapped reads as one.
func flat(v string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(v, "|", " ")), " ")
}

// TestResubmitEveryShard: every shard computed by hand in a folder never
// submitted. With merged.json written, the jobs line says nothing is
// left (it said R submits the array) and R says there is nothing to
// resubmit and submits nothing (it did nothing visible: fresh-user
// trial); without it, the jobs line says R submits the merge job, R asks
// for it and y submits it.
func TestResubmitEveryShard(t *testing.T) {
	dir := t.TempDir()
	if _, err := (&cluster.Plan{Dir: dir, Binary: "/opt/sweepbench", Chdir: "/work", Shards: 2}).Write(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{engine.ShardName(0, 2), engine.ShardName(1, 2), cluster.MergedFile} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f := &fakeSlurm{}
	m, _ := newScreen(t, f, dir)
	do(t, m, m.Shown(true))
	if v := flat(m.View()); !strings.Contains(v, "jobs not submitted (every shard is there and merged.json is written: nothing to submit)") ||
		!strings.Contains(v, "merge no merge job submitted; merged.json written") {
		t.Errorf("the jobs line with merged.json written:\n%s", m.View())
	}
	press(t, m, "R")
	if v := flat(m.View()); m.Confirming() || len(f.sbatches()) != 0 ||
		!strings.Contains(v, "nothing to resubmit: every shard is there and "+filepath.Join(dir, cluster.MergedFile)+" is written") {
		t.Fatalf("R with merged.json written: sbatch %q\n%s", f.sbatches(), m.View())
	}
	if err := os.Remove(filepath.Join(dir, cluster.MergedFile)); err != nil {
		t.Fatal(err)
	}
	press(t, m, "r")
	if v := flat(m.View()); !strings.Contains(v, "jobs not submitted (every shard is there: R submits the merge job, or sweepbench merge DIR merges them here)") {
		t.Errorf("the jobs line with every shard there:\n%s", m.View())
	}
	press(t, m, "R")
	if v := flat(m.View()); !m.Confirming() || !strings.Contains(v, "every shard is there but nothing merged: submit the merge job? (never submitted) y submits") {
		t.Fatalf("R without merged.json did not ask:\n%s", m.View())
	}
	press(t, m, "y")
	if got, want := f.sbatches(), []string{"sbatch --parsable " + filepath.Join(dir, cluster.MergeScript)}; !reflect.DeepEqual(got, want) {
		t.Fatalf("sbatch %q, want %q", got, want)
	}
	if v := flat(m.View()); !strings.Contains(v, "every shard is there: submitted merge job 101") {
		t.Errorf("the view does not say the merge job was submitted:\n%s", m.View())
	}
}

// TestQuestionFits: R's question on a 300-task folder with 200 tasks to
// resubmit and a tall header (long run flags, sacct's note) is on screen
// whole at 80x24 and 140x45 (the workbench gives the screen two lines
// less): every task it names, "y submits" and "other key cancels" (only
// the last words showed at 140x45: fresh-user trial); the table gets
// what is left.
func TestQuestionFits(t *testing.T) {
	dir, queue, redo := bigFolder(t)
	want := "resubmit tasks " + strings.Join(redo, ", ") + " (failed or missing) and a merge job that waits for them? y submits, any other key cancels"
	for _, size := range [][2]int{{80, 24}, {140, 45}} {
		m, _ := newScreen(t, &fakeSlurm{queue: queue}, dir)
		m.SetSize(size[0], size[1]-2)
		do(t, m, m.Shown(true))
		press(t, m, "R")
		v := m.View()
		if n := strings.Count(v, "\n") + 1; !m.Confirming() || n != size[1]-2 || !strings.Contains(flat(v), want) || !strings.Contains(v, "read at -") {
			t.Errorf("%dx%d: the question is not whole on screen (%d lines):\n%s", size[0], size[1], n, v)
		}
	}
}

// bigFolder writes a 300-task job folder submitted as array 1 and merge
// 2 with long run flags: every third task has its shard, the others
// failed (queue is squeue's answer, redo those tasks).
func bigFolder(t *testing.T) (dir, queue string, redo []string) {
	t.Helper()
	dir = t.TempDir()
	var args []string
	for i := range 40 {
		args = append(args, "--data", "/shared/data/symbol-"+strconv.Itoa(i)+".csv")
	}
	p := &cluster.Plan{Dir: dir, Binary: "/opt/sweepbench", Chdir: "/work", Shards: 300, RunArgs: append(args, "--hma", "10:400", "--hma3", "10:400")}
	st, err := p.Write()
	if err != nil {
		t.Fatal(err)
	}
	st.ArrayJobs, st.MergeJob = []string{"1"}, "2"
	if err := writeState(st); err != nil {
		t.Fatal(err)
	}
	var q strings.Builder
	for k := range 300 {
		if k%3 == 0 {
			if err := os.WriteFile(filepath.Join(dir, engine.ShardName(k, 300)), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		q.WriteString("1_" + strconv.Itoa(k) + " FAILED\n")
		redo = append(redo, strconv.Itoa(k))
	}
	return dir, q.String(), redo
}

// noConfig is sbatch on a machine without a Slurm configuration, its
// error as slurm.Exec words it (the command, its exit status, its whole
// stderr); squeue and sacct fail so too once sbatch has.
type noConfig struct{ *fakeSlurm }

func (f noConfig) Run(ctx context.Context, name string, args ...string) (string, error) {
	if name == "sbatch" || len(f.sbatches()) > 0 {
		f.fakeSlurm.Run(ctx, name, args...) // recorded
		return "", errors.New(name + ": exit status 1: " + name + ": error: resolve_ctls_from_dns_srv: res_nsearch error: Unknown host\n" +
			name + ": error: fetch_config: DNS SRV lookup failed\n" + name + ": fatal: Could not establish a configuration source")
	}
	return f.fakeSlurm.Run(ctx, name, args...)
}

// TestSbatchFails: y, and sbatch fails: the screen says what the command
// line says (resubmit DIR: sbatch: exit status 1: and sbatch's whole
// stderr), wrapped, at 80x24 and 140x45 on a folder with a tall header,
// squeue failing too on the refresh that follows (only the last line of
// sbatch's stderr showed: fresh-user trial).
func TestSbatchFails(t *testing.T) {
	dir, queue, _ := bigFolder(t)
	want := "resubmit " + dir + ": sbatch: exit status 1: sbatch: error: resolve_ctls_from_dns_srv: res_nsearch error: Unknown host " +
		"sbatch: error: fetch_config: DNS SRV lookup failed sbatch: fatal: Could not establish a configuration source"
	for _, size := range [][2]int{{80, 24}, {140, 45}} {
		f := &fakeSlurm{queue: queue}
		m, _ := newScreen(t, noConfig{f}, dir)
		m.SetSize(size[0], size[1]-2)
		do(t, m, m.Shown(true))
		press(t, m, "R")
		press(t, m, "y")
		if got := f.sbatches(); len(got) != 1 || !strings.HasPrefix(got[0], "sbatch --parsable --array=1,2,4,") {
			t.Fatalf("%dx%d: sbatch %q", size[0], size[1], got)
		}
		if v := m.View(); !strings.Contains(flat(v), want) || !strings.Contains(v, "read at -") || m.status.Unanswered == nil {
			t.Errorf("%dx%d: the view lacks %q (squeue unanswered: %v):\n%s", size[0], size[1], want, m.status.Unanswered, v)
		}
	}
}
