package tui

import (
	"context"
	"errors"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/muesli/termenv"
)

// Remote is the workbench on a terminal that is not the process's own: one
// SSH connection of sweepbench serve. Its Program is run by the caller
// (wish's bubbletea middleware); Close ends it.
type Remote struct {
	Program *tea.Program
	m       *Model
}

// NewRemote builds the workbench for a terminal the caller provides
// through opts (tea.WithInput, tea.WithOutput: the SSH session), drawn
// for that terminal's colour profile (termenv.Ascii: the plain theme,
// NO_COLOR) and background. Unlike Run it changes no process-wide state:
// the caller decides how styles reach the terminal (sweepbench serve
// renders in true colour and downsamples each connection's output).
// ctx bounds what the workbench starts (cfg.Background, when set, the
// studies instead).
func NewRemote(ctx context.Context, cfg Config, profile termenv.Profile, dark bool, opts ...tea.ProgramOption) (*Remote, error) {
	if cfg.Registry == nil {
		return nil, errors.New("tui: no backend registry")
	}
	m := newModel(ctx, cfg, profile, dark, false)
	m.status.Info = cfg.Banner
	// No tea.WithContext: the caller ends the program with Quit when its
	// connection ends (a clean exit, not a kill).
	opts = append([]tea.ProgramOption{tea.WithAltScreen(), tea.WithoutSignalHandler()}, opts...)
	return &Remote{Program: tea.NewProgram(m, opts...), m: m}, nil
}

// Close ends the workbench's studies once its program has returned,
// except a study the user kept (K on the run screen), and returns a
// channel closed when the last study's goroutine has returned, having
// recorded its final state in the sessions store (close the store only
// then). A study not kept is given up to wait to record its state.
func (r *Remote) Close(wait time.Duration) <-chan struct{} {
	done := make(chan struct{})
	kept := r.m.run.Kept()
	if !kept {
		r.m.run.Stop()
	}
	r.m.bench.Stop()
	go func() {
		defer close(done)
		if kept {
			r.m.run.Wait(time.Duration(1<<63 - 1))
			return
		}
		r.m.run.Wait(wait)
	}()
	return done
}

// Kept reports whether the user asked the study that computes to go on
// after the workbench ends (K on the run screen).
func (r *Remote) Kept() bool { return r.m.run.Kept() }
