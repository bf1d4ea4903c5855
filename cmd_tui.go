package main

import (
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"sweepbench/tui"
)

func newTUICmd() *cobra.Command {
	var sf studyFlags
	cmd := &cobra.Command{
		Use:   "tui",
		Short: "Open the terminal workbench (the default when sweepbench runs in a terminal)",
		Long: `The workbench: choose a dataset, set the grid and parameters, run fp64 and
fp32 with live progress, then read the metrics, the parity report, a heatmap
over the grid, the crossover around each fp32/fp64 flip, and one combo's
equity and trades. The study flags of ` + "`run`" + ` prefill the form; --data loads
the dataset at once. Press ? inside for the keys.`,
		Example: `  sweepbench tui
  sweepbench tui --data embedded:btcusdt-1m --head 5000 --hma 10:30:10 --hma3 12:36:12`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTUI(cmd, &sf, cmd.Flags().Changed("data"))
		},
	}
	sf.register(cmd.Flags())
	return cmd
}

// runTUI opens the workbench with the form prefilled from sf.
func runTUI(cmd *cobra.Command, sf *studyFlags, dataGiven bool) error {
	return tui.Run(cmd.Context(), tui.Config{Registry: backends(), Flags: tui.Flags{
		Data: sf.data, DataGiven: dataGiven, HMA: sf.hma, HMA3: sf.hma3, Fee: sf.fee,
		Mode: sf.mode, Source: sf.source, Timeframe: sf.timeframe, Head: sf.head,
		Backend: sf.backend, Precision: sf.precision, WMA: sf.wma,
		BarsPerYear: sf.barsPerYear, Tolerance: sf.tolerance, TZ: sf.tz, TimeColumn: sf.timeColumn,
	}})
}

// runRootTUI is the root command without a subcommand: the workbench with
// the default study when stdin and stdout are terminals, else the help.
func runRootTUI(cmd *cobra.Command) error {
	if !isTerminal(os.Stdout) || !isTerminal(os.Stdin) {
		return cmd.Help()
	}
	var sf studyFlags
	sf.register(pflag.NewFlagSet("tui", pflag.ContinueOnError))
	return runTUI(cmd, &sf, false)
}
