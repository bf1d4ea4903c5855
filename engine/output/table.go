package output

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/engine/text"
)

// WriteTable writes the human report: dataset, parameters, each run's
// speed, the top combos (fp64 and fp32 side by side when both ran, every
// headline metric otherwise) and the parity summary with its verdict.
func WriteTable(w io.Writer, r *engine.Report, top int) error {
	bw := text.NewErrWriter(w)
	d := r.Dataset
	tf := d.Timeframe
	if tf == "" && d.MedianSpacing > 0 {
		tf = text.ShortDuration(d.MedianSpacing)
	}
	bw.Printf("data    %s: %s bars %s .. %s UTC (%s", data.Sanitize(d.Name), text.Thousands(d.Bars),
		d.First.Format("2006-01-02 15:04"), d.Last.Format("2006-01-02 15:04"), tf)
	if d.Timeframe != "" {
		bw.Printf(", resampled from %s bars", text.Thousands(d.SourceBars))
	}
	if d.Files > 1 {
		bw.Printf(", %s files", text.Thousands(d.Files))
	}
	bw.Printf(", %s", text.Plural(d.Gaps, "gap"))
	if d.Gaps > 0 {
		bw.Printf(", largest %s", text.ShortDuration(d.LargestGap))
	}
	if d.DroppedNaN > 0 {
		bw.Printf(", %d rows without prices dropped", d.DroppedNaN)
		if len(d.DroppedAt) > 0 {
			bw.Printf(" (%s", data.Sanitize(strings.Join(d.DroppedAt, ", ")))
			if d.DroppedNaN > len(d.DroppedAt) {
				bw.Printf(", ...")
			}
			bw.Printf(")")
		}
	}
	bw.Printf(")")
	if s := d.ReadAs(); s != "" {
		bw.Printf("; %s", s)
	}
	bw.Printf("\n")
	bw.Printf("grid    %s = %s%s; fee %s%% per side; %s; source %s; %s bars/year, %s\n",
		gridText(r.Grid), text.Plural(r.Grid.Len(), "combo"), engine.AliasNote(r.Grid, " (", ")"), text.TrimFloat(r.Params.Fee*100, 4), r.Params.Mode,
		r.Params.Source, text.TrimFloat(r.Params.BarsPerYear, 2), engine.BarsPerYearRule(&r.Dataset, r.Params.BarsPerYear))
	if x := ExecText(r.Params); x != "" {
		bw.Printf("exec    %s\n", x)
	}
	if math.IsNaN(r.BuyHold) {
		bw.Printf("hold    buy & hold %s (not recorded with this session)\n", engine.NotComputedText)
	} else {
		bw.Printf("hold    buy & hold %s%% (first close to last, no fee)\n", text.Percent(r.BuyHold))
	}
	if r.Note != "" {
		bw.Printf("note    %s\n", r.Note)
	}
	bw.Printf("\n")
	tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "backend\tprecision\twma\tstatus\tcombos\tprepare\telapsed\tcombos/s\tdevice\t\n")
	for _, run := range r.Runs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s/%s\t%s\t%s\t%s\t%s\t\n", run.Backend, run.Precision, run.WMA, run.Shown(),
			text.Thousands(run.Count()), text.Thousands(run.Grid.Len()), secs(run.Prepare), secs(run.Elapsed),
			text.Thousands(int(run.CombosPerSecond()+0.5)), run.Device)
	}
	tw.Flush()
	for _, run := range r.Runs {
		if run.Err != nil && run.Status != engine.StatusComplete {
			if msg := engine.ErrText(run.Err.Error()); run.Shown() == engine.StatusInterrupted && strings.HasPrefix(msg, "interrupted") {
				bw.Printf("%s %s\n", run.Precision, msg) // "fp64 interrupted (terminated)"
			} else {
				bw.Printf("%s %s: %s\n", run.Precision, run.Shown(), msg)
			}
		}
		if run.Saving > run.Elapsed/10 {
			bw.Printf("%s: %s of the %s elapsed went to saving results in the sessions store (--no-save skips it)\n",
				run.Precision, secs(run.Saving), secs(run.Elapsed))
		}
	}
	for _, p := range r.NotStarted() {
		bw.Printf("%s not started: the study stopped before its lane began\n", p)
	}
	if !r.Complete() && len(r.Runs) > 0 {
		bw.Printf("INCOMPLETE: the tables below cover only the combos computed before the study stopped")
		if r.Parity == nil && len(r.Requested) > 1 {
			bw.Printf("; no parity report (it needs combos computed in both fp64 and fp32)")
		}
		bw.Printf("\n")
	}

	ref, test := r.Run(engine.FP64), r.Run(engine.FP32)
	switch {
	case ref != nil && test != nil && ref.Count() > 0:
		tops, twins := topDistinct(ref, r.Objective, top)
		if len(tops) == 0 {
			bw.Printf("\nTop combos by fp64 %s: none of the %s meets the constraints\n", r.Objective.Label(), text.Plural(ref.Count(), "combo"))
			break
		}
		bw.Printf("\nTop %s%s by fp64 %s, fp64 | fp32 side by side (return, expectancy, exposure and dPnL in %%, pp)\n", text.Plural(len(tops), "combo"), ofComputed(ref), r.Objective.Label())
		// The objective's own columns when the table's do not show it.
		obj := r.Objective.Name()
		extra := !slices.Contains([]string{"sharpe", "total_return", "max_drawdown", "win_rate", "total_trades",
			"profit_factor", "expectancy", "sqn", "exposure"}, obj)
		tw = tabwriter.NewWriter(bw, 0, 0, 2, ' ', tabwriter.AlignRight)
		head := comboHead(r.Grid) + "trades64\ttrades32\tdn\treturn64\treturn32\tdPnL\tsharpe64\tsharpe32\tmaxdd64\twin64\tpf64\texpect64\tsqn64\texpo64\t"
		if extra {
			head += obj + "64\t" + obj + "32\t"
		}
		fmt.Fprintln(tw, head)
		for _, c := range tops {
			t := test.Lookup(c.Index)
			if t == nil {
				fmt.Fprintf(tw, "%s%d\t-\t-\t%s\t-\t-\t%s\t-\t%s\t%s\t%s", comboCells(r.Grid, c, twins), c.TotalTrades,
					text.Percent(c.TotalReturn), text.Fixed3(c.Sharpe), text.Percent(c.MaxDrawdown), text.Percent(c.WinRate), tradeCells(&c.Metrics))
				if extra {
					fmt.Fprintf(tw, "%s\t-\t", MetricCell(obj, &c.Metrics))
				}
				fmt.Fprintln(tw)
				continue
			}
			fmt.Fprintf(tw, "%s%d\t%d\t%+d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s", comboCells(r.Grid, c, twins), c.TotalTrades, t.TotalTrades,
				t.TotalTrades-c.TotalTrades, text.Percent(c.TotalReturn), text.Percent(t.TotalReturn), text.Signed(100*(t.TotalReturn-c.TotalReturn)),
				text.Fixed3(c.Sharpe), text.Fixed3(t.Sharpe), text.Percent(c.MaxDrawdown), text.Percent(c.WinRate), tradeCells(&c.Metrics))
			if extra {
				fmt.Fprintf(tw, "%s\t%s\t", MetricCell(obj, &c.Metrics), MetricCell(obj, &t.Metrics))
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
		noTrades(bw, tops, r.Objective)
	default:
		for _, run := range r.Runs {
			if run.Count() == 0 {
				continue
			}
			tops, twins := topDistinct(run, r.Objective, top)
			if len(tops) == 0 {
				bw.Printf("\nTop combos by %s %s: none of the %s meets the constraints\n", run.Precision, r.Objective.Label(), text.Plural(run.Count(), "combo"))
				continue
			}
			bw.Printf("\nTop %s%s by %s %s (returns, drawdown, win rate, expectancy, exposure, VaR in %%)\n", text.Plural(len(tops), "combo"), ofComputed(run), run.Precision, r.Objective.Label())
			tw = tabwriter.NewWriter(bw, 0, 0, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintf(tw, "%strades\treturn\tcagr\tsharpe\tsortino\tmaxdd\tcalmar\twin\tpf\texpect\tsqn\texpo\tvar95\tcvar95\tomega\t\n", comboHead(r.Grid))
			for _, c := range tops {
				fmt.Fprintf(tw, "%s%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s%s\t%s\t%s\t\n", comboCells(r.Grid, c, twins), c.TotalTrades,
					text.Percent(c.TotalReturn), text.Percent(c.CAGR), text.Fixed3(c.Sharpe), text.Fixed3(c.Sortino), text.Percent(c.MaxDrawdown), text.Fixed3(c.Calmar),
					text.Percent(c.WinRate), tradeCells(&c.Metrics), text.Percent(c.VaR95), text.Percent(c.CVaR95), text.Fixed3(c.Omega))
			}
			tw.Flush()
			noTrades(bw, tops, r.Objective)
		}
	}
	if p := r.Parity; p != nil {
		writeParity(bw, r, p)
	}
	return bw.Err()
}

// noTrades notes listed combos that never trade: their Sharpe is 0 (SPEC:
// 0 when the returns' deviation is 0), which outranks every losing combo,
// so a grid whose combos mostly lose lists them first. Nothing when the
// constraints already ask for trades or none is listed.
func noTrades(bw *text.ErrWriter, tops []engine.ComboResult, o engine.Objective) {
	if o.MinTrades > 0 {
		return
	}
	n := 0
	for _, c := range tops {
		if c.TotalTrades == 0 {
			n++
		}
	}
	if n > 0 {
		what := fmt.Sprintf("%d of these combos make", n)
		if n == 1 {
			what = "1 of these combos makes"
		}
		bw.Printf("  note: %s no trade (a Sharpe of 0 outranks every losing combo): --min-trades 1 lists only combos that trade\n", what)
	}
}

// topDistinct is TopBy(run, o, k) with HMA3 twins (HMA3Twin: the same
// backtest, computed once) on one row: the best k distinct combos, and
// for each listed combo whose twin also ranked (next to it: equal values,
// ties by grid order), that twin's HMA3 length (twins). A kept run
// (StudyOptions.Discard) holds its best Keep combos, so asking for k rows
// gives at least k/2 distinct ones.
func topDistinct(run *engine.Run, o engine.Objective, k int) ([]engine.ComboResult, map[int]int) {
	all := engine.TopBy(run, o, 2*k)
	var out []engine.ComboResult
	twins := map[int]int{}
	for i := 0; i < len(all) && len(out) < k; i++ {
		c := all[i]
		if i+1 < len(all) && run.Grid.Strategy == nil {
			if n := all[i+1]; n.HMA == c.HMA && n.HMA3 == engine.HMA3Twin(c.HMA3) && sameMetrics(&n.Metrics, &c.Metrics) {
				twins[c.Index] = n.HMA3
				i++
			}
		}
		out = append(out, c)
	}
	return out, twins
}

// gridText is the report's grid line's grid: "hma 20:200:20 x hma3
// 30:240:30", or a strategy grid's family and text: "strategy cross: fast
// ema:5:50:5 x slow sma:20:200:10".
func gridText(g engine.Grid) string {
	if g.Strategy == nil {
		return fmt.Sprintf("hma %s x hma3 %s", g.HMA, g.HMA3)
	}
	return "strategy " + g.Family() + ": " + g.Text() // Text says "(fast < slow)"
}

// comboHead is a table's parameter columns, each ending in a tab: "hma",
// "hma3" for hull, a strategy grid's Columns (a leg's kind then its
// length: "fast_kind", "fast", ...).
func comboHead(g engine.Grid) string {
	if g.Strategy == nil {
		return "hma\thma3\t"
	}
	return strings.Join(g.Columns(), "\t") + "\t"
}

// comboCells is combo c's cells under comboHead: its HMA length and
// hma3Cell, or a strategy combo's parameters (Grid.Point: a leg's kind and
// length, a threshold's exact decimal).
func comboCells(g engine.Grid, c engine.ComboResult, twins map[int]int) string {
	if g.Strategy == nil {
		return fmt.Sprintf("%d\t%s\t", c.HMA, hma3Cell(c, twins))
	}
	return pointCells(g.Point(c.Index))
}

// pointCells is a strategy combo's parameter cells, each ending in a tab.
func pointCells(ps []engine.ParamValue) string {
	var b strings.Builder
	for _, p := range ps {
		if p.Kind != "" {
			b.WriteString(p.Kind + "\t")
		}
		b.WriteString(p.Text + "\t")
	}
	return b.String()
}

// hma3Cell is a top list's HMA3 cell: the length, or "L|L'" for a combo
// listed with its twin.
func hma3Cell(c engine.ComboResult, twins map[int]int) string {
	if t, ok := twins[c.Index]; ok {
		return fmt.Sprintf("%d|%d", min(c.HMA3, t), max(c.HMA3, t))
	}
	return strconv.Itoa(c.HMA3)
}

// ofComputed qualifies a top list of a run that stopped early: " of the
// 2,440 computed (of 8,928)"; "" for a complete run.
func ofComputed(run *engine.Run) string {
	if run.Complete() {
		return ""
	}
	return fmt.Sprintf(" of the %s computed (of %s)", text.Thousands(run.Count()), text.Thousands(run.Grid.Len()))
}

func writeParity(bw *text.ErrWriter, r *engine.Report, p *engine.Parity) {
	WriteParitySummary(bw, p, ParityLabels{Title: "Parity " + r.ParityOf, Ref: "fp64", Test: "fp32", Verdict: true, Limit: true, Grid: r.Grid})
}

// ParityLabels name the two sides of a parity summary and what it shows:
// a study's own fp32 vs fp64, or a session diff's B vs A.
type ParityLabels struct {
	Title     string // "Parity fp32 vs fp64"
	Ref, Test string // "fp64", "fp32"; "A", "B"
	// Verdict: the pass/collapse verdict applies (else NoVerdict is
	// printed in its place and the collapse reasons are left out).
	Verdict     bool
	NoVerdict   string
	MetricsOnly bool // saved metrics only: no flips, no indicator errors
	Limit       bool // print the indicator-error limit
	// Grid is the study's: a strategy grid's flips list the combo's
	// parameter columns (comboHead) instead of hma and hma3. A zero Grid
	// (hull) lists a flip's Name, when it has one, as a "combo" column.
	Grid engine.Grid
}

// WriteParitySummary writes the parity summary lines (verdict, reasons,
// note, trades, PnL, flips, indicator error, the worst 5 flips) that the
// run report and the session diff share.
func WriteParitySummary(bw *text.ErrWriter, p *engine.Parity, l ParityLabels) {
	if l.Verdict {
		bw.Printf("\n%s: %s", l.Title, strings.ToUpper(string(p.Verdict)))
	} else {
		bw.Printf("\n%s: %s", l.Title, l.NoVerdict)
	}
	if p.Incomplete {
		bw.Printf(" (INCOMPLETE: %s combos compared)", text.Thousands(p.CombosCompared))
	}
	bw.Printf("\n")
	if l.Verdict {
		for _, reason := range p.Reasons {
			bw.Printf("  collapse: %s\n", reason)
		}
		if p.Explanation != "" {
			bw.Printf("  note: %s\n", p.Explanation)
		}
	}
	dn, dpnl := p.MaxFigures() // each maximum with its combo
	bw.Printf("  trades        %s %s, %s %s; shifted %s (%s%%); %s\n",
		l.Ref, text.Thousands(p.TotalTrades64), l.Test, text.Thousands(p.TotalTrades32), text.Thousands(p.ShiftedTrades), text.TrimFloat(100*p.ShiftedShare, 4), dn)
	bw.Printf("  pnl           %s; combos differing %s of %s\n", dpnl, text.Thousands(p.CombosDiffering), text.Thousands(p.CombosCompared))
	if l.MetricsOnly {
		return
	}
	margin := "|h3-h|/close"
	if l.Grid.Strategy != nil {
		margin = "at the root bar" // the family's own (SPEC Part 2)
	}
	bw.Printf("  flips         %s (%s non-borderline; borderline = margin %s < %g)\n",
		text.Thousands(p.FlipCount), text.Thousands(p.NonBorderlineFlips), margin, p.Tolerance)
	if p.Device != "" && l.Grid.Strategy != nil {
		bw.Printf("  found on      %s (each combo's divergences, from both precisions' series there; the listed worst recomputed on the CPU)\n", p.Device)
	} else if p.Device != "" {
		bw.Printf("  found on      %s (flips and indicator errors, from both precisions' series computed there)\n", p.Device)
	}
	if len(p.IndicatorErrors) > 0 {
		e := p.IndicatorErrors[0]
		bw.Printf("  indicators    max relative error %s (%s %d, bar %d)", text.Sci(p.MaxRelIndicatorError), e.Series, e.Length, e.Bar)
		if l.Limit {
			bw.Printf("; limit %g", engine.MaxIndicatorRel)
		}
		bw.Printf("\n")
	}
	if n := min(5, len(p.Flips)); n > 0 {
		bw.Printf("  worst flips (of %s):\n", text.Thousands(p.FlipCount))
		tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', tabwriter.AlignRight)
		named := l.Grid.Strategy == nil && slices.ContainsFunc(p.Flips[:n], func(f engine.Flip) bool { return f.Name != "" })
		head := "hma\thma3\t"
		switch {
		case l.Grid.Strategy != nil:
			head = comboHead(l.Grid)
		case named:
			head = "combo\t"
		}
		fmt.Fprintf(tw, "    %sbar\ttime (UTC)\tpos%s\tpos%s\tmargin\tborderline\t\n", head,
			strings.TrimPrefix(l.Ref, "fp"), strings.TrimPrefix(l.Test, "fp"))
		for _, f := range p.Flips[:n] {
			cells := fmt.Sprintf("%d\t%d\t", f.HMA, f.HMA3)
			switch {
			case l.Grid.Strategy != nil:
				cells = pointCells(l.Grid.Point(f.Index))
			case named:
				cells = f.Label() + "\t"
			}
			fmt.Fprintf(tw, "    %s%d\t%s\t%+d\t%+d\t%s\t%v\t\n", cells, f.Bar,
				time.Unix(0, f.Time).UTC().Format("2006-01-02 15:04"), f.Pos64, f.Pos32, text.Sci(f.Margin), f.Borderline)
		}
		tw.Flush()
	}
}

// MetricCell formats metric name of m for the top list: a count whole, a
// fraction (engine.IsFraction) as a percentage, a ratio as the table's
// other ratios, bars with one decimal; a metric not computed
// (engine.NotComputed: a GPU lane's trade metrics) as "n/a".
func MetricCell(name string, m *engine.Metrics) string {
	v, _ := m.Value(name)
	switch {
	case engine.NotComputed(name, v):
		return engine.NotComputedText
	case engine.IsCount(name):
		return strconv.Itoa(int(v))
	case engine.IsFraction(name):
		return text.Percent(v)
	case name == "avg_trade_bars" || name == "max_drawdown_bars":
		return text.TrimFloat(v, 1)
	}
	return text.Fixed3(v)
}

// tableTradeMetrics are the SPEC Part 2 metrics the top lists show by
// default (pf, expect, sqn, expo): the ones a trader reads first; the rest
// are in the CSV, JSON and Parquet files and the workbench.
var tableTradeMetrics = []string{"profit_factor", "expectancy", "sqn", "exposure"}

// tradeCells is m's cells of tableTradeMetrics, each ending in a tab.
func tradeCells(m *engine.Metrics) string {
	var b strings.Builder
	for _, name := range tableTradeMetrics {
		b.WriteString(MetricCell(name, m) + "\t")
	}
	return b.String()
}

// sameMetrics is a == b metric by metric, as the twins' test was before
// SPEC Part 2 (a NaN of Part 1 equals nothing), with a metric not computed
// (engine.NotComputed: a GPU lane's trade metrics) equal to one not
// computed, so that a GPU lane's twins still share a row.
func sameMetrics(a, b *engine.Metrics) bool {
	var va, vb [engine.NumMetrics]float64
	a.Values(&va)
	b.Values(&vb)
	for i, name := range engine.MetricNames {
		if va[i] != vb[i] && !(engine.NotComputed(name, va[i]) && engine.NotComputed(name, vb[i])) {
			return false
		}
	}
	return true
}

// ExecText is the report's line of SPEC Part 2's execution options, those
// not at their default: "fill next-open; slippage 0.05% per unit of
// position change; risk-free 4%/year (sharpe, sortino)"; "" when all are.
func ExecText(p engine.Params) string {
	var parts []string
	if p.Fill != engine.FillClose {
		parts = append(parts, "fill "+p.Fill.String())
	}
	if p.Slippage != 0 {
		parts = append(parts, "slippage "+text.TrimFloat(p.Slippage*100, 4)+"% per unit of position change")
	}
	if p.RiskFree != 0 {
		parts = append(parts, "risk-free "+text.TrimFloat(p.RiskFree*100, 4)+"%/year (sharpe, sortino)")
	}
	return strings.Join(parts, "; ")
}

// secs spells d in seconds with three decimals: "1.234s".
func secs(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) + "s" }
