package tui

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest"
	"github.com/muesli/termenv"

	"sweepbench/engine"
	"sweepbench/slurm"
	"sweepbench/tui/common"
)

// fakeSlurm answers sbatch with job ids from 11, squeue from a table and
// sacct as a cluster without accounting does.
type fakeSlurm struct {
	mu    sync.Mutex
	next  int
	queue string
}

func (f *fakeSlurm) Run(_ context.Context, name string, _ ...string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch name {
	case "sbatch":
		f.next++
		return strconv.Itoa(10+f.next) + "\n", nil
	case "squeue":
		return f.queue, nil
	}
	return "", errors.New(name + ": exit status 1: Slurm accounting storage is disabled")
}

// slurmFolder writes job folder "sweep1" in a temporary working folder
// (so that the views name it the same on every machine): 4 tasks
// submitted as array 11 and merge 12, shards 0 and 2 written, task 1
// cancelled, task 3 running. back returns to the package's folder (its
// testdata).
func slurmFolder(t *testing.T) (f *fakeSlurm, dir string, back func()) {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	back = func() {
		if err := os.Chdir(wd); err != nil {
			t.Fatal(err)
		}
	}
	p := &slurm.Plan{Dir: "sweep1", Binary: "/opt/sweepbench", Chdir: "/work", Shards: 4, GPUsPerTask: 1, Partition: "gpu",
		RunArgs: []string{"--data", "embedded:btcusdt-1m", "--hma", "10:200:10", "--hma3", "12:50:2", "--backend", "cuda"}}
	st, err := p.Write()
	if err != nil {
		t.Fatal(err)
	}
	f = &fakeSlurm{}
	if err := st.Submit(context.Background(), f, nil, false); err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{0, 2} {
		if err := os.WriteFile(filepath.Join(p.Dir, engine.ShardName(k, 4)), make([]byte, 48_213+k), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f.queue = "11_0 COMPLETED\n11_1 CANCELLED\n11_2 COMPLETED\n11_3 RUNNING\n12 PENDING\n"
	return f, p.Dir, back
}

// TestGoldenSlurm: tui --slurm-dir opens on the Slurm screen (80x24):
// the folder's state, then R's question.
func TestGoldenSlurm(t *testing.T) {
	f, dir, back := slurmFolder(t)
	cfg := Config{Registry: testRegistry(), Flags: DefaultFlags(), SlurmRunner: f, SlurmDirs: []string{dir}}
	tm := teatest.NewTestModel(t, newModel(context.Background(), cfg, termenv.Ascii, true, true), teatest.WithInitialTermSize(80, 24))
	waitOutput(t, tm, "CANCELLED")
	tm.Send(keyMsg("ctrl+c"))
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(30*time.Second)).(*Model)
	fm.quitting = false
	back()
	requireGolden(t, "status", fm.View(), 80, 24)
	d := &driver{t: t, m: fm}
	d.key("R")
	requireGolden(t, "confirm", fm.View(), 80, 24)
}

// TestSlurmScreenKeys: J opens the Slurm screen from the setup screen,
// listed in the tab bar; esc goes back. Without a Slurm runner
// (sweepbench serve) it says it is not available and submits nothing.
func TestSlurmScreenKeys(t *testing.T) {
	d := newDriver(t, DefaultFlags(), 80, 24)
	d.global("J")
	v := d.m.View()
	if d.m.screen != common.SlurmScreen || !strings.Contains(v, "[Slurm]") || !strings.Contains(v, "not available in this workbench") {
		t.Fatalf("J:\n%s", v)
	}
	d.key("R", "y")
	d.key("esc")
	if d.m.screen != common.SetupScreen {
		t.Fatalf("esc went to %s", d.m.screen)
	}
}

// TestSlurmOpensMergedSession: once the merge recorded its session in
// the workbench's database, enter opens it in the results screen (the
// sessions screen's path).
func TestSlurmOpensMergedSession(t *testing.T) {
	st := tempStore(t)
	seedStore(t, st)
	f, dir, _ := slurmFolder(t)
	for _, k := range []int{1, 3} {
		if err := os.WriteFile(filepath.Join(dir, engine.ShardName(k, 4)), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, slurm.MergedFile), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := slurm.WriteMerged(filepath.Join(dir, slurm.SessionsFile), &slurm.Merged{DB: st.Path(), Sessions: []int64{1}}); err != nil {
		t.Fatal(err)
	}
	f.queue = "12 COMPLETED\n"
	cfg := storeConfig(DefaultFlags(), st)
	cfg.SlurmRunner, cfg.SlurmDirs = f, []string{dir}
	tm := teatest.NewTestModel(t, newModel(context.Background(), cfg, termenv.Ascii, true, true), teatest.WithInitialTermSize(120, 40))
	waitOutput(t, tm, "(enter opens it)")
	tm.Send(keyMsg("enter"))
	waitOutput(t, tm, "Metrics: 9 of 9")
	tm.Send(keyMsg("ctrl+c"))
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(30*time.Second)).(*Model)
	if fm.screen != common.ResultsScreen || fm.state.Results == nil {
		t.Fatalf("enter showed %s", fm.screen)
	}
}
