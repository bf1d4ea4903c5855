package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/engine/output"
	"sweepbench/engine/suite"
	"sweepbench/engine/text"
	"sweepbench/sessions"
)

func newSessionsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List, show, compare, export, report, plot, remove and resume saved runs; export one combo's trades and bars",
		Long: `Every "sweepbench run" is saved as a session (unless --no-save) in the
sessions database (--db), batch by batch while it computes: a killed run
keeps what it saved and shows as interrupted, and "sessions resume"
computes only the combos that are missing.

A session is one run command: its fp64 and fp32 runs and their parity.
Commands that take one run name it ID (the fp64 run, or the only one)
or ID:fp32.`,
		Example: `  sweepbench sessions ls
  sweepbench sessions show 3
  sweepbench sessions diff 3 5            # fee 0.045% vs 0.1%, say
  sweepbench sessions diff 3:fp64 3:fp32  # the session's own parity, recomputed
  sweepbench sessions export 3 --format csv --out run3.csv
  sweepbench sessions trades 3 --combo hma=180,hma3=240 --out trades.csv
  sweepbench sessions bars 3 --combo hma=180,hma3=240 --format parquet --out bars.parquet
  sweepbench sessions resume 4
  sweepbench sessions rm 2`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newSessionsLsCmd(), newSessionsShowCmd(), newSessionsDiffCmd(), newSessionsExportCmd(),
		newSessionsRmCmd(), newSessionsResumeCmd())
	cmd.AddCommand(newSessionsReportCmds()...)
	cmd.AddCommand(newSessionsComboExportCmds()...)
	return cmd
}

func newSessionsLsCmd() *cobra.Command {
	var limit int
	cmd := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List the saved sessions, newest first",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := openExistingStore(cmd, false)
			var missing noDatabaseError
			if errors.As(err, &missing) {
				// Nothing saved yet is an empty list, not a failure.
				fmt.Fprintf(newSanitized(cmd.ErrOrStderr()), "no sessions yet: %s does not exist (`sweepbench run` saves every run unless --no-save)\n", string(missing))
				return nil
			}
			if err != nil {
				return err
			}
			defer st.Close()
			list, err := st.List(cmd.Context(), sessions.ListOptions{Limit: limit})
			if err != nil {
				return err
			}
			if len(list) == 0 {
				fmt.Fprintf(newSanitized(cmd.ErrOrStderr()), "no sessions in %s yet: sweepbench run saves one\n", st.Path())
				return nil
			}
			return writeSessionList(cmd.OutOrStdout(), list)
		},
	}
	cmd.Flags().IntVarP(&limit, "limit", "n", 0, "list only the newest N sessions; 0 = all")
	return cmd
}

// writeSessionList writes the sessions as a table, through the sanitiser
// (a dataset's name is escaped before the columns are aligned, so they
// stay aligned).
func writeSessionList(w io.Writer, list []sessions.Session) error {
	tw := tabwriter.NewWriter(newSanitized(w), 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tWHEN\tDATASET\tGRID\tPRECISION\tSTATUS\tPARITY\tBEST SHARPE\tSETTINGS")
	for i := range list {
		ss := &list[i]
		var precs []string
		for _, p := range ss.Precisions {
			precs = append(precs, p.String())
		}
		status := string(ss.Status)
		if done, total := ss.Done(); done < total {
			status += fmt.Sprintf(" %s/%s", text.Thousands(done), text.Thousands(total))
		}
		best := "-"
		if sh, c, p, ok := ss.Best(); ok {
			best = fmt.Sprintf("%s (%d, %d)", sharpeString(sh), c.HMA, c.HMA3)
			if ss.Grid.Strategy != nil {
				// A strategy combo is its index: the grid names it.
				best = sharpeString(sh)
				if _, label, _, ok := ss.BestLabel(); ok {
					best += " (" + label + ")"
				}
			}
			if p != engine.FP64 {
				best += " " + p.String()
			}
			if done, total := ss.Done(); done < total {
				best += " so far" // of the combos saved: resume may find a better one
			}
		}
		settings := fmt.Sprintf("fee %s%%, %s, %s, %s", text.FormatFloat(100*ss.Params.Fee), ss.Params.Mode, ss.Params.Source, ss.Backend)
		if ss.WMA != engine.Direct && hasFP32(ss.Precisions) {
			settings += ", wma " + ss.WMA.String()
		}
		if ss.Spec.Timeframe != "" {
			settings += ", timeframe " + ss.Spec.Timeframe
		}
		settings += sessions.ListSettings(ss)
		if len(ss.Unverified) > 0 {
			settings += " [unverified]" // saved before digests: its parts are read as saved
		}
		verdict := ss.Parity
		if verdict == "" {
			verdict = "-"
		}
		grid := fmt.Sprintf("%s x %s", ss.Grid.HMA, ss.Grid.HMA3)
		switch {
		case ss.GridErr() != nil:
			grid = ss.Spec.Strategy + " (its grid cannot be built here)"
		case ss.Grid.Strategy != nil:
			grid = sessions.GridName(ss.Grid)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s (%s)\t%s\t%s\t%s\t%s\t%s\n", ss.ID, ss.Created.Local().Format("2006-01-02 15:04"),
			data.Sanitize(ss.Dataset.Name), grid, text.Thousands(ss.Grid.Len()), strings.Join(precs, "+"), status, verdict, best, settings)
	}
	return tw.Flush()
}

func hasFP32(ps []engine.Precision) bool {
	for _, p := range ps {
		if p == engine.FP32 {
			return true
		}
	}
	return false
}

func sharpeString(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return text.FormatFloat(v)
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

// suiteLine is the line `show` prints under the header for a session that
// is one dataset of a suite: its place, the suite and its run, and the
// sessions of the run's other datasets (sessions.Store.SuiteOf); "" for a
// study of one dataset.
func suiteLine(ctx context.Context, st *sessions.Store, ss *sessions.Session) string {
	ref, ok, err := suite.ParseSuiteRef(ss.Spec.Suite)
	if !ok {
		if err != nil {
			return fmt.Sprintf("suite   %v\n", err)
		}
		return ""
	}
	l := fmt.Sprintf("suite   dataset %d of %d of suite %s", ref.D, ref.N, ref.ID)
	if ref.Run != "" {
		l += ", run " + ref.Run
	}
	su, err := st.SuiteOf(ctx, ref)
	if err != nil {
		return l + fmt.Sprintf(" (its other sessions: %v)\n", err)
	}
	var others []string
	for d, m := range su.Members {
		switch {
		case d == ref.D-1:
		case m == nil:
			others = append(others, fmt.Sprintf("dataset %d none", d+1))
		default:
			others = append(others, fmt.Sprintf("dataset %d session %d", d+1, m.ID))
		}
	}
	if len(others) > 0 {
		l += "; " + strings.Join(others, ", ") + " (the workbench's a: the figures across them)"
	}
	return l + "\n"
}

// sessionHeader is the line `show` and `resume` print above the table.
func sessionHeader(ss *sessions.Session) string {
	h := fmt.Sprintf("session %d  %s; started %s, last written by pid %d on %s", ss.ID, ss.Status,
		ss.Created.Local().Format("2006-01-02 15:04:05"), ss.PID, ss.Host)
	if ss.Error != "" && ss.Status != engine.StatusComplete {
		h += "\n        " + engine.ErrText(ss.Error)
	}
	if done, total := ss.Done(); ss.Status != engine.StatusComplete && ss.Status != sessions.StatusRunning {
		if done < total {
			h += fmt.Sprintf("\n        %s of %s combos saved: `sweepbench sessions resume %d` computes the rest", text.Thousands(done), text.Thousands(total), ss.ID)
		} else {
			h += fmt.Sprintf("\n        every combo is saved: `sweepbench sessions resume %d` completes it", ss.ID)
		}
	}
	return h + "\n"
}

func newSessionsShowCmd() *cobra.Command {
	var (
		format string
		top    int
	)
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Print a saved session as `run` printed it",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format, "", cmd.OutOrStdout()); err != nil {
				return err
			}
			// The table lists the best top: the summary holds them
			// (its smallest heatmaps: show draws none).
			var summary *engine.SummaryOptions
			if format == "table" {
				summary = &engine.SummaryOptions{K: max(top, 1), MaxRows: 1, MaxCols: 1}
			}
			st, id, rep, err := openSessionReport(cmd, args[0], summary)
			if err != nil {
				return err
			}
			defer st.Close()
			w := cmd.OutOrStdout()
			if format == "table" {
				ss, err := st.Get(cmd.Context(), id)
				if err != nil {
					return err
				}
				fmt.Fprint(newSanitized(w), sessionHeader(ss)+suiteLine(cmd.Context(), st, ss))
			}
			return toStdout(w, func(w io.Writer) error { return writeReport(w, rep, format, top) })
		},
	}
	cmd.Flags().StringVar(&format, "format", "table", "output format: table, json, or one row per combo and precision: csv, jsonl or parquet")
	cmd.Flags().IntVar(&top, "top", 10, "combos listed in the table")
	return cmd
}

func newSessionsExportCmd() *cobra.Command {
	var format, out string
	cmd := &cobra.Command{
		Use:   "export ID",
		Short: "Write a saved session as CSV, JSON lines or Parquet (one row per combo and run) or JSON (the whole report)",
		Example: `  sweepbench sessions export 3 --out run3.csv
  sweepbench sessions export 3 --format parquet --out run3.parquet
  sweepbench sessions export 3 --format jsonl | jq -c 'select(.total_trades > 500)'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, rows := output.ParseRowFormat(format); !rows && format != "json" {
				return fmt.Errorf("--format %q: want csv, json, jsonl or parquet", format)
			}
			if err := checkFormat(format, out, cmd.OutOrStdout()); err != nil {
				return err
			}
			// The per-combo formats stream each run from the store a page
			// at a time (exportRows): the report is read as its summary
			// with the smallest caps, for the runs' settings and the parity
			// verdict. JSON is one document of every result (Open).
			var skeleton *engine.SummaryOptions
			rowFormat, rows := output.ParseRowFormat(format)
			if rows {
				skeleton = &engine.SummaryOptions{K: 1, MaxRows: 1, MaxCols: 1}
			}
			st, id, rep, err := openSessionReport(cmd, args[0], skeleton)
			if err != nil {
				return err
			}
			defer st.Close()
			keep := []protected{sessionsDB(st.Path())}
			if ss, err := st.Get(cmd.Context(), id); err == nil {
				keep = append(keep, inputData("the session's input data", ss.Spec.Data)...)
			}
			if err := checkOutput(out, forced(cmd), keep...); err != nil {
				return err
			}
			return emit(cmd.OutOrStdout(), newSanitized(cmd.ErrOrStderr()), out, false, func(w io.Writer) error {
				if rows {
					return exportRows(cmd.Context(), w, st, id, rep, rowFormat)
				}
				return writeReport(w, rep, format, 0)
			})
		},
	}
	cmd.Flags().StringVar(&format, "format", "csv", "csv, jsonl or parquet (one row per combo and run), or json (the whole report)")
	cmd.Flags().StringVarP(&out, "out", "o", "", "file to write; stdout when empty or -")
	forceFlag(cmd)
	return cmd
}

// exportBand is about how many combos exportRows reads at once (a
// variable: tests read small grids in several bands).
var exportBand = 65_536

// exportRows writes session id's per-combo results in format f as
// Report.WriteRows writes them from every result (the same bytes, the
// parameter columns of rep.Grid: Grid.Columns), each run read from the
// store in bands of about exportBand combos by index (whole HMA rows of a
// hull grid; sessions.RunReader.Range: the batches that span the band,
// each verified against the run's digest when the reader opens), so that
// memory stays that of a band whatever the grid. rep is the session's
// report without its results (OpenSummary).
func exportRows(ctx context.Context, w io.Writer, st *sessions.Store, id int64, rep *engine.Report, f output.RowFormat) error {
	g := rep.Grid
	n, C := g.Len(), 1
	if g.Strategy == nil {
		C = max(g.HMA3.Len(), 1)
	}
	band := max(1, exportBand/C) * C
	return output.WriteRowsFrom(w, rep, f, func(run *engine.Run, rows func([]engine.ComboResult) error) error {
		rr, err := st.OpenRunReader(ctx, id, run.Precision)
		if err != nil {
			return err
		}
		for lo := 0; lo < n; lo += band {
			rs, err := rr.Range(ctx, lo, min(n, lo+band))
			if err != nil {
				return err
			}
			if err := rows(rs); err != nil {
				return err
			}
		}
		return nil
	})
}

func newSessionsRmCmd() *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "rm ID...",
		Short: "Remove saved sessions with their results",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ids := make([]int64, len(args))
			for i, a := range args {
				id, err := parseID(a)
				if err != nil {
					return err
				}
				ids[i] = id
			}
			st, err := openExistingStore(cmd, true)
			if err != nil {
				return err
			}
			defer st.Close()
			var errs []error
			for _, id := range ids {
				if err := st.Delete(cmd.Context(), id, force); err != nil {
					errs = append(errs, err)
					continue
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "removed session %d\n", id)
			}
			return errors.Join(errs...)
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "remove a session marked running by another host")
	return cmd
}

func newSessionsDiffCmd() *cobra.Command {
	var (
		format string
		top    int
	)
	cmd := &cobra.Command{
		Use:   "diff A B",
		Short: "Compare two saved runs on the same data and grid (B against A) with the parity report",
		Long: `diff compares run B against run A combo by combo, as the parity report
compares fp32 against fp64: trade counts, returns, and, when both use the
same source and mode, the bars where their positions differ (flips,
with their margin from A) and the indicator error of B against A, from
indicator series recomputed for each side's precision and formulation
on the dataset loaded again. With different sources or modes, or when the
dataset cannot be loaded again, only the saved metrics are compared. Both
runs must be of one strategy family and grid (a strategy study's
positions are recomputed when A is its fp64 run).

The collapse/pass verdict applies when only numerical settings differ
(precision, WMA formulation, backend, device); with a different fee,
mode, source or bars per year the deltas are the effect of the change.

A and B are session ids (the fp64 run, or the only run) or ID:fp32.`,
		Example: `  sweepbench sessions diff 3 5
  sweepbench sessions diff 3:fp64 3:fp32
  sweepbench sessions diff 3:fp32 7:fp32 --format json`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "table" && format != "json" {
				return fmt.Errorf("--format %q: want table or json", format)
			}
			a, err := sessions.ParseRunRef(args[0])
			if err != nil {
				return err
			}
			b, err := sessions.ParseRunRef(args[1])
			if err != nil {
				return err
			}
			st, err := openExistingStore(cmd, false)
			if err != nil {
				return err
			}
			defer st.Close()
			d, err := st.Diff(cmd.Context(), a, b, nil)
			if err != nil {
				return err
			}
			warnUnverified(cmd.ErrOrStderr(), d.A.Session)
			if d.B.Session.ID != d.A.Session.ID {
				warnUnverified(cmd.ErrOrStderr(), d.B.Session)
			}
			if format == "json" {
				return d.WriteJSON(cmd.OutOrStdout())
			}
			sw := newSanitized(cmd.OutOrStdout())
			if err := d.WriteTable(sw, top); err != nil {
				return err
			}
			return sw.Flush()
		},
	}
	cmd.Flags().StringVar(&format, "format", "table", "table or json")
	cmd.Flags().IntVar(&top, "top", 10, "combos listed, by |dPnL|")
	return cmd
}

// resumeFlags are `sessions resume`'s flags.
type resumeFlags struct {
	backend, format string
	top             int
	force, quiet    bool
}

func newSessionsResumeCmd() *cobra.Command {
	var f resumeFlags
	cmd := &cobra.Command{
		Use:   "resume ID",
		Short: "Compute the combos an interrupted, cancelled or failed session is missing",
		Long: `resume loads the session's dataset again (refusing if its SHA-256 or
its bars changed), computes only the combos that were not saved, then the
parity report over the complete runs, and prints the whole session as
"run" prints it.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return f.resume(cmd, args[0]) },
	}
	cmd.Flags().StringVar(&f.backend, "backend", "", "compute on this backend instead of the session's (auto, reference, cuda, metal)")
	cmd.Flags().BoolVar(&f.force, "force", false, "take over a session marked running by another host")
	cmd.Flags().StringVar(&f.format, "format", "table", "output format: table, json or csv")
	cmd.Flags().IntVar(&f.top, "top", 10, "combos listed in the table")
	cmd.Flags().BoolVarP(&f.quiet, "quiet", "q", false, "no progress bar or notes on stderr")
	return cmd
}

// resume is `sessions resume ARG`, in named steps: rebuild the session's
// study, compute what it is missing (sessions.Store.Resume), say what was
// done, write the whole session's report.
func (f *resumeFlags) resume(cmd *cobra.Command, arg string) error {
	id, err := parseID(arg)
	if err != nil {
		return err
	}
	if f.format != "table" && f.format != "json" && f.format != "csv" {
		return fmt.Errorf("--format %q: want table, json or csv", f.format)
	}
	st, err := openExistingStore(cmd, true)
	if err != nil {
		return err
	}
	defer st.Close()
	ctx := cmd.Context()
	ss, study, err := f.rebuild(ctx, st, id)
	if err != nil {
		return err
	}
	stderr, term := newSanitized(cmd.ErrOrStderr()), cmd.ErrOrStderr()
	if !f.quiet {
		warnUnverified(stderr, ss)
	}
	if study.Note != "" && !f.quiet {
		fmt.Fprintln(stderr, study.Note)
	}
	opt := sessions.ResumeOptions{Force: f.force}
	var bar *progressView
	if !f.quiet && isTerminal(term) {
		ch := make(chan engine.Progress, 16)
		opt.Progress = ch
		bar = newProgressView(ch, term)
	}
	start := time.Now()
	rep, lanes, runErr := st.Resume(ctx, id, study, opt)
	if bar != nil {
		close(opt.Progress)
		bar.wait()
	}
	if !f.quiet {
		sayResumed(stderr, id, lanes, start, study.Blocks)
	}
	if rep == nil {
		return runErr
	}
	if err := f.write(cmd.OutOrStdout(), st, id, rep); err != nil {
		return err
	}
	if errors.Is(runErr, context.Canceled) {
		return &exitError{130, fmt.Errorf("interrupted: what was computed is saved; `sweepbench sessions resume %d` goes on", id)}
	}
	return runErr
}

// rebuild reads session id and builds its study again (its dataset loaded
// and checked, on --backend or the session's own).
func (f *resumeFlags) rebuild(ctx context.Context, st *sessions.Store, id int64) (*sessions.Session, *engine.Study, error) {
	ss, err := st.Get(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	study, err := sessions.Rebuild(ctx, ss, backends(), f.backend, nil)
	if err != nil && errors.Is(err, context.Canceled) {
		return nil, nil, &exitError{130, fmt.Errorf("interrupted while loading the data of session %d: nothing was computed", id)}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("session %d: building its study again: %w", id, err)
	}
	return ss, study, nil
}

// sayResumed says on stderr what each lane had saved and computed now,
// how long the resume took, and that robustness is not computed for a
// resumed study of blocks > 0.
func sayResumed(stderr io.Writer, id int64, lanes []sessions.LaneResume, start time.Time, blocks int) {
	for _, l := range lanes {
		if l.Complete {
			fmt.Fprintf(stderr, "%s: complete already (%s combos)\n", l.Precision, text.Thousands(l.Saved))
			continue
		}
		fmt.Fprintf(stderr, "%s: %s combos were saved, %s computed now\n", l.Precision, text.Thousands(l.Saved), text.Thousands(l.Computed))
	}
	if len(lanes) > 0 {
		fmt.Fprintf(stderr, "resumed session %d in %.1fs\n", id, time.Since(start).Seconds())
	}
	if blocks > 0 {
		fmt.Fprintf(stderr, "robustness: not computed for a resumed study (the combos saved before carry no per-block statistics): run the study again with --blocks %d for PBO, DSR and the walk-forward\n", blocks)
	}
}

// write writes the resumed session's report to w as `run` prints it (the
// table under the session's header).
func (f *resumeFlags) write(w io.Writer, st *sessions.Store, id int64, rep *engine.Report) error {
	if f.format == "table" {
		if ss, err := st.Get(context.Background(), id); err == nil {
			fmt.Fprint(newSanitized(w), sessionHeader(ss))
		}
	}
	if err := writeReport(w, rep, f.format, f.top); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	return nil
}
