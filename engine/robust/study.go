package robust

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"sweepbench/engine"
	"sweepbench/engine/output"
	"sweepbench/engine/text"
)

// Options say what Analyse computes beside PBO, DSR and the plateau.
type Options struct {
	// Objective picks the best combos (DefaultObjective of the study's
	// bars per year when its BarsPerYear is 0).
	Objective Objective
	// WF, when set, runs a walk-forward (rolling:K or anchored).
	WF *WFSpec
	// Neighbourhood is the plateau's window (0: DefaultNeighbourhood).
	Neighbourhood int
	// Device, when set, runs PBO's passes there (the study's GPU backend,
	// where the per-block statistics came from).
	Device engine.PBODevice
	// Constraints: a combo is selectable only with at least MinTrades
	// trades and a max drawdown at most MaxDrawdown (a fraction; 0 = no
	// bound) over the whole sample. The others are never chosen (by PBO,
	// the walk-forward, the plateau and the DSR's selection) but still
	// count as trials.
	MinTrades   int
	MaxDrawdown float64
	// Bars, when set (the study's bars, those the report's run swept),
	// let Analyse recompute the walk-forward's chosen combos for its
	// stitched out-of-sample equity curve (StitchedEquity); nil: no curve.
	Bars *engine.Bars
}

// OptionsFor reads the robustness settings of a study's description, the
// one set of rules every front end (run's flags, the workbench's form)
// goes through: the objective (spec.Objective, "" = sharpe; with Blocks
// one of ObjectiveNames, ParseObjectiveMetric), the constraints
// (MinTrades, MaxDrawdown: checked by spec.Parse) and the walk-forward
// (spec.WF, ParseWF: it needs Blocks and leaves a block out of sample).
// Errors are *engine.FieldError values (fields wf and objective), joined,
// for a front end to phrase; Bars and Device are left to the caller.
func OptionsFor(spec engine.Spec) (Options, error) {
	o := Options{MinTrades: spec.MinTrades, MaxDrawdown: spec.MaxDrawdown}
	var errs []error
	if spec.Blocks > 0 {
		name := strings.ToLower(strings.TrimSpace(spec.Objective))
		if name == "" {
			name = "sharpe"
		}
		m, err := ParseObjectiveMetric(name)
		if err != nil {
			fe := fieldErr(engine.FieldObjective, spec.Objective, err)
			fe.Err = &reason{"with blocks, the robustness statistics need a metric they can take over blocks: " + fe.Err.Error(), errors.Unwrap(fe.Err)}
			errs = append(errs, fe)
		}
		o.Objective.Metric = m
	}
	if wf := strings.TrimSpace(spec.WF); wf != "" {
		w, err := ParseWF(wf)
		switch {
		case spec.Blocks == 0:
			errs = append(errs, &engine.FieldError{Field: engine.FieldWF, Value: spec.WF,
				Err: &reason{"the walk-forward runs over blocks: set blocks too (16 is usual)", ErrBlocks}})
		case err != nil:
			errs = append(errs, fieldErr(engine.FieldWF, spec.WF, err))
		case w.InSample >= spec.Blocks:
			errs = append(errs, &engine.FieldError{Field: engine.FieldWF, Value: spec.WF,
				Err: &reason{fmt.Sprintf("%d blocks in sample leave none out of sample of the %d blocks", w.InSample, spec.Blocks), ErrBlocks}})
		default:
			o.WF = &w
		}
	}
	return o, errors.Join(errs...)
}

// Robustness is what a study's selection is worth (issue 14's section):
// from the per-block statistics of its reference run (Report.Blocks).
type Robustness struct {
	Grid      engine.Grid
	Precision engine.Precision // the run the statistics come from
	Blocks    int
	Objective Objective
	Trials    int // the grid's distinct combos (HMA3 twins are one backtest)
	// Selectable combos of the grid under the constraints (MinTrades,
	// MaxDrawdown: the Options'); every combo without constraints.
	Selectable  int
	MinTrades   int
	MaxDrawdown float64
	// Selected is the best combo by the objective over the whole sample:
	// what a user of the sweep would pick. Its DSR says what is left of
	// its Sharpe once the search is accounted for.
	Selected int
	DSR      *DSR
	PBO      *PBOResult // nil when the block count is odd or above MaxPBOBlocks (PBONote says)
	PBONote  string     // why there is no PBO
	Plateau  *PlateauResult
	WF       *WFResult // nil unless asked for
	// blockBars is the shortest block's bar count.
	blockBars int
}

// ErrNoBlocks: the report carries no per-block statistics (the study did
// not ask for blocks, or its reference run did not complete): engine's
// ErrNoBlockStats, one error for one condition.
var ErrNoBlocks = output.ErrNoBlockStats

// Analyse computes the robustness section of rep from its per-block
// statistics: PBO by CSCV (Bailey et al. 2015) over every combo, the
// deflated Sharpe ratio of the selected combo (Bailey and López de Prado
// 2014) with the grid's distinct combos as trials, the plateau best beside
// the raw best, and the walk-forward when opt.WF asks. Errors: ErrNoBlocks,
// the statistics' own (InputError), ctx's.
func Analyse(ctx context.Context, rep *engine.Report, opt Options) (*Robustness, error) {
	if rep == nil || rep.Blocks == nil {
		return nil, ErrNoBlocks
	}
	bs := FromSweep(rep.Blocks)
	if err := bs.Validate(); err != nil {
		return nil, err
	}
	obj := opt.Objective
	if obj.BarsPerYear == 0 {
		m := obj.Metric
		obj = DefaultObjective(rep.Params.BarsPerYear)
		obj.Metric = m
	}
	r := &Robustness{Grid: rep.Grid, Precision: rep.BlocksOf, Blocks: bs.Blocks, Objective: obj,
		Trials: rep.Grid.Distinct().Len()}
	r.blockBars = math.MaxInt
	for b := 0; b < bs.Blocks; b++ {
		r.blockBars = min(r.blockBars, int(bs.Bars[b]))
	}
	values, err := ObjectiveValues(bs, obj, AllBlocks(bs.Blocks))
	if err != nil {
		return nil, err
	}
	sel, err := selectable(rep, bs, opt)
	if err != nil {
		return nil, err
	}
	r.Selectable, r.MinTrades, r.MaxDrawdown = bs.Combos, opt.MinTrades, opt.MaxDrawdown
	if sel != nil {
		r.Selectable = 0
		for _, ok := range sel {
			if ok {
				r.Selectable++
			}
		}
		if r.Selectable == 0 {
			// Nothing to choose: the section says so (no PBO, DSR, plateau
			// or walk-forward), rather than vanish.
			r.PBONote = "no combo meets the constraints: nothing to choose"
			return r, nil
		}
	}
	k := opt.Neighbourhood
	if k <= 0 {
		k = DefaultNeighbourhood
	}
	// PBO's and the walk-forward's trials are the distinct combos: an HMA3
	// twin is the same backtest, and counted twice it would tie with itself
	// in every rank (and double the work).
	rows := DistinctCombos(rep.Grid)
	dbs, dsel := bs, sel
	if len(rows) < bs.Combos {
		dbs = bs.Subset(rows)
		if sel != nil {
			dsel = make([]bool, len(rows))
			for i, c := range rows {
				dsel[i] = sel[c]
			}
		}
	}
	if err := dbs.Validate(); err != nil { // before the parts read it
		return nil, err
	}
	// Three independent parts, side by side (each writes its own fields of
	// r): the plateau and DSR, PBO (on the device when there is one), the
	// walk-forward and its stitched equity curve (a few combos traced on
	// the CPU). Errors are reported in that order.
	var wg sync.WaitGroup
	errs := make([]error, 3)
	part := func(i int, f func() error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = f()
		}()
	}
	part(0, func() (err error) {
		if r.Plateau, err = Plateau(values, rep.Grid, k, obj.Minimise, sel); err != nil {
			return err
		}
		r.Selected = r.Plateau.RawBest
		r.DSR, err = DeflatedSharpe(bs, r.Selected, r.Trials, rep.Params.BarsPerYear)
		return err
	})
	part(1, func() (err error) {
		switch {
		case bs.Blocks%2 != 0 || bs.Blocks < 2:
			r.PBONote = fmt.Sprintf("PBO needs an even number of blocks (%d given)", bs.Blocks)
		case bs.Blocks > MaxPBOBlocks:
			r.PBONote = fmt.Sprintf("PBO takes at most %d blocks (%d given: C(S, S/2) splits)", MaxPBOBlocks, bs.Blocks)
		default:
			if r.PBO, err = PBO(ctx, dbs, PBOOptions{Objective: obj, Device: opt.Device, Selectable: dsel}); err != nil {
				return err
			}
			if len(rows) < bs.Combos {
				for i, c := range r.PBO.Selected {
					r.PBO.Selected[i] = rows[c]
				}
			}
		}
		return nil
	})
	if opt.WF != nil {
		part(2, func() (err error) {
			if r.WF, err = WalkForward(dbs, *opt.WF, obj, dsel); err != nil {
				return err
			}
			if len(rows) < bs.Combos {
				for i := range r.WF.Folds {
					r.WF.Folds[i].Combo = rows[r.WF.Folds[i].Combo]
				}
			}
			if b := opt.Bars; b != nil && len(rep.Blocks.Bounds) > 0 && rep.Blocks.Bounds[len(rep.Blocks.Bounds)-1] < b.Len() {
				// Block k holds the returns of bars Bounds[k]+1 ..
				// Bounds[k+1]: from close[Bounds[k]] to close[Bounds[k+1]].
				for i := range r.WF.Folds {
					f := &r.WF.Folds[i]
					lo, hi := rep.Blocks.Bounds[f.OOSBlock], rep.Blocks.Bounds[f.OOSBlock+1]
					window := b.Slice(lo, hi+1)
					f.OOSBuyHold = engine.BuyHoldReturn(&window)
				}
			}
			if opt.Bars != nil {
				// The chosen combos' continuous runs, as the run the
				// statistics came from computed them.
				eq, err := StitchedEquity(ctx, opt.Bars, rep.Params, rep.BlocksOf, rep.WMA, rep.Grid, rep.Blocks.Bounds, r.WF.Folds)
				switch {
				case err == nil:
					r.WF.Equity = eq
				case ctx.Err() != nil:
					return err
				default:
					r.WF.EquityNote = "no stitched equity curve: " + err.Error()
				}
			}
			return nil
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return r, nil
}

// AnalyseStudy is Analyse of study s's report rep as the run path runs it
// (sessions.RunStudy and AnalyseReport: one way under `run`, the
// workbench and a merge): the options of s's Spec (OptionsFor), the
// stitched equity curve from s's bars, and PBO on the backend that
// computed the block statistics when it is an engine.PBODevice (unless
// engine.ParityEnv is "cpu", which keeps it on the CPU to compare).
// rep may be the early report of engine.StudyOptions.AfterBlocks. Errors:
// OptionsFor's, then Analyse's.
func AnalyseStudy(ctx context.Context, s *engine.Study, rep *engine.Report) (*Robustness, error) {
	opt, err := OptionsFor(s.Spec)
	if err != nil {
		return nil, err
	}
	opt.Bars = &s.Dataset.Bars
	if dev, ok := s.Backend.(engine.PBODevice); ok && rep.Blocks != nil && os.Getenv(engine.ParityEnv) != "cpu" {
		if run := rep.Run(rep.BlocksOf); run != nil && run.Backend == s.Backend.Name() {
			opt.Device = dev
		}
	}
	return Analyse(ctx, rep, opt)
}

// DistinctCombos lists, in grid order, one combo of each set of HMA3
// twins of g (L and L+1 share p = floor(L/2): the same backtest,
// engine.Grid.Distinct): the first of each; every combo when g has none,
// as a strategy family's grid never has.
func DistinctCombos(g engine.Grid) []int {
	if g.Strategy != nil {
		rows := make([]int, g.Len())
		for i := range rows {
			rows[i] = i
		}
		return rows
	}
	n3 := g.HMA3.Len()
	keep := make([]bool, n3)
	for j := range keep {
		keep[j] = j == 0 || g.HMA3.At(j-1)/2 != g.HMA3.At(j)/2
	}
	rows := make([]int, 0, g.Distinct().Len())
	for i := 0; i < g.Len(); i++ {
		if keep[i%n3] {
			rows = append(rows, i)
		}
	}
	return rows
}

// selectable is the constraints' mask over rep's grid (nil: no
// constraint): trades from the block statistics, max drawdown from the
// run the statistics came from.
func selectable(rep *engine.Report, bs *BlockStats, opt Options) ([]bool, error) {
	if opt.MinTrades <= 0 && opt.MaxDrawdown <= 0 {
		return nil, nil
	}
	run := rep.Run(rep.BlocksOf)
	sel := make([]bool, bs.Combos)
	for c := range sel {
		ok := opt.MinTrades <= 0 || bs.Whole(c).Trades >= int64(opt.MinTrades)
		if ok && opt.MaxDrawdown > 0 {
			dd, have := run.MaxDrawdownOf(c)
			if !have {
				return nil, fmt.Errorf("combo %d: no max drawdown in the %s run for the --max-drawdown constraint", c, rep.BlocksOf)
			}
			ok = dd <= opt.MaxDrawdown
		}
		sel[c] = ok
	}
	return sel, nil
}

// PBOVerdict reads a PBO in words: below 0.1 the in-sample best is rarely
// overfit, below 0.5 sometimes, from 0.5 it is more likely than not to rank
// in the worse half out of sample.
func PBOVerdict(pbo float64) string {
	switch {
	case math.IsNaN(pbo):
		return "undefined"
	case pbo < 0.1:
		return "low: the in-sample best stays in the better half out of sample"
	case pbo < 0.5:
		return "moderate: the in-sample best often falls to the worse half out of sample"
	default:
		return "high: the selection is more likely overfit than not; do not trust the best combo's figures"
	}
}

// Summary is what a Robustness section shows, as plain data: what run's
// table prints, the JSON report carries under "robustness" and a session
// keeps (the per-split and per-combo arrays are left out). Shares and
// probabilities are fractions; Sharpe ratios per bar and annualised (by the
// study's bars per year) as named; returns fractions.
type Summary struct {
	Precision   string  `json:"precision"` // the run the block statistics come from
	Blocks      int     `json:"blocks"`
	Objective   string  `json:"objective"` // e.g. "max sharpe"
	Metric      string  `json:"metric"`    // the objective's metric, e.g. "sharpe"
	Trials      int     `json:"trials"`    // the grid's distinct combos
	Combos      int     `json:"combos"`    // the grid's combos
	Selectable  int     `json:"selectable"`
	MinTrades   int     `json:"min_trades,omitempty"`
	MaxDrawdown float64 `json:"max_drawdown,omitempty"` // a fraction; 0 = no bound

	PBO         *float64 `json:"pbo"` // null when not computed (PBONote says why)
	PBONote     string   `json:"pbo_note,omitempty"`
	PBOVerdict  string   `json:"pbo_verdict,omitempty"`
	Splits      int      `json:"splits,omitempty"`
	Slope       *float64 `json:"degradation_slope,omitempty"`
	Intercept   *float64 `json:"degradation_intercept,omitempty"` // OOS = Intercept + Slope*IS, the objective's units
	R2          *float64 `json:"degradation_r2,omitempty"`
	ProbOOSLoss *float64 `json:"prob_oos_loss,omitempty"`
	// LogitHistogram is the splits' logits in HistogramBins equal bins
	// over [-ln N, ln N] (PBOResult.LogitHistogram): PBO is the share of
	// the splits at or below 0.
	LogitHistogram *Histogram `json:"logit_histogram,omitempty"`
	// ISOOS is the chosen combo's objective in sample and out of sample
	// for at most MaxScatterPoints splits (every Every-th split in CSCV
	// order, those whose two values are finite): what the degradation line
	// was fitted to, for a scatter. Absent in summaries saved before it.
	ISOOS *Scatter `json:"is_oos,omitempty"`

	Selected Combo `json:"selected"` // the best selectable combo over the whole sample
	// BlockBars is the shortest block's bar count: annualised figures
	// (CAGR, the walk-forward's efficiency) from a few hundred bars are noise.
	BlockBars int  `json:"block_bars"`
	DSR       *DSR `json:"dsr,omitempty"`

	PlateauBest Combo `json:"plateau_best"`
	PlateauK    int   `json:"plateau_k"`
	// PlateauAxes is a strategy family's grid's axes, over each of which
	// the plateau's window spans PlateauK combos (PlateauResult.Score);
	// 0 for hull's HMA x HMA3 (two).
	PlateauAxes  int        `json:"plateau_axes,omitempty"`
	PlateauValue float64    `json:"plateau_best_value"`
	PlateauScore float64    `json:"plateau_best_score"`
	RawBestValue float64    `json:"raw_best_value"`
	RawBestScore float64    `json:"raw_best_score"`
	WF           *WFSummary `json:"walk_forward,omitempty"`
}

// HistogramBins is the bins of a Summary's logit histogram.
const HistogramBins = 20

// MaxScatterPoints is the most splits a Summary's ISOOS carries: a scatter
// of 12,870 splits (16 blocks) reads no better than of 1,000, and the
// saved summary stays a few tens of kB.
const MaxScatterPoints = 1000

// Scatter is a sample of the splits' (in-sample, out-of-sample) objective
// values: IS[i] and OOS[i] are split Every*i's (CSCV order), skipping the
// splits where either is not finite.
type Scatter struct {
	Every int       `json:"every"`
	IS    []float64 `json:"is"`
	OOS   []float64 `json:"oos"`
}

// scatterOf samples p's splits for Summary.ISOOS.
func scatterOf(p *PBOResult) *Scatter {
	n := min(len(p.IS), len(p.OOS))
	if n == 0 {
		return nil
	}
	sc := &Scatter{Every: (n + MaxScatterPoints - 1) / MaxScatterPoints}
	for i := 0; i < n; i += sc.Every {
		if finite(p.IS[i]) != nil && finite(p.OOS[i]) != nil {
			sc.IS = append(sc.IS, p.IS[i])
			sc.OOS = append(sc.OOS, p.OOS[i])
		}
	}
	return sc
}

// Histogram is a histogram: len(Counts) bins, bin i holding the values in
// [Edges[i], Edges[i+1]).
type Histogram struct {
	Edges  []float64 `json:"edges"`
	Counts []int     `json:"counts"`
}

// Combo names a combo of the grid by index and lengths: hull's HMA and
// HMA3 lengths, or for a strategy family's grid (engine.Grid.Strategy)
// its parameters as Label ("length 20, entry 2, exit 0.5",
// engine.Grid.Label), HMA and HMA3 then 0 and left out of its JSON
// ({"index", "label"}; a hull combo's JSON is {"index", "hma", "hma3"}, as
// it always was).
type Combo struct {
	Index int    `json:"index"`
	HMA   int    `json:"hma"`
	HMA3  int    `json:"hma3"`
	Label string `json:"label,omitempty"`
}

// Name is the combo as the tables name it: "hma 20, hma3 30", or a
// strategy combo's Label.
func (c Combo) Name() string {
	if c.Label != "" {
		return c.Label
	}
	return fmt.Sprintf("hma %d, hma3 %d", c.HMA, c.HMA3)
}

// Short is the combo in a table's narrow column: "20 x 30", or a strategy
// combo's Label.
func (c Combo) Short() string {
	if c.Label != "" {
		return c.Label
	}
	return fmt.Sprintf("%d x %d", c.HMA, c.HMA3)
}

// MarshalJSON leaves a strategy combo's HMA and HMA3 (0, not lengths) out.
func (c Combo) MarshalJSON() ([]byte, error) {
	if c.Label == "" {
		type plain Combo
		return json.Marshal(plain(c))
	}
	return json.Marshal(struct {
		Index int    `json:"index"`
		Label string `json:"label"`
	}{c.Index, c.Label})
}

// comboOf is combo i of g as a Summary names it.
func comboOf(g engine.Grid, i int) Combo {
	if g.Strategy != nil {
		return Combo{Index: i, Label: g.Label(i)}
	}
	c := g.At(i)
	return Combo{Index: i, HMA: c.HMA, HMA3: c.HMA3}
}

// WFSummary is the walk-forward's part of a Summary.
type WFSummary struct {
	Spec        string   `json:"spec"`
	TotalReturn float64  `json:"stitched_total_return"`
	Sharpe      float64  `json:"stitched_sharpe"`
	Efficiency  *float64 `json:"efficiency"` // null when the in-sample CAGR is not positive
	Folds       []WFFold `json:"folds"`
	// Equity is the stitched out-of-sample equity curve (StitchedEquity:
	// each fold's chosen combo over its out-of-sample block, from its
	// continuous run), at most MaxEquityPoints of it (Downsample; its last
	// point is 1 + TotalReturn); absent when it was not computed, and
	// EquityNote then says why when there was a reason.
	Equity     []EquityPoint `json:"stitched_equity,omitempty"`
	EquityNote string        `json:"stitched_equity_note,omitempty"`
}

// WFFold is one fold of a WFSummary.
type WFFold struct {
	OOSBlock     int     `json:"oos_block"`
	Combo        Combo   `json:"combo"`
	ISObjective  float64 `json:"is_objective"`
	OOSObjective float64 `json:"oos_objective"`
	OOSReturn    float64 `json:"oos_return"`
	// OOSBuyHold is the out-of-sample block's buy-and-hold return
	// (Fold.OOSBuyHold); absent when the study's bars were not at hand.
	OOSBuyHold *float64 `json:"oos_buy_hold_return,omitempty"`
}

// finite is a pointer to v, or nil when v is not a finite number (JSON has
// no NaN).
func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// Summary is r as a Summary.
func (r *Robustness) Summary() *Summary {
	combo := func(i int) Combo { return comboOf(r.Grid, i) }
	sm := &Summary{Precision: r.Precision.String(), Blocks: r.Blocks, Objective: r.Objective.String(), Metric: r.Objective.Metric.String(),
		Trials: r.Trials, Combos: r.Grid.Len(), Selectable: r.Selectable, MinTrades: r.MinTrades, MaxDrawdown: r.MaxDrawdown,
		PBONote: r.PBONote, BlockBars: r.blockBars}
	if r.DSR != nil {
		sm.Selected = combo(r.Selected)
	}
	if d := r.DSR; d != nil {
		dd := *d
		sm.DSR = &dd
	}
	if p := r.PBO; p != nil {
		sm.PBO, sm.PBOVerdict, sm.Splits = finite(p.PBO), PBOVerdict(p.PBO), p.Splits()
		sm.Slope, sm.R2, sm.ProbOOSLoss = finite(p.Slope), finite(p.R2), finite(p.ProbOOSLoss)
		sm.Intercept, sm.ISOOS = finite(p.Intercept), scatterOf(p)
		edges, counts := p.LogitHistogram(HistogramBins)
		h := &Histogram{Edges: edges, Counts: make([]int, len(counts))}
		for i, c := range counts {
			h.Counts[i] = int(c)
		}
		sm.LogitHistogram = h
	}
	if p := r.Plateau; p != nil {
		sm.PlateauBest, sm.PlateauK = combo(p.Best), p.K
		if r.Grid.Strategy != nil {
			sm.PlateauAxes = len(r.Grid.Strategy.Axes())
		}
		sm.PlateauValue, sm.PlateauScore, sm.RawBestValue, sm.RawBestScore = p.BestValue, p.BestScore, p.RawBestValue, p.RawBestScore
	}
	if wf := r.WF; wf != nil {
		ws := &WFSummary{Spec: wf.Spec.String(), TotalReturn: wf.TotalReturn, Sharpe: wf.Sharpe, Efficiency: finite(wf.Efficiency),
			Equity: Downsample(wf.Equity, MaxEquityPoints), EquityNote: wf.EquityNote}
		for _, f := range wf.Folds {
			ws.Folds = append(ws.Folds, WFFold{OOSBlock: f.OOSBlock, Combo: combo(f.Combo), ISObjective: f.ISObjective,
				OOSObjective: f.OOSObjective, OOSReturn: f.OOSReturn, OOSBuyHold: finite(f.OOSBuyHold)})
		}
		sm.WF = ws
	}
	return sm
}

// WriteTable writes the Robustness section of `run`'s table.
func (r *Robustness) WriteTable(w io.Writer) error { return r.Summary().WriteTable(w) }

// Constraints says the study's constraints in words ("at least 100
// trades, max drawdown at most 25%"), "" when it has none.
func (sm *Summary) Constraints() string {
	var cs []string
	if sm.MinTrades > 0 {
		cs = append(cs, engine.MinTradesText(sm.MinTrades))
	}
	if sm.MaxDrawdown > 0 {
		cs = append(cs, fmt.Sprintf("max drawdown at most %s%%", text.FormatFloat(100*sm.MaxDrawdown)))
	}
	return strings.Join(cs, ", ")
}

// Window names the plateau's window: "3x3" for hull's HMA x HMA3, "3x3x3"
// for a strategy grid of three axes (PlateauAxes).
func (sm *Summary) Window() string {
	n := sm.PlateauAxes
	if n <= 0 {
		n = 2
	}
	k := strconv.Itoa(sm.PlateauK)
	return strings.Repeat(k+"x", n-1) + k
}

// WriteTable writes the Robustness section of a table (run's, show's).
func (sm *Summary) WriteTable(w io.Writer) error {
	var b strings.Builder
	name := Combo.Name
	fmt.Fprintf(&b, "\nRobustness (%s run, %d blocks of bar returns, objective %s, %s trials)\n",
		sm.Precision, sm.Blocks, sm.Objective, text.Thousands(sm.Trials))
	if c := sm.Constraints(); c != "" {
		fmt.Fprintf(&b, "  constraints   %s: %s of %s combos selectable (the others still count as trials); judged on the whole sample,\n",
			c, text.Thousands(sm.Selectable), text.Thousands(sm.Combos))
		fmt.Fprintf(&b, "                so PBO's and the walk-forward's in-sample choices among them see the out-of-sample blocks too\n")
	}
	num := func(p *float64) float64 {
		if p == nil {
			return math.NaN()
		}
		return *p
	}
	if sm.PBO != nil {
		fmt.Fprintf(&b, "  PBO           %.3f over %s splits (below 0.1 low, from 0.5 high): %s\n", *sm.PBO, text.Thousands(sm.Splits), sm.PBOVerdict)
		slope := ""
		if v := num(sm.Slope); v < 0 {
			slope = " (negative: the better in sample, the worse out of sample)"
		}
		fmt.Fprintf(&b, "                out of sample vs in sample: slope %.3g%s, R^2 %.3g; the in-sample best lost money out of sample in %.0f%% of the splits\n",
			num(sm.Slope), slope, num(sm.R2), 100*num(sm.ProbOOSLoss))
		if num(sm.ProbOOSLoss) >= 0.5 && *sm.PBO < 0.5 {
			fmt.Fprintf(&b, "                (PBO ranks the combos against each other: a low PBO beside out-of-sample losses says the ranking holds, not that the best makes money)\n")
		}
	} else {
		fmt.Fprintf(&b, "  PBO           not computed: %s\n", sm.PBONote)
	}
	if d := sm.DSR; d != nil {
		fmt.Fprintf(&b, "  DSR           %.3f for the selected combo (%s, Sharpe %.4g annualised, %.3g per bar): the probability that its true Sharpe\n",
			d.DSR, name(sm.Selected), d.SharpeAnnual, d.SharpePerBar)
		fmt.Fprintf(&b, "                exceeds %.4g annualised (%.3g per bar), the Sharpe the best of %s skill-less trials as spread out as these would reach by luck, given the sample\n",
			d.SR0Annual, d.SR0, text.Thousands(d.Trials))
		fmt.Fprintf(&b, "                length and the returns' skew (%.2f) and kurtosis (%.2f); below 0.95 it is not significant. PSR %.3f (above 0, ignoring the search)\n",
			d.Skew, d.Kurtosis, d.PSR)
	}
	if sm.PlateauK > 0 {
		fmt.Fprintf(&b, "  plateau       best %s: %s %.4g, mean of its %s neighbourhood %.4g; raw best %s: %.4g, neighbourhood %.4g\n",
			name(sm.PlateauBest), sm.Metric, sm.PlateauValue, sm.Window(), sm.PlateauScore, name(sm.Selected), sm.RawBestValue, sm.RawBestScore)
	}
	if wf := sm.WF; wf != nil {
		eff := "undefined (the in-sample CAGR is not positive)"
		if wf.Efficiency != nil {
			eff = fmt.Sprintf("%.3g (out-of-sample CAGR / in-sample CAGR)", *wf.Efficiency)
		}
		fmt.Fprintf(&b, "  walk-forward  %s, %d folds: stitched out-of-sample return %s%%, Sharpe %.3g; efficiency %s\n",
			wf.Spec, len(wf.Folds), text.FormatFloat(math.Round(1e4*wf.TotalReturn)/100), wf.Sharpe, eff)
		// The chosen column: 17 characters ("355 x 312"), or as wide as
		// the longest strategy combo's label.
		width := 17
		for _, f := range wf.Folds {
			width = max(width, len(f.Combo.Short()))
		}
		hold := slices.ContainsFunc(wf.Folds, func(f WFFold) bool { return f.OOSBuyHold != nil })
		holdHead := ""
		if hold {
			holdHead = "  buy & hold %"
		}
		fmt.Fprintf(&b, "      fold  out-of-sample block (0-%d)  %-*s  IS %-8s  OOS %-8s  OOS return %%%s\n", sm.Blocks-1, width, "chosen", sm.Metric, sm.Metric, holdHead)
		// One precision per column: 4 significant digits of the column's
		// largest value.
		big := 0.0
		for _, f := range wf.Folds {
			for _, v := range []float64{f.ISObjective, f.OOSObjective} {
				if !math.IsInf(v, 0) && !math.IsNaN(v) {
					big = max(big, math.Abs(v))
				}
			}
		}
		dec := 3
		if big > 0 {
			dec = min(max(3-int(math.Floor(math.Log10(big))), 0), 6)
		}
		for i, f := range wf.Folds {
			fmt.Fprintf(&b, "      %4d  %24d  %-*s  %11.*f  %12.*f  %12.4f", i+1, f.OOSBlock, width, f.Combo.Short(),
				dec, f.ISObjective, dec, f.OOSObjective, 100*f.OOSReturn)
			switch {
			case f.OOSBuyHold != nil:
				fmt.Fprintf(&b, "  %12.4f", 100**f.OOSBuyHold)
			case hold:
				fmt.Fprintf(&b, "  %12s", engine.NotComputedText)
			}
			b.WriteString("\n")
		}
	}
	if sm.BlockBars > 0 && sm.BlockBars < 1000 {
		fmt.Fprintf(&b, "  note          blocks of %d bars: annualised figures over a block or a few (CAGR, the walk-forward's efficiency) are noise; use fewer blocks or more bars\n", sm.BlockBars)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Brief is the summary in a line or two, for a narrow pane: PBO and its
// verdict, the DSR of the selected combo, the plateau best.
func (sm *Summary) Brief() string {
	s := fmt.Sprintf("robustness (%d blocks, %s): ", sm.Blocks, sm.Objective)
	if sm.PBO != nil {
		v := sm.PBOVerdict
		if i := strings.Index(v, ":"); i > 0 {
			v = v[:i]
		}
		s += fmt.Sprintf("PBO %.3f (%s) over %s splits", *sm.PBO, v, text.Thousands(sm.Splits))
	} else {
		s += "no PBO: " + sm.PBONote
	}
	if d := sm.DSR; d != nil {
		s += fmt.Sprintf("; DSR %.3f for %s (Sharpe %.3g vs %.3g expected of %s skill-less trials)", d.DSR, sm.Selected.Short(),
			d.SharpeAnnual, d.SR0Annual, text.Thousands(d.Trials))
	}
	if sm.PlateauK > 0 {
		s += fmt.Sprintf("; plateau best %s", sm.PlateauBest.Short())
	}
	return s
}
