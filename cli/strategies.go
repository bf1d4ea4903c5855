package cli

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"sweepbench/strategy"
)

// newStrategiesCmd lists SPEC Part 2's strategy families from the
// registry (strategy.Families): each family's name, doc line, parameters
// (name, kind, minimum, default, doc) in the grid's order, and an example.
func newStrategiesCmd() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "strategies",
		Short: "List the strategy families, their parameters and defaults",
		Long: `List the strategy families of docs/SPEC.md Part 2, each with its
parameters in the grid's order (the last varies fastest), their kinds,
minimums and defaults, and an example command line.

The run command does not take --strategy and --param yet: today it runs
hull through --hma and --hma3 (docs/SPEC.md "What Part 2 adds: what is
built").`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			switch format {
			case "json":
				type param struct {
					Name, Kind, Min, Default, Doc string
				}
				type family struct {
					Name, Doc, Example string
					Params             []param
				}
				var fs []family
				for _, f := range strategy.Families {
					jf := family{Name: f.Name, Doc: f.Doc, Example: f.Example}
					for _, p := range f.Params {
						jf.Params = append(jf.Params, param{p.Name, p.Kind.String(), p.MinText(), p.Default, p.Doc})
					}
					fs = append(fs, jf)
				}
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(fs)
			case "table", "":
			default:
				return fmt.Errorf("--format %q: want table or json", format)
			}
			for i, f := range strategy.Families {
				if i > 0 {
					fmt.Fprintln(out)
				}
				fmt.Fprintf(out, "%s: %s\n", f.Name, f.Doc)
				tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
				fmt.Fprintln(tw, "  PARAM\tKIND\tMIN\tDEFAULT\tDOC")
				for _, p := range f.Params {
					fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", p.Name, p.Kind, p.MinText(), p.Default, p.Doc)
				}
				if err := tw.Flush(); err != nil {
					return err
				}
				fmt.Fprintf(out, "  example: %s\n", f.Example)
			}
			// The stops every family but hull takes (SPEC Part 2
			// "Execution options"): axes after the family's own.
			fmt.Fprintf(out, "\nstops (every family but hull; each optional, an axis after the family's parameters):\n")
			tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "  PARAM\tKIND\tMIN\tDEFAULT\tDOC")
			for _, p := range strategy.StopParams {
				fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", p.Name, p.Kind, p.MinText(), "none", p.Doc)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			fmt.Fprintf(out, "  example: sweepbench run --strategy cross --param fast=ema:5:50:5 --param slow=sma:20:200:10 --param stop_loss=0.01:0.05:0.01 --fill next-open\n")
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "table", "output format: table or json")
	return cmd
}
