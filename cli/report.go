package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
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
		out, axes  string
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
			ax, err := parseAxes(axes)
			if err != nil {
				return err
			}
			src, done, err := openReportSource(cmd, args[0], out, cells)
			if err != nil {
				return err
			}
			defer done()
			if err := report.CheckAxes(src.Report.Grid, ax); err != nil {
				return fmt.Errorf("--axes: session %d: %w", src.ID, err)
			}
			stderr := newSanitized(cmd.ErrOrStderr())
			defer stderr.Flush()
			warnUnverified(stderr, src.Session)
			var notes []string
			err = emit(cmd.OutOrStdout(), stderr, out, false, func(w io.Writer) error {
				var err error
				notes, err = report.WriteHTML(cmd.Context(), w, src, report.HTMLOptions{Top: top, Axes: ax})
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
	cmd.Flags().StringVar(&axes, "axes", "", "a strategy study's heatmaps: the parameters along the rows and the columns, NAME,NAME (default its first two; the others reduced in each cell)")
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

// parseAxes reads --axes NAME,NAME: a strategy heatmap's rows and
// columns (nil when empty). The names are checked against the session's
// grid once it is open (report.CheckAxes).
func parseAxes(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	names := strings.Split(s, ",")
	for k, n := range names {
		names[k] = strings.TrimSpace(n)
		if names[k] == "" {
			return nil, fmt.Errorf("--axes %q: want two parameter names, NAME,NAME (e.g. length,exit)", s)
		}
	}
	if len(names) != 2 {
		return nil, fmt.Errorf("--axes %q: want two parameter names, NAME,NAME (e.g. length,exit), not %d", s, len(names))
	}
	return names, nil
}

// strategyCombo reads --combo NAME=V,NAME=V for g, a strategy grid: the
// index of the combo with those parameter values (Strategy.IndexOf over
// each axis' Values). A leg's value is its length (fast=20, or fast=ema:20
// naming its kind); an axis of one value may be left out.
func strategyCombo(g engine.Grid, s string) (int, error) {
	axes := g.Strategy.Axes()
	var names []string
	for _, ax := range axes {
		names = append(names, ax.Name)
	}
	example := func() string {
		var ex []string
		for _, ax := range axes {
			ex = append(ex, ax.Name+"="+ax.Values[0])
		}
		return strings.Join(ex, ",")
	}
	given := map[string]string{}
	for _, part := range strings.Split(s, ",") {
		name, v, ok := strings.Cut(part, "=")
		name, v = strings.TrimSpace(name), strings.TrimSpace(v)
		if !ok || name == "" || v == "" {
			return -1, fmt.Errorf("--combo %q: want NAME=VALUE,... for a %s study, e.g. --combo %s", s, g.Family(), example())
		}
		if !slices.Contains(names, name) {
			return -1, fmt.Errorf("--combo %q: %s has no parameter %q (its parameters: %s)", s, g.Family(), name, strings.Join(names, ", "))
		}
		if _, dup := given[name]; dup {
			return -1, fmt.Errorf("--combo %q: %s is given twice", s, name)
		}
		given[name] = v
	}
	coords := make([]int, len(axes))
	for a, ax := range axes {
		v, ok := given[ax.Name]
		if !ok {
			if len(ax.Values) == 1 {
				continue // its one value
			}
			return -1, fmt.Errorf("--combo %q: give %s too (one of %s), e.g. --combo %s", s, ax.Name, strings.Join(ax.Values, ", "), example())
		}
		if kind, length, ok := strings.Cut(v, ":"); ok && ax.Kind != "" {
			if !strings.EqualFold(kind, ax.Kind) {
				return -1, fmt.Errorf("--combo %q: the grid's %s leg is %s, not %s", s, ax.Name, ax.Kind, kind)
			}
			v = length
		}
		x, err := strconv.ParseFloat(v, 64)
		coords[a] = -1
		for k, t := range ax.Values {
			if y, e := strconv.ParseFloat(t, 64); err == nil && e == nil && x == y {
				coords[a] = k
			}
		}
		if coords[a] < 0 {
			return -1, fmt.Errorf("--combo %q: %s %s is not in the grid (%s: %s)", s, ax.Name, v, ax.Range, strings.Join(ax.Values, ", "))
		}
	}
	i := g.Strategy.IndexOf(coords)
	if i < 0 {
		return -1, fmt.Errorf("--combo %q: the grid %s has no such combo: --fast-below-slow dropped it", s, g.Text())
	}
	return i, nil
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
		out, format, combo, axes string
		cells                    int
		req                      report.Request
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
  sweepbench sessions plot 3 --figure equity --combo 180:240 --out equity.png
  sweepbench sessions plot 4 --figure heatmap --axes length,exit --out zscore.svg   # a strategy study
  sweepbench sessions plot 4 --figure equity --combo length=20,entry=2,exit=0 --out equity.svg`,
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
			named := strings.Contains(combo, "=") // a strategy's NAME=V,...: resolved on its grid below
			if combo != "" && !named {
				c, err := parseCombo(combo)
				if err != nil {
					return err
				}
				req.Combo = c
			}
			if req.Axes, err = parseAxes(axes); err != nil {
				return err
			}
			if req.Flip < 0 {
				return fmt.Errorf("--flip %d: want a rank from 1 (the worst listed flip)", req.Flip)
			}
			src, done, err := openReportSource(cmd, args[0], out, cells)
			if err != nil {
				return err
			}
			defer done()
			g := src.Report.Grid
			if err := report.CheckAxes(g, req.Axes); err != nil {
				return fmt.Errorf("--axes: session %d: %w", src.ID, err)
			}
			if named {
				if g.Strategy == nil {
					return fmt.Errorf("--combo %q: session %d is a hull study (%s): name its combo by lengths, --combo HMA:HMA3", combo, src.ID, g.Text())
				}
				i, err := strategyCombo(g, combo)
				if err != nil {
					return err
				}
				req.Index = &i
			}
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
	f.StringVar(&combo, "combo", "", "equity: the combo, HMA:HMA3 or for a strategy NAME=V,NAME=V (e.g. length=20,entry=2,exit=0; default the selected one); crossover: only that combo's flips")
	f.StringVar(&axes, "axes", "", "heatmap, parity-dn, parity-dpnl of a strategy study: the parameters along the rows and the columns, NAME,NAME (default its first two; the others reduced in each cell)")
	f.IntVar(&req.Flip, "flip", 1, "crossover: the flip's rank among those listed, worst first")
	f.IntVar(&req.Window, "window", report.DefaultWindow, "crossover: bars shown each side of the flip")
	f.IntVar(&cells, "cells", report.DefaultCells, "heatmap cells along each axis at most")
	return cmd
}
