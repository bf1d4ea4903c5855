package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rev := ""
			if bi, ok := debug.ReadBuildInfo(); ok {
				for _, s := range bi.Settings {
					if s.Key == "vcs.revision" && len(s.Value) >= 12 {
						rev = " (" + s.Value[:12] + ")"
					}
				}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "sweepbench %s%s %s %s/%s\n", version, rev, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return nil
		},
	}
}

func newDevicesCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "devices",
		Short: "List the backends and devices available on this machine",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// Why a backend is unavailable goes under the table, so that a
			// long driver message does not stretch every row.
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "BACKEND\tSTATUS\tDEVICE\tMEMORY\tCOMPUTE\tDRIVER\tKERNELS")
			var why []string
			for _, b := range backends().All() {
				if err := b.Available(); err != nil {
					fmt.Fprintf(tw, "%s\tunavailable\t-\t\t\t\t\n", b.Name())
					why = append(why, fmt.Sprintf("%s: %v", b.Name(), err))
					continue
				}
				devs, err := b.Devices()
				if err != nil {
					fmt.Fprintf(tw, "%s\terror\t-\t\t\t\t\n", b.Name())
					why = append(why, fmt.Sprintf("%s: %v", b.Name(), err))
					continue
				}
				for _, d := range devs {
					mem := ""
					if d.Memory > 0 {
						mem = fmt.Sprintf("%.1f GiB", float64(d.Memory)/(1<<30))
					}
					fmt.Fprintf(tw, "%s\tavailable\t%s\t%s\t%s\t%s\t%s\n", b.Name(), d.Name, mem, d.ComputeCapability, d.Driver, d.Kernels)
				}
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			if len(why) > 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "\n%s\n", strings.Join(why, "\n"))
			}
			return nil
		},
	}
}
