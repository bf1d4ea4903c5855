package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"sweepbench/engine"
	"sweepbench/report"
)

// newSessionsReportCmds are `sessions report` (one HTML file) and
// `sessions plot` (one figure): front ends of package report.
func newSessionsReportCmds() []*cobra.Command {
	return []*cobra.Command{newSessionsReportCmd(), newSessionsPlotCmd()}
}

// openReportSource opens session arg for its figures; close closes the
// store. out is the file about to be written (checked against the
// database and the session's data, and that it can be created, before
// anything is drawn).
func openReportSource(cmd *cobra.Command, arg, out string, cells int) (src *report.Source, closeStore func(), err error) {
	id, err := parseID(arg)
	if err != nil {
		return nil, nil, err
	}
	st, err := openExistingStore(cmd, false)
	if err != nil {
		return nil, nil, err
	}
	src, err = report.Open(cmd.Context(), st, id, report.Options{Cells: cells, Registry: backends()})
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	keep := append([]protected{sessionsDB(st.Path())}, inputData("the session's input data", src.Session.Spec.Data)...)
	if err := checkWritable(out, forced(cmd), keep...); err != nil {
		st.Close()
		return nil, nil, err
	}
	return src, func() { st.Close() }, nil
}

func newSessionsReportCmd() *cobra.Command {
	var (
		out        string
		top, cells int
	)
	cmd := &cobra.Command{
		Use:   "report ID",
		Short: "Write a saved session as one self-contained HTML page: its table, parity, robustness and figures",
		Long: `report writes one HTML file that needs nothing else (no script, no network;
the figures are inline SVG): the study's description, its runs and best
combos with the parity summary and verdict, the grid heatmaps of the
objective's metric (fp64, fp32, their difference), the parity figures (dn
and dPnL per combo, the flip margins, the indicator errors, the worst
flip's crossover), the selected combo's equity, and the robustness section
with its figures when the study ran with --blocks. It reads on a phone
and prints.

The crossover and equity charts recompute their combo on the session's
dataset, loaded again: when it cannot be (moved, changed), the page says
so in their place. "sessions plot" writes one figure as SVG or PNG.`,
		Example: `  sweepbench sessions report 3                   # writes session-3.html
  sweepbench sessions report 3 --out run3.html
  sweepbench sessions report 3 --out - > run3.html`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				out = "session-" + args[0] + ".html"
			}
			src, done, err := openReportSource(cmd, args[0], out, cells)
			if err != nil {
				return err
			}
			defer done()
			stderr := newSanitized(cmd.ErrOrStderr())
			defer stderr.Flush()
			warnUnverified(stderr, src.Session)
			var notes []string
			err = emit(cmd.OutOrStdout(), stderr, out, false, func(w io.Writer) error {
				var err error
				notes, err = report.WriteHTML(cmd.Context(), w, src, report.HTMLOptions{Top: top})
				return err
			})
			for _, n := range notes {
				fmt.Fprintf(stderr, "sweepbench: note: %s (the page says so in its place)\n", n)
			}
			return interrupted(err)
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "", "file to write (default session-ID.html; - for stdout)")
	forceFlag(cmd)
	cmd.Flags().IntVar(&top, "top", 10, "combos listed in the table")
	cmd.Flags().IntVar(&cells, "cells", report.DefaultCells, "heatmap cells along each axis at most (a larger grid's cells are blocks of combos)")
	return cmd
}

// interrupted phrases a cancelled write (Ctrl-C) as such.
func interrupted(err error) error {
	if errors.Is(err, context.Canceled) {
		return &exitError{130, errors.New("interrupted: nothing was written")}
	}
	return err
}

// parseCombo reads --combo HMA:HMA3 (or HMAxHMA3).
func parseCombo(s string) (*engine.Combo, error) {
	a, b, ok := strings.Cut(s, ":")
	if !ok {
		a, b, ok = strings.Cut(strings.ToLower(s), "x")
	}
	h, err1 := strconv.Atoi(strings.TrimSpace(a))
	h3, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil || h <= 0 || h3 <= 0 {
		return nil, fmt.Errorf("--combo %q: want HMA:HMA3 lengths, e.g. 180:240", s)
	}
	return &engine.Combo{HMA: h, HMA3: h3}, nil
}

// plotFormat is the format `sessions plot` writes: --format when given
// (svg or png), else the one --out's extension names (.svg, .png), else
// svg (stdout, or a file without an extension). An --out whose extension
// is neither, or that contradicts --format, is refused.
func plotFormat(format, out string) (string, error) {
	format = strings.ToLower(format)
	if format != "" && format != "svg" && format != "png" {
		return "", fmt.Errorf("--format %q: want svg or png", format)
	}
	ext := ""
	if out != "" && out != "-" {
		ext = strings.ToLower(filepath.Ext(out))
	}
	switch {
	case ext == "":
		if format == "" {
			return "svg", nil
		}
		return format, nil
	case ext != ".svg" && ext != ".png":
		return "", fmt.Errorf("--out %s: a figure is written as .svg or .png, not %s (name the file .svg or .png)", out, filepath.Ext(out))
	case format != "" && "."+format != ext:
		return "", fmt.Errorf("--format %s contradicts --out %s: name the file .%s, or leave --format out to write %s", format, out, format, strings.ToUpper(ext[1:]))
	}
	return ext[1:], nil
}

func newSessionsPlotCmd() *cobra.Command {
	var (
		out, format, combo string
		cells              int
		req                report.Request
	)
	var names []string
	for _, f := range report.Figures {
		names = append(names, fmt.Sprintf("  %-16s %s", f.Name, f.About))
	}
	cmd := &cobra.Command{
		Use:   "plot ID --figure NAME",
		Short: "Write one figure of a saved session as SVG or PNG",
		Long:  "plot draws one figure of a saved session (the HTML report of `sessions report`\nholds them all). Figures:\n\n" + strings.Join(names, "\n"),
		Example: `  sweepbench sessions plot 3 --figure heatmap --metric sharpe --of diff --out sharpe-diff.svg
  sweepbench sessions plot 3 --figure crossover --flip 2 --format png --out flip2.png
  sweepbench sessions plot 3 --figure equity --combo 180:240 --out equity.png`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if req.Name == "" {
				return fmt.Errorf("--figure: name one of %s", report.FigureNames())
			}
			if req.Name == "bench" {
				return fmt.Errorf("--figure bench: sessions hold no bench ladder: %s", report.NoBenchLadder)
			}
			known := false
			for _, f := range report.Figures {
				known = known || f.Name == req.Name
			}
			if !known {
				return fmt.Errorf("--figure: %w", &report.UnknownFigureError{Name: req.Name})
			}
			format, err := plotFormat(format, out) // format: this call's, checked
			if err != nil {
				return err
			}
			if format == "png" && (out == "" || out == "-") && isTerminal(cmd.OutOrStdout()) {
				return errors.New("--format png is binary: name a file with --out FILE (or redirect stdout)")
			}
			if combo != "" {
				c, err := parseCombo(combo)
				if err != nil {
					return err
				}
				req.Combo = c
			}
			if req.Flip < 0 {
				return fmt.Errorf("--flip %d: want a rank from 1 (the worst listed flip)", req.Flip)
			}
			src, done, err := openReportSource(cmd, args[0], out, cells)
			if err != nil {
				return err
			}
			defer done()
			fig, err := report.Make(cmd.Context(), src, req)
			if err != nil {
				return interrupted(err)
			}
			write := fig.WriteSVG
			if format == "png" {
				write = fig.WritePNG
			}
			return emit(cmd.OutOrStdout(), newSanitized(cmd.ErrOrStderr()), out, false, write)
		},
	}
	f := cmd.Flags()
	f.StringVar(&req.Name, "figure", "", "the figure: "+report.FigureNames())
	f.StringVar(&format, "format", "", "svg or png (default: the --out file's extension, .svg or .png; svg on stdout)")
	f.StringVarP(&out, "out", "o", "", "file to write; stdout when empty or -")
	forceFlag(cmd)
	f.StringVar(&req.Metric, "metric", "", "heatmap: the metric (default the study's objective's)")
	f.StringVar(&req.Of, "of", "", "heatmap: fp64, fp32 or diff (fp32 - fp64); default fp64")
	f.StringVar(&combo, "combo", "", "equity: the combo HMA:HMA3 (default the selected one); crossover: only that combo's flips")
	f.IntVar(&req.Flip, "flip", 1, "crossover: the flip's rank among those listed, worst first")
	f.IntVar(&req.Window, "window", report.DefaultWindow, "crossover: bars shown each side of the flip")
	f.IntVar(&cells, "cells", report.DefaultCells, "heatmap cells along each axis at most")
	return cmd
}
