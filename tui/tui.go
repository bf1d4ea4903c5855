// Package tui is the terminal workbench (issue 3): choose a dataset, set
// the grid and parameters, run the study with live progress, then read the
// metrics, the parity report, a heatmap over the grid, the crossover around
// each fp32/fp64 flip and one combo's equity and trades. Every number comes
// from the engine (engine.RunStudy, engine.InspectCombo,
// preflight.EstimateStudy); the TUI computes nothing of its own.
package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"sweepbench/engine"
	"sweepbench/engine/bench"
	"sweepbench/engine/preflight"
	"sweepbench/sessions"
	"sweepbench/slurm"
	"sweepbench/tui/common"
)

// Flags prefill the form: the study the command line described (the
// run flags, bound to an engine.Spec) and whether --data was given (then
// the dataset loads at once). Zero fields take engine.DefaultSpec's values.
type Flags struct {
	engine.Spec
	DataGiven bool
	// Datasets are --data's values when it named several (repeated, or
	// @LIST): the form's data field, a suite (Spec.Data is the first).
	Datasets []string
}

// DefaultFlags are the defaults of `sweepbench run` (engine.DefaultSpec).
func DefaultFlags() Flags { return Flags{Spec: engine.DefaultSpec()} }

// Config configures Run.
type Config struct {
	Registry *engine.Registry
	Flags    Flags
	// Input and Output default to the terminal (stdin, stdout).
	Input  io.Reader
	Output io.Writer
	// NoAltScreen keeps the normal screen (for recordings).
	NoAltScreen bool

	// Sessions is the sessions store (the root's --db): every run is
	// saved to it as `sweepbench run` saves (unless NoSave), and the
	// sessions screen browses it. Nil: runs are not saved and the
	// sessions screen says why (StoreErr when set: the database could
	// not be opened; runs then carry a warning that they are not saved).
	// The caller owns the store and closes it after Run returns.
	Sessions *sessions.Store
	StoreErr error
	NoSave   bool
	// LoadSession loads a saved session's dataset again from its Spec:
	// opening a session with its charts, comparing with flips, and
	// resuming need it. Nil: sessions.LoadSpec.
	LoadSession sessions.Loader
	// Rungs builds the method ladder of the bench screen (main's
	// benchRungs); nil: the bench screen says it is not available.
	Rungs func() []bench.Rung
	// BenchRepeat is the timed runs per rung (0: the engine's 3).
	BenchRepeat int

	// Preflight is how each study is checked before it starts, as `run`
	// checks it (preflight.PreflightStudy: refused when it cannot fit, asked
	// about when long or heavy); the zero value calibrates on this
	// machine (sweepbench serve: the server). Tests inject it.
	Preflight preflight.PreflightOptions

	// Gate, when set, admits every study (sweepbench serve's queue, one
	// GPU for many users): the run screen shows a study's place and ETA
	// while it waits.
	Gate common.Gate
	// Background, when set, is the context the studies compute under
	// instead of the workbench's own (sweepbench serve: the server's), and
	// the run screen offers K, keep the study computing when the
	// workbench ends (Remote.Close leaves it running).
	Background context.Context
	// Banner is a note on the status line at start (whose sessions these
	// are, on a server).
	Banner string
	// DataAllowed, when set, is asked before any dataset is read from the
	// form or the file picker (sweepbench serve: the operator's data
	// folders only); a refusal shows as the load's error. LoadSession is
	// the caller's to guard.
	DataAllowed func(spec string) error
	// DataRoots are the folders the file picker browses when DataAllowed
	// is set (sweepbench serve's --data-root): it starts in the first,
	// lists nothing above a root and follows no link out of one; with
	// several, a list of them comes first. DataAllowed set and no roots:
	// the picker lists nothing (the embedded datasets only). Without
	// DataAllowed and roots the picker starts in the working folder.
	DataRoots []string

	// SlurmRunner runs Slurm's commands (sbatch, squeue, sacct) for the
	// Slurm screen: slurm.Exec{} runs them on this machine. Nil: the
	// screen says it is not available. sweepbench serve leaves it nil: a
	// remote user would read folders and submit jobs on the server host.
	SlurmRunner slurm.Runner
	// SlurmDirs are the job folders the Slurm screen follows (tui
	// --slurm-dir); with one or more the workbench opens on that screen.
	SlurmDirs []string
}

// Run runs the workbench until the user quits or ctx ends. It restores the
// terminal on every exit path; a panic anywhere in the program is turned
// into an error (never a crash that leaves the terminal raw).
func Run(ctx context.Context, cfg Config) (err error) {
	if cfg.Registry == nil {
		return errors.New("tui: no backend registry")
	}
	out := cfg.Output
	if out == nil {
		out = os.Stdout
	}
	// Decide colour and background once, before the program owns the
	// terminal: asking the terminal later would race with key input.
	r := lipgloss.NewRenderer(out)
	profile := r.ColorProfile()
	dark := true
	if profile != termenv.Ascii {
		dark = r.HasDarkBackground()
	}
	lipgloss.SetColorProfile(profile)
	lipgloss.SetHasDarkBackground(dark)

	m := newModel(ctx, cfg, profile, dark, false)
	opts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithOutput(out)}
	if cfg.Input != nil {
		opts = append(opts, tea.WithInput(cfg.Input))
	}
	if !cfg.NoAltScreen {
		opts = append(opts, tea.WithAltScreen())
	}
	p := tea.NewProgram(m, opts...)
	defer func() {
		if r := recover(); r != nil {
			_ = p.ReleaseTerminal()
			err = fmt.Errorf("internal error: %v\n%s", r, debug.Stack())
		}
	}()
	final, err := p.Run()
	if fm, ok := final.(*Model); ok {
		// Cancel what runs and let it record its final state in the
		// sessions store before the caller closes the store.
		fm.run.Stop()
		fm.bench.Stop()
		fm.run.Wait(30 * time.Second)
	}
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return nil // interrupted from outside (SIGTERM): a clean exit
	}
	return err
}
