// Package cli is sweepbench's command line: the root command and one file
// per verb (run.go, merge.go, bench.go, sessions.go, report.go, serve.go,
// slurm.go, tui.go, misc.go for version and devices), with what verbs share
// in named files (flags.go, store.go, output.go, progress.go, errors.go).
// It lives in cli/ rather than cmd/ (soft-serve's cmd/ holds binaries):
// main.go at the module's root only calls Main.
//
// It binds flags to the run path (sessions, engine) and phrases its errors
// for the terminal; it builds no study of its own and computes nothing.
package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"sweepbench/cuda"
	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/metal"
	"sweepbench/reference"
)

// version is set at build time with -ldflags "-X sweepbench/cli.version=...".
var version = "0.1.0-dev"

// backends wires every backend into the engine's registry; the engine
// itself imports none of them.
func backends() *engine.Registry {
	r := &engine.Registry{}
	r.Register(reference.New())
	r.Register(cuda.New())
	r.Register(metal.New())
	return r
}

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "sweepbench",
		Short: "GPU parameter-sweep backtests with every fp32 result checked against fp64",
		Long: `sweepbench sweeps a Hull MA / HMA3 crossover over a grid of lengths on
minute bars, in fp64 and fp32 side by side, and ratifies the fast fp32
numbers against the fp64 reference through trade-count parity.

  sweepbench run                       the default sweep on the embedded FIL/USDT 1m data
  sweepbench run --data FILE --hma 10:100:10 --hma3 30:120:30
  sweepbench devices                   what can compute here`,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRootTUI(cmd)
		},
	}
	root.AddCommand(newRunCmd(), newDevicesCmd(), newVersionCmd(), newSessionsCmd(), newTUICmd(), newBenchCmd(), newMergeCmd(), newSlurmCmd(), newServeCmd(), newStrategiesCmd())
	addDBFlag(root)
	return root
}

// Main runs the command line on os.Args (signals, the CPU profile
// SWEEPBENCH_CPUPROFILE asks for) and returns the process's exit code,
// printing the error, phrased, first.
func Main() int {
	ctx, stop := signalContext()
	defer stop()
	stopProfile := startProfile()
	err := newRoot().ExecuteContext(ctx)
	stopProfile()
	if err == nil {
		return 0
	}
	fmt.Fprintln(os.Stderr, "sweepbench:", errorText(err))
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return 1
}

// errorText is an error as the terminal shows it: phrased for the command
// line, each line through data.Sanitize (a flag's value or a file's name
// cannot move the cursor or retitle the window).
func errorText(err error) string {
	lines := strings.Split(phrase(err), "\n")
	for i, l := range lines {
		lines[i] = data.Sanitize(l)
	}
	return strings.Join(lines, "\n")
}

// signalContext is cancelled by the first SIGINT (the user's Ctrl-C: a
// cancellation), SIGHUP or SIGTERM (the terminal went away, a shutdown:
// engine.Interrupted is the cause, so a saved study reads as interrupted
// and resumable); after it, signals have their default effect again (a
// second Ctrl-C kills). stop releases the signals.
func signalContext() (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	signalled = ctx // an --out FIFO's wait and writes (createOutput)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sigs:
			signal.Stop(sigs)
			switch s {
			case syscall.SIGHUP:
				cancel(&engine.Interrupted{Signal: "hangup"})
			case syscall.SIGTERM:
				cancel(&engine.Interrupted{Signal: "terminated"})
			default:
				cancel(context.Canceled)
			}
		case <-done:
		}
	}()
	return ctx, func() {
		close(done)
		signal.Stop(sigs)
		cancel(context.Canceled)
	}
}
