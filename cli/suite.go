package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/engine/output"
	enginepreflight "sweepbench/engine/preflight"
	"sweepbench/engine/robust"
	"sweepbench/engine/suite"
	"sweepbench/engine/text"
	"sweepbench/sessions"
)

// suiteResult is a suite run (or merged from shards): each dataset's
// report with its robustness set, the aggregate, and each session.
type suiteResult struct {
	id      string
	reports []*engine.Report
	agg     *suite.Aggregate
	lane    engine.Precision
}

// datasetOrigin names where a dataset came from: "--data x.csv", "--data
// @list.txt line 3 (./d/x.csv)" (the line as written), "--data-each
// d/*.csv (its match d/x.csv)".
func datasetOrigin(o suite.DatasetOrigin) string {
	s := dataFlag(o.Each) + " " + o.Value
	switch {
	case o.Line > 0:
		s += fmt.Sprintf(" line %d (%s)", o.Line, o.Written)
	case o.Each:
		s += " (its match " + o.Dataset + ")"
	case o.Value != o.Dataset:
		s += " (its dataset " + o.Dataset + ")"
	}
	return s
}

// warnRobustness says why dataset rep's robustness statistics are not
// (wholly) kept: err is sessions.Recording.Robustness or
// sessions.AnalyseReport's error (nil: nothing to say).
func warnRobustness(stderr io.Writer, rep *engine.Report, err error) {
	var se *sessions.SaveError
	switch {
	case err == nil:
	case errors.As(err, &se):
		warnNotSaved(stderr, se)
	default:
		fmt.Fprintf(stderr, "sweepbench: %s: robustness: %v\n", data.Sanitize(rep.Dataset.Name), err)
	}
}

// runSuite runs the study the flags describe on every dataset, one after
// the other (sessions.RunSuite, the workbench's path too: each an ordinary
// study saved as a session of its own whose Spec.Suite names the suite),
// then writes the per-dataset reports and the cross-dataset aggregate.
func runSuite(cmd *cobra.Command, sf *studyFlags, datasets []string, o runOutput) error {
	ctx := cmd.Context()
	stderr := newSanitized(cmd.ErrOrStderr())
	if _, err := robust.OptionsFor(sf.spec); err != nil {
		return err
	}
	if _, err := sf.spec.Parse(); err != nil {
		return err
	}
	var store *sessions.Store
	if o.save {
		if store = openStoreToSave(cmd, stderr); store != nil {
			defer store.Close()
		}
	}
	run, err := sessions.RunSuite(ctx, store, sf.spec, datasets, sessions.SuiteOptions{
		Build: func(ctx context.Context, _ int, sp engine.Spec) (*engine.Study, error) {
			return (&studyFlags{spec: sp}).study(ctx, backends())
		},
		Options: func(int, *engine.Study) engine.StudyOptions {
			return engine.StudyOptions{Keep: o.top, Discard: o.format == "table"}
		},
		Record: sessions.RecordOptions{SaveError: func(e *sessions.SaveError) { warnNotSaved(stderr, e) }},
		Starting: func(d, n int, path string) {
			if !o.quiet {
				fmt.Fprintf(stderr, "dataset %d of %d: %s\n", d+1, n, path)
			}
		},
		Built: func(d int, st *engine.Study) {
			mark(fmt.Sprintf("dataset %d of %d loaded, backend started", d+1, len(datasets)))
			if d == 0 {
				opt := preflightOptions
				opt.Discard = o.format == "table"
				if _, err := enginepreflight.PreflightStudy(ctx, st, opt); err != nil {
					// The first dataset's estimate stands for each: say it.
					msg := err.Error()
					if ce := (*enginepreflight.ConfirmError)(nil); errors.As(err, &ce) {
						msg = confirmText(ce)
					}
					fmt.Fprintf(stderr, "note: %s (each of %d datasets)\n", msg, len(datasets))
				}
			}
		},
		Ran: func(d int, st *engine.Study, rep *engine.Report, rec sessions.Recording, _ error) {
			mark(fmt.Sprintf("dataset %d of %d: study done (lanes, parity, saving)", d+1, len(datasets)))
			warnRobustness(stderr, rep, rec.Robustness) // computed on the run path
			if rep.Blocks != nil {
				mark(fmt.Sprintf("dataset %d of %d: robustness summarised", d+1, len(datasets)))
			}
		},
	})
	var se *sessions.SuiteError
	if errors.As(err, &se) {
		if se.Report != nil && errors.Is(se.Err, context.Canceled) {
			return &exitError{130, fmt.Errorf("interrupted on dataset %s: the suite is not complete", se.Dataset)}
		}
		return fmt.Errorf("dataset %s: %w", se.Dataset, se.Err)
	}
	if err != nil {
		return err
	}
	res := &suiteResult{id: run.ID, reports: run.Reports, agg: run.Aggregate, lane: run.Lane}
	werr := emit(cmd.OutOrStdout(), stderr, o.out, o.quiet, func(w io.Writer) error { return writeSuite(w, res, o.format, o.top) })
	mark("report written")
	if len(run.Sessions) > 0 && !o.quiet {
		fmt.Fprintf(stderr, "saved as %s in %s (suite %s, run %s; sweepbench sessions show ID)\n", sessions.IDList(run.Sessions), store.Path(), run.ID, run.Run)
	}
	if werr != nil {
		return werr
	}
	return collapseExit(res, o.failOnCollapse)
}

// collapseExit is exit status 3 when asked for (--fail-on-collapse) and
// the suite's overall parity verdict is collapse.
func collapseExit(res *suiteResult, fail bool) error {
	if !fail {
		return nil
	}
	if p := overallParity(res); p != nil && p.Verdict != engine.VerdictPass {
		return &exitError{3, fmt.Errorf("parity verdict over the %d datasets: %s", len(res.reports), p.Verdict)}
	}
	return nil
}

func overallParity(res *suiteResult) *engine.Parity {
	var ps []*engine.Parity
	for _, r := range res.reports {
		ps = append(ps, r.Parity)
	}
	return engine.OverallParity(ps)
}

// writeSuite writes a suite's result: the table (each dataset's report as
// `run` prints it, then the aggregate and the parity per dataset and
// overall), the JSON document ({"suite", "datasets": [each report],
// "aggregate", "parity"}), or the rows of every dataset in one file.
func writeSuite(w io.Writer, res *suiteResult, format string, top int) error {
	switch format {
	case "table":
		for d, rep := range res.reports {
			fmt.Fprintf(w, "== dataset %d of %d ==\n", d+1, len(res.reports))
			if err := writeReport(w, rep, "table", top); err != nil {
				return err
			}
			fmt.Fprintln(w)
		}
		sw := newSanitized(w)
		if err := res.agg.WriteTable(sw, top); err != nil {
			return err
		}
		writeSuiteParity(sw, res)
		return sw.Flush()
	case "json":
		return writeSuiteJSON(w, res)
	}
	if f, ok := output.ParseRowFormat(format); ok {
		return output.WriteSuiteRows(w, f, res.reports)
	}
	return fmt.Errorf("--format %q: want %s", format, reportFormats)
}

// writeSuiteJSON streams the suite's JSON document, {"suite", "datasets":
// [each report as output.WriteJSON writes it], "aggregate", "parity"},
// indented by two spaces: each report goes straight to w, never held whole
// in memory (at 102,400 combos over two datasets, building the document
// and re-indenting it took 2.3 GB and 9 s on the H200 machine).
func writeSuiteJSON(w io.Writer, res *suiteResult) error {
	bw := bufio.NewWriterSize(w, 256<<10)
	field := func(name string, v any, last bool) error {
		b, err := json.MarshalIndent(v, "  ", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintf(bw, "  %q: %s", name, b)
		if !last {
			bw.WriteString(",\n")
		}
		return nil
	}
	bw.WriteString("{\n")
	if err := field("suite", map[string]any{"id": res.id, "datasets": res.agg.Datasets}, false); err != nil {
		return err
	}
	bw.WriteString("  \"datasets\": [")
	for d, rep := range res.reports {
		if d > 0 {
			bw.WriteString(",")
		}
		bw.WriteString("\n    ")
		iw := &indentWriter{w: bw, prefix: []byte("    ")}
		if err := output.WriteJSON(iw, rep); err != nil {
			return err
		}
	}
	if len(res.reports) > 0 {
		bw.WriteString("\n  ")
	}
	bw.WriteString("],\n")
	if err := field("aggregate", res.agg.JSON(res.lane), false); err != nil {
		return err
	}
	if err := field("parity", suiteParityJSON(res), true); err != nil {
		return err
	}
	bw.WriteString("\n}\n")
	return bw.Flush()
}

// indentWriter writes JSON text to w with prefix after each newline but a
// last one (JSON strings hold no raw newline, so this indents a document
// by prefix, as json.Indent would, without holding it).
type indentWriter struct {
	w       io.Writer
	prefix  []byte
	pending bool // a newline was read: written with the prefix before the next byte
}

func (p *indentWriter) Write(b []byte) (int, error) {
	n := len(b)
	for len(b) > 0 {
		if p.pending {
			if _, err := p.w.Write(append([]byte{'\n'}, p.prefix...)); err != nil {
				return 0, err
			}
			p.pending = false
		}
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			i = len(b)
		} else {
			p.pending = true
		}
		if _, err := p.w.Write(b[:i]); err != nil {
			return 0, err
		}
		b = b[min(i+1, len(b)):]
	}
	return n, nil
}

// suiteParityJSON is the parity per dataset (its verdict and reasons) and
// overall (engine.OverallParity).
func suiteParityJSON(res *suiteResult) any {
	type brief struct {
		Dataset       string   `json:"dataset"`
		Verdict       string   `json:"verdict"`
		Reasons       []string `json:"reasons"`
		TotalTrades64 int      `json:"total_trades64"`
		TotalTrades32 int      `json:"total_trades32"`
		ShiftedTrades int      `json:"shifted_trades"`
		MaxAbsDPnLpp  float64  `json:"max_abs_dpnl_pp"`
		FlipCount     int      `json:"flips"`
		NonBorderline int      `json:"non_borderline_flips"`
	}
	of := func(name string, p *engine.Parity) *brief {
		if p == nil {
			return nil
		}
		return &brief{name, string(p.Verdict), append([]string{}, p.Reasons...), p.TotalTrades64, p.TotalTrades32,
			p.ShiftedTrades, finiteOr(p.MaxAbsDPnLpp), p.FlipCount, p.NonBorderlineFlips}
	}
	var per []*brief
	for _, r := range res.reports {
		per = append(per, of(r.Dataset.Name, r.Parity))
	}
	return map[string]any{"per_dataset": per, "overall": of("all", overallParity(res))}
}

func finiteOr(v float64) float64 {
	if v != v || v > 1e308 || v < -1e308 {
		return -1
	}
	return v
}

// writeSuiteParity prints the parity verdict per dataset and overall.
func writeSuiteParity(w io.Writer, res *suiteResult) {
	fmt.Fprintf(w, "\nParity fp32 vs fp64 per dataset:\n")
	for _, r := range res.reports {
		p := r.Parity
		if p == nil {
			fmt.Fprintf(w, "  %-8s %s\n", "none", r.Dataset.Name)
			continue
		}
		fmt.Fprintf(w, "  %-8s %s: trades fp64 %s, fp32 %s; max |dPnL| %s pp; %s flips (%s non-borderline)\n",
			strings.ToUpper(string(p.Verdict)), r.Dataset.Name, text.Thousands(p.TotalTrades64), text.Thousands(p.TotalTrades32),
			strconv.FormatFloat(p.MaxAbsDPnLpp, 'f', 4, 64), text.Thousands(p.FlipCount), text.Thousands(p.NonBorderlineFlips))
	}
	if p := overallParity(res); p != nil {
		fmt.Fprintf(w, "  overall: %s over %d datasets", strings.ToUpper(string(p.Verdict)), len(res.reports))
		if len(p.Reasons) > 0 {
			fmt.Fprintf(w, " (%s)", strings.Join(p.Reasons, "; "))
		}
		fmt.Fprintln(w)
	}
}
