package slurm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"sweepbench/engine"
	store "sweepbench/sessions"
	cluster "sweepbench/slurm"
	"sweepbench/tui/common"
)

// The answers of the screen's commands, tagged for it (common.Tag); gen
// is the request they answer: a stale one is dropped.
type (
	// statusMsg is a job folder's state (cluster.Load, State.Status).
	statusMsg struct {
		gen    int
		dir    string
		state  *cluster.State
		status *cluster.Status
		at     time.Time
		err    error
	}
	// tickMsg is the refresh timer's: it reads the folder again while the
	// screen is shown.
	tickMsg struct{ gen int }
	// resubmittedMsg is Resubmit's answer: what it submitted.
	resubmittedMsg struct {
		dir    string
		first  bool // the folder's first submission (slurm without --submit)
		shards int  // the plan's tasks
		res    cluster.Resubmitted
		err    error
	}
	// openedMsg is the merged session read for the results screen.
	openedMsg struct {
		gen int
		o   common.OpenedMsg
		err error
	}
)

// statusCmd reads job folder dir: its plan and the jobs submitted
// (slurm.json), then each task's state from squeue and sacct through r
// and the files present (State.Status).
func statusCmd(ctx context.Context, gen int, r cluster.Runner, dir string) tea.Cmd {
	return common.Guard(func() tea.Msg {
		st, err := cluster.Load(dir)
		if err != nil {
			return statusMsg{gen: gen, dir: dir, err: loadError(err), at: time.Now()}
		}
		s, err := st.Status(ctx, r)
		return statusMsg{gen: gen, dir: dir, state: st, status: s, err: err, at: time.Now()}
	}, func(err error) tea.Msg { return statusMsg{gen: gen, dir: dir, err: err, at: time.Now()} })
}

// loadError phrases cluster.Load's error for the screen.
func loadError(err error) error {
	if nf := (*cluster.NoFolderError)(nil); errors.As(err, &nf) {
		return fmt.Errorf("%s: the folder does not exist (a job folder is one sweepbench slurm --out DIR wrote)", nf.Dir)
	}
	return err
}

// tickCmd asks for a refresh in d.
func tickCmd(gen int, d time.Duration) tea.Cmd {
	return tea.Tick(d, func(time.Time) tea.Msg { return tickMsg{gen} })
}

// resubmitCmd submits again the failed or missing tasks of dir
// (State.Resubmit, on the folder's state read again: it may have changed
// since the screen asked).
func resubmitCmd(ctx context.Context, r cluster.Runner, dir string) tea.Cmd {
	return common.Guard(func() tea.Msg {
		st, err := cluster.Load(dir)
		if err != nil {
			return resubmittedMsg{dir: dir, err: loadError(err)}
		}
		first := len(st.ArrayJobs) == 0
		res, err := st.Resubmit(ctx, r, false) // never forced here: see refused
		return resubmittedMsg{dir: dir, first: first, shards: st.Plan.Shards, res: res, err: commandError(dir, err)}
	}, func(err error) tea.Msg { return resubmittedMsg{dir: dir, err: err} })
}

// commandError says where a Slurm command could not be run: err as it
// came, with what to do when the command is not on this machine, or
// when the states are unknown (refused).
func commandError(dir string, err error) error {
	if err == nil {
		return nil
	}
	if ue := (*cluster.UnknownError)(nil); errors.As(err, &ue) {
		return refused(dir, ue)
	}
	var ee *exec.Error
	if errors.As(err, &ee) && errors.Is(err, exec.ErrNotFound) {
		return fmt.Errorf("resubmit %s: %s is not on this machine's PATH: run the workbench (or sweepbench slurm resubmit %s) on a machine that submits to the cluster", dir, ee.Name, dir)
	}
	return fmt.Errorf("resubmit %s: %w", dir, err)
}

// openCmd reads the merged session id of store st for the results
// screen (common.OpenSession, as the sessions screen opens one).
func openCmd(gen int, st *store.Store, load store.Loader, reg *engine.Registry, id int64) tea.Cmd {
	return common.Guard(func() tea.Msg {
		o, err := common.OpenSession(context.Background(), st, load, reg, id)
		return openedMsg{gen: gen, o: o, err: err}
	}, func(err error) tea.Msg { return openedMsg{gen: gen, err: err} })
}

// sameFile reports whether paths a and b name one file (the merge's
// database and the workbench's).
func sameFile(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(fa, fb)
	}
	aa, errA := filepath.Abs(a)
	ab, errB := filepath.Abs(b)
	return errA == nil && errB == nil && aa == ab
}

// refused phrases Resubmit's refusal while states are unknown. The screen
// never forces a resubmit: squeue is asked again every few seconds, and a
// transient failure clears itself; the command line's --force is there
// for the rare case a user knows better than the scheduler.
func refused(dir string, ue *cluster.UnknownError) error {
	what := "they may be running or pending, and resubmitting them would run them twice into the same shards"
	if len(ue.Tasks) == 0 {
		what = "it may be running, and submitting it again would merge twice"
	}
	return fmt.Errorf("resubmit %s: %w (%s: R again once squeue answers; sweepbench slurm resubmit --force %s submits anyway)", dir, ue, what, dir)
}
