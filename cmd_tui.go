package main

import (
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"sweepbench/engine"
	"sweepbench/tui"
)

func newTUICmd() *cobra.Command {
	var (
		sf     studyFlags
		noSave bool
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
the dataset at once. Every run is saved as a session in the sessions
database (--db) as ` + "`run`" + ` saves it, unless --no-save; S opens the saved
sessions (open, compare, remove, resume) and B the bench (the method ladder
of ` + "`bench`" + ` on the form's dataset and grid). Press ? inside for the keys.`,
		Example: `  sweepbench tui
  sweepbench tui --data embedded:btcusdt-1m --head 5000 --hma 10:30:10 --hma3 12:36:12`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := sf.oneDataset("tui"); err != nil {
				return err
			}
			return runTUI(cmd, &sf, cmd.Flags().Changed("data"), noSave)
		},
	}
	sf.register(cmd.Flags())
	sf.registerRobust(cmd.Flags())
	cmd.Flags().BoolVar(&noSave, "no-save", false, "do not save the runs of the workbench as sessions (the sessions screen still browses --db)")
	return cmd
}

// runTUI opens the workbench with the form prefilled from sf, saving its
// runs to the sessions store (--db) unless noSave. A store that cannot be
// opened is not fatal: the workbench says so and its runs go unsaved.
func runTUI(cmd *cobra.Command, sf *studyFlags, dataGiven, noSave bool) error {
	reg := backends()
	cfg := tui.Config{Registry: reg, NoSave: noSave,
		Rungs: func() []engine.Rung { return benchRungs(reg, 8) }}
	if st, err := openStoreToRead(cmd); err != nil {
		cfg.StoreErr = err
	} else {
		defer st.Close()
		cfg.Sessions = st
	}
	cfg.Flags = tui.Flags{Spec: sf.spec, DataGiven: dataGiven}
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
	return runTUI(cmd, &sf, false, false)
}
