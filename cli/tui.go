package cli

import (
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"sweepbench/engine/bench"
	"sweepbench/slurm"
	"sweepbench/tui"
)

func newTUICmd() *cobra.Command {
	var (
		sf        studyFlags
		noSave    bool
		slurmDirs []string
	)
	cmd := &cobra.Command{
		Use:   "tui",
		Short: "Open the terminal workbench (the default when sweepbench runs in a terminal)",
		Long: `The workbench: choose a dataset, set the grid and parameters, run fp64 and
fp32 with live progress, then read the metrics, the parity report, a heatmap
over the grid, the crossover around each fp32/fp64 flip, one combo's
equity and trades, and, for a study with blocks (--blocks, --wf), the
robustness section: PBO, DSR, plateau, walk-forward (o). The study flags
of ` + "`run`" + ` prefill the form; --data loads
the dataset at once (several, repeated or @LIST, fill the form's data field:
a suite, run one dataset after the other as ` + "`run`" + ` runs it). Every run is saved as a session in the sessions
database (--db) as ` + "`run`" + ` saves it, unless --no-save; S opens the saved
sessions (open, compare, remove, resume), B the bench (the method ladder
of ` + "`bench`" + ` on the form's dataset and grid) and J the Slurm screen: a job
folder of ` + "`slurm`" + ` (--slurm-dir DIR, or typed there) with each task's
state and shard, read again every 5 s while shown; R resubmits the failed
or missing tasks, enter opens the merged session. Press ? inside for the keys.`,
		Example: `  sweepbench tui
  sweepbench tui --data embedded:btcusdt-1m --head 5000 --hma 10:30:10 --hma3 12:36:12
  sweepbench tui --data embedded:filusdt-1m --data embedded:btcusdt-1m   # a suite: the form's data field
  sweepbench tui --slurm-dir /shared/sweep1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTUI(cmd, &sf, cmd.Flags().Changed("data"), noSave, slurmDirs)
		},
	}
	sf.register(cmd.Flags())
	sf.registerRobust(cmd.Flags())
	cmd.Flags().BoolVar(&noSave, "no-save", false, "do not save the runs of the workbench as sessions (the sessions screen still browses --db)")
	cmd.Flags().StringArrayVar(&slurmDirs, "slurm-dir", nil, "open on the Slurm screen following this job folder of sweepbench slurm (repeat for more: left/right switch)")
	return cmd
}

// runTUI opens the workbench with the form prefilled from sf, saving its
// runs to the sessions store (--db) unless noSave; the Slurm screen runs
// Slurm's commands on this machine and follows slurmDirs. A store that
// cannot be opened is not fatal: the workbench says so and its runs go
// unsaved.
func runTUI(cmd *cobra.Command, sf *studyFlags, dataGiven, noSave bool, slurmDirs []string) error {
	reg := backends()
	cfg := tui.Config{Registry: reg, NoSave: noSave,
		Rungs:       func() []bench.Rung { return benchRungs(reg, 8) },
		SlurmRunner: slurm.Exec{}, SlurmDirs: slurmDirs}
	if st, err := openStoreToRead(cmd); err != nil {
		cfg.StoreErr = err
	} else {
		defer st.Close()
		cfg.Sessions = st
	}
	cfg.Flags = tui.Flags{Spec: sf.spec, DataGiven: dataGiven}
	if len(sf.datas) > 1 || len(sf.datas) == 1 && strings.HasPrefix(sf.datas[0], "@") {
		cfg.Flags.Datasets = sf.datas // a suite: the form's data field
	}
	return tui.Run(cmd.Context(), cfg)
}

// runRootTUI is the root command without a subcommand: the workbench with
// the default study when stdin and stdout are terminals, else the help.
func runRootTUI(cmd *cobra.Command) error {
	if !isTerminal(os.Stdout) || !isTerminal(os.Stdin) {
		return cmd.Help()
	}
	var sf studyFlags
	sf.register(pflag.NewFlagSet("tui", pflag.ContinueOnError))
	return runTUI(cmd, &sf, false, false, nil)
}
