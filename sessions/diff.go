package sessions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/engine/output"
	"sweepbench/engine/text"
)

// RunRef names one stored run: a session id and, optionally, a precision,
// written "12" or "12:fp32". Without a precision it is the session's fp64
// run, or its only run.
type RunRef struct {
	ID        int64
	Precision engine.Precision
	Explicit  bool // the precision was given
}

// ParseRunRef parses "ID" or "ID:PRECISION".
func ParseRunRef(s string) (RunRef, error) {
	idPart, prec, hasPrec := strings.Cut(strings.TrimSpace(s), ":")
	id, err := strconv.ParseInt(idPart, 10, 64)
	if err != nil || id <= 0 {
		return RunRef{}, fmt.Errorf("%q: want a session id, optionally with :fp64 or :fp32, e.g. 12:fp32", s)
	}
	r := RunRef{ID: id}
	if hasPrec {
		ps, err := engine.ParsePrecisions(prec)
		if err != nil || len(ps) != 1 {
			return RunRef{}, fmt.Errorf("%q: precision %q: want fp64 or fp32", s, prec)
		}
		r.Precision, r.Explicit = ps[0], true
	}
	return r, nil
}

func (r RunRef) String() string { return fmt.Sprintf("%d:%s", r.ID, r.Precision) }

// Loader loads a session's dataset again, from its Spec, the way `run`
// loaded it. Diff uses it to recompute the indicator series; nil means
// LoadSpec.
type Loader func(ctx context.Context, ss *Session) (*data.Dataset, error)

// DiffSide is one side of a Diff.
type DiffSide struct {
	Ref     RunRef // with the precision resolved
	Session *Session
	Run     *engine.Run
}

// Diff is a parity report between two stored runs of the same dataset and
// grid: B (the test) against A (the reference), as SPEC "Parity" compares
// fp32 against fp64, whatever differs between them (precision, backend,
// WMA formulation, fee, bars per year).
type Diff struct {
	A, B    DiffSide
	Dataset data.Info
	Grid    engine.Grid
	// Differences lists the settings that differ, "fee 0.00045 -> 0.001".
	Differences []string
	// VerdictApplies is true when only numerical settings differ (precision,
	// WMA formulation, backend, device): the runs should agree, and the
	// SPEC verdict says whether they do. When a strategy setting differs
	// (fee, mode, source, bars per year) the deltas are the effect of the
	// change and the verdict means nothing.
	VerdictApplies bool
	// MetricsOnly: trade counts and returns compared per combo, without
	// flips or indicator errors, because the indicator series cannot be
	// compared (Why says why: the sources or modes differ, or the dataset
	// could not be loaded again).
	MetricsOnly bool
	Why         string
	Parity      *engine.Parity
}

// Diff compares run b against run a. Both must be on the same bars (same
// SHA-256, count, first and last bar) and the same grid. When their price
// source (hull's HMA source) and mode agree, a hull study's indicator
// series of each side are recomputed by the registered CPU arithmetic
// (engine.IndicatorsOf) in that side's precision and WMA formulation on
// the dataset load returns, and engine.Compare reports flips with their
// margins (taken from A) and the indicator errors of B against A; a
// strategy study's (A fp64) has B's positions recomputed in its precision
// and formulation against fp64 direct by its family's arithmetic
// (engine.CompareRunsSides), one flip per divergence. Either way the
// collapse reasons call the sides A and B. When the sources or the modes
// differ, or load is nil or fails, the comparison is of the saved metrics
// only (trade counts and returns per combo).
func (s *Store) Diff(ctx context.Context, a, b RunRef, load Loader) (*Diff, error) {
	var err error
	d := &Diff{}
	if d.A, err = s.side(ctx, a); err != nil {
		return nil, err
	}
	if d.B, err = s.side(ctx, b); err != nil {
		return nil, err
	}
	sa, sb := d.A.Session, d.B.Session
	da, db := &sa.Dataset, &sb.Dataset
	if da.SHA256 != db.SHA256 || da.Bars != db.Bars || !da.First.Equal(db.First) || !da.Last.Equal(db.Last) {
		// The same file over other bars (--head, --from, --to) says so;
		// other files give their hashes.
		what, sameFile := "different data", da.SHA256 == db.SHA256
		if sameFile {
			what = "different windows of one file (sha256 " + short(da.SHA256) + ")"
		}
		window := func(d *data.Info) string {
			w := fmt.Sprintf("%s, %d bars %s .. %s", d.Name, d.Bars, d.First.UTC().Format("2006-01-02 15:04"), d.Last.UTC().Format("2006-01-02 15:04"))
			if !sameFile {
				w += ", sha256 " + short(d.SHA256)
			}
			return w
		}
		return nil, fmt.Errorf("sessions %d and %d are on %s (%s; %s): a diff compares runs on the same bars",
			sa.ID, sb.ID, what, window(da), window(db))
	}
	if !sameGrid(sa.Grid, sb.Grid) {
		return nil, errors.New(gridMismatch(sa, sb))
	}
	d.Dataset, d.Grid = *da, sa.Grid
	strategy := d.differences()
	d.VerdictApplies = !strategy

	var bars *engine.Bars
	switch {
	case sa.Params.Source != sb.Params.Source:
		d.MetricsOnly, d.Why = true, fmt.Sprintf("the HMA sources differ (%s -> %s): the indicator series are not comparable", sa.Params.Source, sb.Params.Source)
		if sa.Grid.Strategy != nil {
			d.MetricsOnly, d.Why = true, fmt.Sprintf("the price sources differ (%s -> %s): the %s study's series are not comparable", sa.Params.Source, sb.Params.Source, sa.Grid.Family())
		}
	case sa.Params.Mode != sb.Params.Mode:
		d.MetricsOnly, d.Why = true, fmt.Sprintf("the modes differ (%s -> %s): positions are not comparable bar by bar", sa.Params.Mode, sb.Params.Mode)
	case sa.Grid.Strategy != nil && d.A.Run.Precision != engine.FP64:
		// A family's arithmetic recomputes the positions of a precision
		// against fp64 direct only (engine.Strategy.Compare).
		d.MetricsOnly, d.Why = true, fmt.Sprintf("a %s study's positions are recomputed against fp64 only, and A is %s", sa.Grid.Family(), d.A.Run.Precision)
	default:
		if load == nil {
			load = LoadSpec
		}
		ds, err := load(ctx, sa)
		switch {
		case err != nil:
			d.MetricsOnly, d.Why = true, fmt.Sprintf("the dataset could not be loaded again (%v)", err)
		case ds.Info.SHA256 != da.SHA256 || ds.Bars.Len() != da.Bars:
			d.MetricsOnly, d.Why = true, fmt.Sprintf("the dataset %s changed since the sessions were saved (sha256 %s -> %s)",
				sa.Spec.Data, short(da.SHA256), short(ds.Info.SHA256))
		default:
			bars = &ds.Bars
		}
	}
	tol := sa.Tolerance
	switch {
	case bars == nil && d.Grid.Strategy != nil:
		d.Parity = engine.CompareMetrics(d.A.Run, d.B.Run, tol, "A", "B")
	case bars == nil:
		d.Parity, err = engine.Compare(ctx, engine.ParityInput[float64, float64]{Bars: &engine.Bars{}, Grid: d.Grid, Params: sa.Params,
			Ref: d.A.Run, Test: d.B.Run, RefInd: noIndicators(), TestInd: noIndicators(), Tolerance: tol, RefLabel: "A", TestLabel: "B"})
	case d.Grid.Strategy != nil:
		// The family's own comparison: B's positions in its precision and
		// formulation against fp64 direct (A), divergence by divergence.
		test := *d.B.Run
		test.WMA = formulation(d.B.Run)
		d.Parity, err = engine.CompareRunsSides(ctx, &engine.Job{Bars: bars, Grid: d.Grid, Params: sa.Params, Precision: engine.FP64, WMA: engine.Direct},
			d.A.Run, &test, tol, nil, "A", "B")
	default:
		d.Parity, err = compareRecomputed(ctx, bars, d.Grid, sa.Params, d.A.Run, d.B.Run, tol)
	}
	if err != nil {
		return nil, fmt.Errorf("diff %s %s: %w", d.A.Ref, d.B.Ref, err)
	}
	return d, nil
}

func noIndicators() *engine.Indicators[float64] {
	return &engine.Indicators[float64]{H: map[int][]float64{}, H3: map[int][]float64{}}
}

// side resolves a RunRef and reads its run.
func (s *Store) side(ctx context.Context, r RunRef) (DiffSide, error) {
	ss, err := s.Get(ctx, r.ID)
	if err != nil {
		return DiffSide{}, err
	}
	if !r.Explicit {
		switch {
		case ss.Run(engine.FP64) != nil:
			r.Precision = engine.FP64
		case len(ss.Runs) > 0:
			r.Precision = ss.Runs[0].Precision
		default:
			return DiffSide{}, fmt.Errorf("session %d has no saved run", r.ID)
		}
	}
	rs := ss.Run(r.Precision)
	if rs == nil {
		return DiffSide{}, fmt.Errorf("session %d has no %s run (it has %s)", r.ID, r.Precision, runList(ss))
	}
	run, err := s.readRun(ctx, ss, rs)
	if err != nil {
		return DiffSide{}, err
	}
	r.Explicit = true
	return DiffSide{Ref: r, Session: ss, Run: run}, nil
}

// differences fills d.Differences and reports whether a strategy setting
// (one that changes the trades or the metrics by design) differs.
func (d *Diff) differences() (strategy bool) {
	a, b := d.A.Session, d.B.Session
	ra, rb := d.A.Run, d.B.Run
	add := func(strat bool, name, x, y string) {
		if x != y {
			d.Differences = append(d.Differences, fmt.Sprintf("%s %s -> %s", name, x, y))
			strategy = strategy || strat
		}
	}
	g := func(v float64) string { return text.FormatFloat(v) }
	add(true, "fee", g(100*a.Params.Fee)+"%", g(100*b.Params.Fee)+"%")
	add(true, "mode", a.Params.Mode.String(), b.Params.Mode.String())
	add(true, "source", a.Params.Source.String(), b.Params.Source.String())
	add(true, "bars/year", g(a.Params.BarsPerYear), g(b.Params.BarsPerYear))
	add(false, "precision", ra.Precision.String(), rb.Precision.String())
	add(false, "wma", ra.WMA.String(), rb.WMA.String())
	add(false, "backend", ra.Backend, rb.Backend)
	add(false, "device", ra.Device, rb.Device)
	return strategy
}

// compareRecomputed builds each side's indicator series in its own
// precision and formulation, then compares.
func compareRecomputed(ctx context.Context, bars *engine.Bars, g engine.Grid, p engine.Params, a, b *engine.Run, tol float64) (*engine.Parity, error) {
	switch {
	case a.Precision == engine.FP64 && b.Precision == engine.FP64:
		return compareT[float64, float64](ctx, bars, g, p, a, b, tol)
	case a.Precision == engine.FP64:
		return compareT[float64, float32](ctx, bars, g, p, a, b, tol)
	case b.Precision == engine.FP64:
		return compareT[float32, float64](ctx, bars, g, p, a, b, tol)
	}
	return compareT[float32, float32](ctx, bars, g, p, a, b, tol)
}

func compareT[A, B engine.Float](ctx context.Context, bars *engine.Bars, g engine.Grid, p engine.Params, a, b *engine.Run, tol float64) (*engine.Parity, error) {
	ia, err := engine.IndicatorsOf[A](ctx, &engine.Job{Bars: bars, Grid: g, Params: p, Precision: a.Precision, WMA: formulation(a)})
	if err != nil {
		return nil, err
	}
	ib, err := engine.IndicatorsOf[B](ctx, &engine.Job{Bars: bars, Grid: g, Params: p, Precision: b.Precision, WMA: formulation(b)})
	if err != nil {
		return nil, err
	}
	return engine.Compare(ctx, engine.ParityInput[A, B]{Bars: bars, Grid: g, Params: p, Ref: a, Test: b, RefInd: ia, TestInd: ib, Tolerance: tol, RefLabel: "A", TestLabel: "B"})
}

// formulation is the WMA a run computed with: fp64 is always direct.
func formulation(r *engine.Run) engine.Formulation {
	if r.Precision == engine.FP64 {
		return engine.Direct
	}
	return r.WMA
}

func (s DiffSide) label(name string) string {
	r := s.Run
	return fmt.Sprintf("%s = session %d %s (%s, wma %s, fee %s%%, %s, source %s)", name, s.Ref.ID, r.Precision, r.Backend, r.WMA,
		trim(100*s.Session.Params.Fee, 4), s.Session.Params.Mode, s.Session.Params.Source)
}

// WriteTable writes the diff for a terminal: both sides, what differs,
// how they were compared, the parity summary (with the verdict when it
// applies), and the top combos by |dPnL|.
func (d *Diff) WriteTable(w io.Writer, top int) error {
	ew := text.NewErrWriter(w)
	p := d.Parity
	ew.Printf("diff    %s\n        against %s\n", d.B.label("B"), d.A.label("A"))
	ew.Printf("data    %s: %s bars %s .. %s UTC, sha256 %s\n", d.Dataset.Name, text.Thousands(d.Dataset.Bars),
		d.Dataset.First.Format("2006-01-02 15:04"), d.Dataset.Last.Format("2006-01-02 15:04"), short(d.Dataset.SHA256))
	if d.Grid.Strategy == nil {
		ew.Printf("grid    hma %s x hma3 %s = %s combos\n", d.Grid.HMA, d.Grid.HMA3, text.Thousands(d.Grid.Len()))
	} else {
		ew.Printf("grid    %s = %s combos\n", GridName(d.Grid), text.Thousands(d.Grid.Len()))
	}
	if len(d.Differences) == 0 {
		ew.Printf("differs nothing: the same settings run twice\n")
	} else {
		ew.Printf("differs %s\n", strings.Join(d.Differences, "; "))
	}
	if d.MetricsOnly {
		ew.Printf("method  saved metrics only (trades and returns per combo; no flips, no indicator errors): %s\n", d.Why)
	} else {
		ew.Printf("method  positions bar by bar from indicator series recomputed for each side (A %s %s, B %s %s); flip margins from A\n",
			d.A.Run.Precision, formulation(d.A.Run), d.B.Run.Precision, formulation(d.B.Run))
	}
	output.WriteParitySummary(ew, p, output.ParityLabels{Title: "Parity B vs A", Ref: "A", Test: "B",
		Verdict: d.VerdictApplies, NoVerdict: "verdict n/a (a strategy setting differs: the deltas are the effect of the change)",
		MetricsOnly: d.MetricsOnly})

	combos := append([]engine.ComboParity(nil), p.Combos...)
	sort.SliceStable(combos, func(i, j int) bool { return math.Abs(combos[i].DPnLpp) > math.Abs(combos[j].DPnLpp) })
	if top < len(combos) {
		combos = combos[:top]
	}
	if len(combos) > 0 {
		ew.Printf("\nTop %d combos by |dPnL| (returns in %%, dPnL in pp)\n", len(combos))
		tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "%s\ttradesA\ttradesB\tdn\treturnA\treturnB\tdPnL\tsharpeA\tsharpeB\tflips\t\n", strings.Join(d.Grid.Columns(), "\t"))
		for _, c := range combos {
			ra, rb := d.A.Run.Lookup(c.Index), d.B.Run.Lookup(c.Index)
			flips := strconv.Itoa(c.Flips)
			if d.MetricsOnly {
				flips = "-"
			}
			fmt.Fprintf(tw, "%s\t%d\t%d\t%+d\t%s\t%s\t%s\t%s\t%s\t%s\t\n", strings.Join(paramCells(d.Grid, c.Index), "\t"), c.Trades64, c.Trades32, c.Dn,
				pct(ra.TotalReturn), pct(rb.TotalReturn), signed(c.DPnLpp), num(ra.Sharpe), num(rb.Sharpe), flips)
		}
		tw.Flush()
	}
	return ew.Err()
}

type diffSideJSON struct {
	Session     int64            `json:"session"`
	Precision   string           `json:"precision"`
	Backend     string           `json:"backend"`
	Device      string           `json:"device"`
	WMA         string           `json:"wma"`
	Fee         engine.JSONFloat `json:"fee"`
	Mode        string           `json:"mode"`
	Source      string           `json:"source"`
	BarsPerYear engine.JSONFloat `json:"bars_per_year"`
	Status      string           `json:"status"`
	Created     time.Time        `json:"created"`
}

func (s DiffSide) toJSON() diffSideJSON {
	p := s.Session.Params
	return diffSideJSON{s.Ref.ID, s.Run.Precision.String(), s.Run.Backend, s.Run.Device, s.Run.WMA.String(),
		engine.JSONFloat(p.Fee), p.Mode.String(), p.Source.String(), engine.JSONFloat(p.BarsPerYear), string(s.Run.Status), s.Session.Created}
}

// Report is the diff as an engine.Report: runs A and B, and the parity of
// B against A (in its JSON, "fp64" fields are A's and "fp32" fields B's).
func (d *Diff) Report() *engine.Report {
	a := d.A.Session
	return &engine.Report{Dataset: d.Dataset, Params: a.Params, Grid: d.Grid, WMA: a.WMA, Backend: d.A.Run.Backend,
		Note: "diff: " + strings.Join(d.Differences, "; "), Created: time.Now().UTC(),
		Runs: []*engine.Run{d.A.Run, d.B.Run}, Parity: d.Parity, ParityOf: fmt.Sprintf("B (%s) vs A (%s)", d.B.Ref, d.A.Ref),
		BuyHold: a.BuyHold}
}

// WriteJSON writes {"a", "b", "differences", "verdict_applies",
// "metrics_only", "why", "report"}, the report in `run --format json`'s
// shape (see Report).
func (d *Diff) WriteJSON(w io.Writer) error {
	rep, err := output.MarshalReport(d.Report()) // compact; the Encoder indents it with the rest
	if err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		A              diffSideJSON    `json:"a"`
		B              diffSideJSON    `json:"b"`
		Differences    []string        `json:"differences"`
		VerdictApplies bool            `json:"verdict_applies"`
		MetricsOnly    bool            `json:"metrics_only"`
		Why            string          `json:"why,omitempty"`
		Report         json.RawMessage `json:"report"`
	}{d.A.toJSON(), d.B.toJSON(), append([]string{}, d.Differences...), d.VerdictApplies, d.MetricsOnly, d.Why, rep})
}

// The engine's table formatters, under the short names the table code uses.
var (
	trim   = text.TrimFloat
	pct    = text.Percent
	num    = text.Fixed3
	signed = text.Signed
)
