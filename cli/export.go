package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"sweepbench/engine"
	"sweepbench/engine/output"
	"sweepbench/engine/output/records"
	"sweepbench/sessions"
)

// `sessions trades ID --combo ...` and `sessions bars ID --combo ...`:
// one saved combo recomputed by the sweep's own path
// (engine.InspectIndex on the session's study built again:
// sessions.Rebuild) and written as records (package records).

// exportKind is what a combo export writes: its trades or its bars.
type exportKind string

const (
	exportTrades exportKind = "trades"
	exportBars   exportKind = "bars"
)

// comboExportFlags are the options of `sessions trades` and `sessions bars`.
type comboExportFlags struct {
	combo, precision, format, out string
}

func newSessionsComboExportCmds() []*cobra.Command {
	return []*cobra.Command{newComboExportCmd(exportTrades), newComboExportCmd(exportBars)}
}

func newComboExportCmd(kind exportKind) *cobra.Command {
	var f comboExportFlags
	short := "Write one saved combo's trades (entry, exit, side, bars held, return, exit reason) as CSV, JSON lines or Parquet"
	long := `trades recomputes one combo of a saved session on its dataset, loaded
again, by the sweep's own code path (so the trades are those its
total_trades, profit_factor and sqn count) and writes one row per trade:
entry_time, entry_index, entry_price, exit_time, exit_index, exit_price,
side (long, short), bars_held, return (a fraction, fees and slippage
included), exit_reason (signal, stop, take-profit, trail, end).`
	if kind == exportBars {
		short = "Write one saved combo's per-bar series (close, indicators, position, return, equity, drawdown) as CSV, JSON lines or Parquet"
		long = `bars recomputes one combo of a saved session on its dataset, loaded again,
by the sweep's own code path and writes one row per bar: time, index,
close, the family's indicators (hull: h and h3; another family: the lines
its state machine compares, named by their labels in snake_case, e.g.
fast_ema_5, slow_sma_20, z_20), position (held over the next bar: 1, -1,
0), return (the bar's return, a fraction: compounding them gives
total_return), equity, drawdown (1 - equity / its running peak).`
	}
	long += `

--combo names the combo by every parameter of the grid: hull's
hma=V,hma3=V (or HMA:HMA3), a family's parameters as the sessions' CSV
columns name them (e.g. fast=5,slow=20; a leg's kind may be given too,
fast=ema:5). Times are the bars' own, RFC 3339 UTC in CSV and JSON
lines, TIMESTAMP (ns, UTC) in Parquet; indices count from the dataset's
first bar; non-finite numbers are inf, -inf, nan (JSON: the strings).`
	cmd := &cobra.Command{
		Use:   string(kind) + " ID --combo NAME=V,NAME=V",
		Short: short,
		Long:  long,
		Example: fmt.Sprintf(`  sweepbench sessions %[1]s 3 --combo hma=180,hma3=240
  sweepbench sessions %[1]s 3 --combo hma=180,hma3=240 --precision fp32 --format parquet --out %[1]s.parquet
  sweepbench sessions %[1]s 4 --combo fast=10,slow=30 --format jsonl | head`, kind),
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return f.run(cmd, kind, args[0]) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.combo, "combo", "", "the combo: every grid parameter, NAME=V,NAME=V (hull: hma=V,hma3=V or HMA:HMA3; a family: e.g. fast=5,slow=20)")
	fl.StringVar(&f.precision, "precision", "fp64", "recompute in fp64 or fp32 (fp32 in the session's WMA formulation)")
	fl.StringVar(&f.format, "format", "csv", "csv, jsonl or parquet")
	fl.StringVarP(&f.out, "out", "o", "", "file to write; stdout when empty or -")
	forceFlag(cmd)
	return cmd
}

// run is `sessions KIND ARG`: the flags checked, the combo found on the
// saved grid, the output checked, then the combo recomputed and written.
func (f *comboExportFlags) run(cmd *cobra.Command, kind exportKind, arg string) error {
	format, ok := output.ParseRowFormat(f.format)
	if !ok {
		return fmt.Errorf("--format %q: want csv, jsonl or parquet", f.format)
	}
	if err := checkFormat(f.format, f.out, cmd.OutOrStdout()); err != nil {
		return err
	}
	prec, err := parseOnePrecision(f.precision)
	if err != nil {
		return err
	}
	if strings.TrimSpace(f.combo) == "" {
		return errors.New("--combo: name the combo, NAME=V,NAME=V (hull: hma=V,hma3=V; `sweepbench sessions show ID` lists the best)")
	}
	id, err := parseID(arg)
	if err != nil {
		return err
	}
	st, err := openExistingStore(cmd, false)
	if err != nil {
		return err
	}
	defer st.Close()
	ctx := cmd.Context()
	ss, err := st.Get(ctx, id)
	if err != nil {
		return err
	}
	if err := ss.GridErr(); err != nil {
		return fmt.Errorf("session %d: %w", id, err)
	}
	i, err := namedCombo(ss.Grid, f.combo)
	if err != nil {
		return fmt.Errorf("session %d: %w", id, err)
	}
	keep := append([]protected{sessionsDB(st.Path())}, inputData("the session's input data", ss.Spec.Data)...)
	if err := checkOutput(f.out, forced(cmd), keep...); err != nil {
		return err
	}
	warnUnverified(cmd.ErrOrStderr(), ss)
	t, err := comboRecords(ctx, ss, i, prec, kind)
	if err != nil {
		return interrupted(err)
	}
	return emit(cmd.OutOrStdout(), newSanitized(cmd.ErrOrStderr()), f.out, false, func(w io.Writer) error {
		return t.Write(w, format)
	})
}

// parseOnePrecision reads --precision: fp64 or fp32 (one precision).
func parseOnePrecision(s string) (engine.Precision, error) {
	ps, err := engine.ParsePrecisions(s)
	if err != nil || len(ps) != 1 || strings.TrimSpace(s) == "" {
		return 0, fmt.Errorf("--precision %q: want fp64 or fp32", s)
	}
	return ps[0], nil
}

// comboRecords recomputes combo i of session ss in precision prec on its
// study built again (sessions.Rebuild: the dataset loaded and checked,
// the saved grid, parameters and execution options, the fp32
// formulation) through engine.InspectIndex, and returns its trades or
// bars (records.Trades, records.Bars) with the session, combo and
// precision as metadata. Errors: the rebuild's (the dataset moved or
// changed), a rebuilt grid that is not the saved one, the computation's.
func comboRecords(ctx context.Context, ss *sessions.Session, i int, prec engine.Precision, kind exportKind) (*records.Table, error) {
	study, err := sessions.Rebuild(ctx, ss, backends(), "", nil)
	if err != nil {
		return nil, fmt.Errorf("session %d: building its study again to recompute the combo: %w", ss.ID, err)
	}
	return studyComboRecords(ctx, study, ss.ID, i, prec, kind, ss.Grid)
}

// studyComboRecords is comboRecords on the study built again: saved is
// the session's grid, on which the combo index i was read and which the
// study's must equal.
func studyComboRecords(ctx context.Context, study *engine.Study, id int64, i int, prec engine.Precision, kind exportKind, saved engine.Grid) (*records.Table, error) {
	if study.Grid.Text() != saved.Text() || study.Grid.Len() != saved.Len() {
		return nil, fmt.Errorf("session %d: its grid %s is not the study's built again (%s)", id, saved.Text(), study.Grid.Text())
	}
	bars := &study.Dataset.Bars
	d, err := engine.InspectIndex(ctx, bars, study.Grid, i, study.Params, prec, study.WMA)
	if err != nil {
		return nil, fmt.Errorf("session %d, %s in %s: %w", id, study.Grid.Label(i), prec, err)
	}
	var t *records.Table
	if kind == exportTrades {
		t, err = records.Trades(d, bars)
	} else {
		t, err = records.Bars(d, bars)
	}
	if err != nil {
		return nil, fmt.Errorf("session %d, %s in %s: %w", id, study.Grid.Label(i), prec, err)
	}
	t.Meta = [][2]string{{"session", strconv.FormatInt(id, 10)}, {"strategy", study.Grid.Family()},
		{"combo", study.Grid.Label(i)}, {"combo_index", strconv.Itoa(i)}, {"precision", prec.String()}, {"records", string(kind)}}
	return t, nil
}

// namedCombo is the index of the combo --combo s names on grid g: every
// parameter NAME=V (hull's hma and hma3, or HMA:HMA3 as parseCombo reads
// it; a strategy family's through
// strategyCombo, which also takes a leg's KIND:LENGTH and lets a
// parameter of one value go unnamed). Errors name the parameter missing,
// unknown or given twice and a value not on the grid, with the grid's.
func namedCombo(g engine.Grid, s string) (int, error) {
	if g.Strategy != nil {
		return strategyCombo(g, s)
	}
	names := []string{engine.FieldHMA, engine.FieldHMA3}
	ranges := []engine.Range{g.HMA, g.HMA3}
	given := map[string]string{}
	if !strings.Contains(s, "=") {
		// HMA:HMA3, as `sessions plot --combo` takes it.
		c, err := parseCombo(s)
		if err != nil {
			return -1, fmt.Errorf("--combo %q: want hma=V,hma3=V (or HMA:HMA3), e.g. --combo hma=%d,hma3=%d", s, g.HMA.Start, g.HMA3.Start)
		}
		s = fmt.Sprintf("hma=%d,hma3=%d", c.HMA, c.HMA3)
	}
	for _, part := range strings.Split(s, ",") {
		name, v, ok := strings.Cut(part, "=")
		name, v = strings.ToLower(strings.TrimSpace(name)), strings.TrimSpace(v)
		if !ok || name == "" || v == "" {
			return -1, fmt.Errorf("--combo %q: want NAME=VALUE,... for a hull study, e.g. --combo hma=%d,hma3=%d", s, g.HMA.Start, g.HMA3.Start)
		}
		if !slices.Contains(names, name) {
			return -1, fmt.Errorf("--combo %q: hull has no parameter %q (its parameters: hma, hma3)", s, name)
		}
		if _, dup := given[name]; dup {
			return -1, fmt.Errorf("--combo %q: %s is given twice", s, name)
		}
		given[name] = v
	}
	var at [2]int
	for k, name := range names {
		v, ok := given[name]
		if !ok {
			return -1, fmt.Errorf("--combo %q: give %s too (the grid's %s: %s), e.g. --combo hma=%d,hma3=%d", s, name, name, ranges[k], g.HMA.Start, g.HMA3.Start)
		}
		r := ranges[k]
		x, err := strconv.Atoi(v)
		if err != nil || r.Step <= 0 || x < r.Start || x > r.Last() || (x-r.Start)%r.Step != 0 {
			return -1, fmt.Errorf("--combo %q: %s %s is not in the grid (%s: %s)", s, name, v, name, r)
		}
		at[k] = (x - r.Start) / r.Step
	}
	return g.Index(at[0], at[1]), nil
}
