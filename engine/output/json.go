package output

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"time"

	"sweepbench/engine"
)

// The JSON shape of a report (`sweepbench run --format json`, sessions
// export). Field names are SPEC's; non-finite numbers are the strings
// "inf", "-inf", "nan". Times are RFC 3339 UTC, durations seconds.

type jsonDataset struct {
	Name           string           `json:"name"`
	Path           string           `json:"path,omitempty"`
	Layout         string           `json:"layout"`
	SHA256         string           `json:"sha256"`
	Bars           int              `json:"bars"`
	SourceBars     int              `json:"source_bars"`
	First          time.Time        `json:"first"`
	Last           time.Time        `json:"last"`
	Timeframe      string           `json:"timeframe,omitempty"`
	MedianSpacingS float64          `json:"median_spacing_s"`
	Gaps           int              `json:"gaps"`
	LargestGapS    float64          `json:"largest_gap_s"`
	DroppedNaN     int              `json:"dropped_nan_rows"`
	MinPrice       engine.JSONFloat `json:"min_price"`
	MaxPrice       engine.JSONFloat `json:"max_price"`
	Files          int              `json:"files,omitempty"`       // files read (a folder or glob: more than 1)
	PriceScale     engine.JSONFloat `json:"price_scale,omitempty"` // the file's prices were divided by it (10000: LEAN equity)
	Times          string           `json:"times,omitempty"`       // unix, offset, local or mixed
	TimeZone       string           `json:"time_zone,omitempty"`   // the zone local times were read in
	Convention     string           `json:"convention,omitempty"`  // e.g. "LEAN equity/usa (from the path)"
}

type jsonParams struct {
	// Strategy, Params and FastBelowSlow are a strategy study's family,
	// its parameters (name -> range text, a leg "KIND:RANGE") and the
	// crossover restriction; HMA and HMA3 a hull study's ranges (each
	// study has only its own).
	Strategy        string            `json:"strategy,omitempty"`
	HMA             string            `json:"hma,omitempty"`
	HMA3            string            `json:"hma3,omitempty"`
	Params          map[string]string `json:"params,omitempty"`
	FastBelowSlow   bool              `json:"fast_below_slow,omitempty"`
	Combos          int               `json:"combos"`
	Aliases         int               `json:"aliases,omitempty"` // HMA3 aliases, computed with their twin (Grid.Aliases)
	Fee             engine.JSONFloat  `json:"fee"`
	Mode            string            `json:"mode"`
	Source          string            `json:"source"`
	BarsPerYear     engine.JSONFloat  `json:"bars_per_year"`
	BarsPerYearRule string            `json:"bars_per_year_rule"` // how it was chosen: observed, 24/7 from the spacing, or as given
	Backend         string            `json:"backend"`
	WMA             string            `json:"wma"`
	Note            string            `json:"note,omitempty"`
	// Fill, Slippage and RiskFree are SPEC Part 2's execution options,
	// each only when not its default (fill close, slippage 0, risk-free 0).
	Fill     string           `json:"fill,omitempty"`
	Slippage engine.JSONFloat `json:"slippage,omitempty"`
	RiskFree engine.JSONFloat `json:"risk_free,omitempty"`
}

type jsonCombo struct {
	HMA  int `json:"hma"`
	HMA3 int `json:"hma3"`
	jsonMetrics
}

// jsonMetrics are a combo's metrics, after its parameters.
type jsonMetrics struct {
	TotalReturn engine.JSONFloat `json:"total_return"`
	CAGR        engine.JSONFloat `json:"cagr"`
	Sharpe      engine.JSONFloat `json:"sharpe"`
	Sortino     engine.JSONFloat `json:"sortino"`
	MaxDrawdown engine.JSONFloat `json:"max_drawdown"`
	Calmar      engine.JSONFloat `json:"calmar"`
	WinRate     engine.JSONFloat `json:"win_rate"`
	TotalTrades int              `json:"total_trades"`
	VaR95       engine.JSONFloat `json:"var_95"`
	CVaR95      engine.JSONFloat `json:"cvar_95"`
	Omega       engine.JSONFloat `json:"omega"`
	LongBars    int              `json:"long_bars"`
	ShortBars   int              `json:"short_bars"`
	FlatBars    int              `json:"flat_bars"`
	// SPEC Part 2's metrics ("nan" where not computed)
	ProfitFactor    engine.JSONFloat `json:"profit_factor"`
	Expectancy      engine.JSONFloat `json:"expectancy"`
	AvgWin          engine.JSONFloat `json:"avg_win"`
	AvgLoss         engine.JSONFloat `json:"avg_loss"`
	BestTrade       engine.JSONFloat `json:"best_trade"`
	WorstTrade      engine.JSONFloat `json:"worst_trade"`
	AvgTradeBars    engine.JSONFloat `json:"avg_trade_bars"`
	Exposure        engine.JSONFloat `json:"exposure"`
	SQN             engine.JSONFloat `json:"sqn"`
	MaxDrawdownBars engine.JSONFloat `json:"max_drawdown_bars"`
}

func toJSONCombo(r *engine.ComboResult) jsonCombo {
	return jsonCombo{r.HMA, r.HMA3, toJSONMetrics(r)}
}

func toJSONMetrics(r *engine.ComboResult) jsonMetrics {
	m := &r.Metrics
	return jsonMetrics{engine.JSONFloat(m.TotalReturn), engine.JSONFloat(m.CAGR), engine.JSONFloat(m.Sharpe),
		engine.JSONFloat(m.Sortino), engine.JSONFloat(m.MaxDrawdown), engine.JSONFloat(m.Calmar), engine.JSONFloat(m.WinRate),
		m.TotalTrades, engine.JSONFloat(m.VaR95), engine.JSONFloat(m.CVaR95), engine.JSONFloat(m.Omega),
		m.LongBars, m.ShortBars, m.FlatBars,
		engine.JSONFloat(m.ProfitFactor), engine.JSONFloat(m.Expectancy), engine.JSONFloat(m.AvgWin), engine.JSONFloat(m.AvgLoss),
		engine.JSONFloat(m.BestTrade), engine.JSONFloat(m.WorstTrade), engine.JSONFloat(m.AvgTradeBars), engine.JSONFloat(m.Exposure),
		engine.JSONFloat(m.SQN), engine.JSONFloat(m.MaxDrawdownBars)}
}

func (c *jsonCombo) toResult(g engine.Grid) engine.ComboResult {
	r := engine.ComboResult{Combo: engine.Combo{HMA: c.HMA, HMA3: c.HMA3}}
	if g.HMA.Step > 0 && g.HMA3.Step > 0 {
		r.Index = g.Index((c.HMA-g.HMA.Start)/g.HMA.Step, (c.HMA3-g.HMA3.Start)/g.HMA3.Step)
	}
	r.Metrics = engine.Metrics{TotalReturn: float64(c.TotalReturn), CAGR: float64(c.CAGR), Sharpe: float64(c.Sharpe),
		Sortino: float64(c.Sortino), MaxDrawdown: float64(c.MaxDrawdown), Calmar: float64(c.Calmar), WinRate: float64(c.WinRate),
		TotalTrades: c.TotalTrades, VaR95: float64(c.VaR95), CVaR95: float64(c.CVaR95), Omega: float64(c.Omega),
		LongBars: c.LongBars, ShortBars: c.ShortBars, FlatBars: c.FlatBars,
		ProfitFactor: float64(c.ProfitFactor), Expectancy: float64(c.Expectancy), AvgWin: float64(c.AvgWin), AvgLoss: float64(c.AvgLoss),
		BestTrade: float64(c.BestTrade), WorstTrade: float64(c.WorstTrade), AvgTradeBars: float64(c.AvgTradeBars),
		Exposure: float64(c.Exposure), SQN: float64(c.SQN), MaxDrawdownBars: float64(c.MaxDrawdownBars)}
	return r
}

// jsonRunHead is a run's fields before its combos.
type jsonRunHead struct {
	Backend    string           `json:"backend"`
	Device     string           `json:"device"`
	Precision  string           `json:"precision"`
	WMA        string           `json:"wma"`
	Status     string           `json:"status"`
	Error      string           `json:"error,omitempty"`
	ElapsedS   engine.JSONFloat `json:"elapsed_s"`
	PrepareS   engine.JSONFloat `json:"prepare_s"`
	CombosPerS engine.JSONFloat `json:"combos_per_s"`
	CombosDone int              `json:"combos_done"`
}

type jsonRun struct {
	jsonRunHead
	Combos []any `json:"combos"` // jsonCombo (hull) or paramsObject (a strategy grid)
}

func jsonRunHeadOf(run *engine.Run) jsonRunHead {
	h := jsonRunHead{Backend: run.Backend, Device: run.Device, Precision: run.Precision.String(), WMA: run.WMA.String(),
		Status: string(run.Shown()), ElapsedS: engine.JSONFloat(run.Elapsed.Seconds()), PrepareS: engine.JSONFloat(run.Prepare.Seconds()),
		CombosPerS: engine.JSONFloat(run.CombosPerSecond()), CombosDone: run.Count()}
	if run.Err != nil {
		h.Error = engine.ErrText(run.Err.Error())
	}
	return h
}

type jsonComboParity struct {
	HMA  int `json:"hma"`
	HMA3 int `json:"hma3"`
	jsonParityFigures
}

// jsonParityFigures are a combo's parity figures, after its parameters.
type jsonParityFigures struct {
	Trades64      int              `json:"trades_fp64"`
	Trades32      int              `json:"trades_fp32"`
	Dn            int              `json:"dn"`
	RelDn         engine.JSONFloat `json:"rel_dn"`
	DPnLpp        engine.JSONFloat `json:"dpnl_pp"`
	RelDPnL       engine.JSONFloat `json:"rel_dpnl"`
	Flips         int              `json:"flips"`
	NonBorderline int              `json:"non_borderline_flips"`
	MaxFlipMargin engine.JSONFloat `json:"max_flip_margin"`
}

type jsonFlip struct {
	HMA  int `json:"hma"`
	HMA3 int `json:"hma3"`
	jsonFlipFigures
}

// jsonFlipFigures are a flip's fields after its combo's parameters.
type jsonFlipFigures struct {
	Bar        int              `json:"bar"`
	Time       time.Time        `json:"time"`
	Pos64      int8             `json:"pos_fp64"`
	Pos32      int8             `json:"pos_fp32"`
	Margin     engine.JSONFloat `json:"margin"`
	Borderline bool             `json:"borderline"`
}

type jsonSeriesError struct {
	Series string           `json:"series"`
	Length int              `json:"length"`
	MaxRel engine.JSONFloat `json:"max_rel_error"`
	Bar    int              `json:"bar"`
}

// jsonParityHead is the parity report's fields before its per-combo rows
// and flips.
type jsonParityHead struct {
	Compared             string            `json:"compared"`
	Verdict              string            `json:"verdict"`
	Reasons              []string          `json:"reasons"`
	Explanation          string            `json:"explanation,omitempty"`
	Incomplete           bool              `json:"incomplete"`
	CombosCompared       int               `json:"combos_compared"`
	ShiftedTrades        int               `json:"shifted_trades"`
	ShiftedShare         engine.JSONFloat  `json:"shifted_share"`
	TotalTrades64        int               `json:"total_trades_fp64"`
	TotalTrades32        int               `json:"total_trades_fp32"`
	MaxAbsDn             int               `json:"max_abs_dn"`
	MaxRelDn             engine.JSONFloat  `json:"max_rel_dn"`
	MaxAbsDPnLpp         engine.JSONFloat  `json:"max_abs_dpnl_pp"`
	MaxRelDPnL           engine.JSONFloat  `json:"max_rel_dpnl"`
	CombosDiffering      int               `json:"combos_differing"`
	NonBorderlineFlips   int               `json:"non_borderline_flips"`
	FlipCount            int               `json:"flip_count"`
	BorderlineTolerance  engine.JSONFloat  `json:"borderline_tolerance"`
	MaxRelIndicatorError engine.JSONFloat  `json:"max_rel_indicator_error"`
	IndicatorErrors      []jsonSeriesError `json:"indicator_errors"`
}

type jsonParity struct {
	jsonParityHead
	Combos []any `json:"combos"` // jsonComboParity or paramsObject, as jsonRun's
	Flips  []any `json:"flips"`  // jsonFlip or paramsObject
}

// jsonReportHead is the report's fields before its runs.
type jsonReportHead struct {
	Dataset jsonDataset `json:"dataset"`
	Params  jsonParams  `json:"params"`
	// BuyHoldReturn is the study's bars' buy-and-hold return, a fraction
	// (engine.BuyHoldReturn; "nan" when not known: a session saved before
	// it was recorded).
	BuyHoldReturn engine.JSONFloat `json:"buy_hold_return"`
	Created       time.Time        `json:"created"`
	// Complete is false when any requested run stopped early or never
	// started (NotStarted): the combos and the parity then cover only what
	// completed.
	Complete   bool     `json:"complete"`
	NotStarted []string `json:"not_started,omitempty"`
}

type jsonReport struct {
	jsonReportHead
	Runs   []jsonRun   `json:"runs"`
	Parity *jsonParity `json:"parity"`
}

func reportHeadOf(r *engine.Report) jsonReportHead {
	d := r.Dataset
	out := jsonReportHead{
		Dataset: jsonDataset{d.Name, d.Path, d.Layout, d.SHA256, d.Bars, d.SourceBars, d.First, d.Last, d.Timeframe,
			d.MedianSpacing.Seconds(), d.Gaps, d.LargestGap.Seconds(), d.DroppedNaN, engine.JSONFloat(d.MinPrice), engine.JSONFloat(d.MaxPrice),
			d.Files, engine.JSONFloat(d.PriceScale), d.Times, d.TimeZone, d.Convention},
		Params: jsonParams{"", r.Grid.HMA.String(), r.Grid.HMA3.String(), nil, false, r.Grid.Len(), r.Grid.Aliases(), engine.JSONFloat(r.Params.Fee),
			r.Params.Mode.String(), r.Params.Source.String(), engine.JSONFloat(r.Params.BarsPerYear),
			engine.BarsPerYearRule(&r.Dataset, r.Params.BarsPerYear), r.Backend, r.WMA.String(), r.Note,
			"", engine.JSONFloat(r.Params.Slippage), engine.JSONFloat(r.Params.RiskFree)},
		BuyHoldReturn: engine.JSONFloat(r.BuyHold),
		Created:       r.Created,
		Complete:      r.Complete(),
	}
	if r.Params.Fill != engine.FillClose {
		out.Params.Fill = r.Params.Fill.String()
	}
	if s := r.Grid.Strategy; s != nil {
		out.Params.Strategy, out.Params.HMA, out.Params.HMA3 = s.Family(), "", ""
		out.Params.Params, out.Params.FastBelowSlow = s.Texts(), s.FastBelowSlow()
	}
	for _, p := range r.NotStarted() {
		out.NotStarted = append(out.NotStarted, p.String())
	}
	return out
}

// toJSON is the whole document as one value (MarshalReport); WriteJSON
// writes the same bytes element by element.
func toJSON(r *engine.Report) jsonReport {
	out := jsonReport{jsonReportHead: reportHeadOf(r), Runs: []jsonRun{}, Parity: parityOf(r)}
	f := objectFields(r.Grid)
	for _, run := range r.Runs {
		jr := jsonRun{jsonRunHead: jsonRunHeadOf(run), Combos: make([]any, len(run.Results))}
		for i := range run.Results {
			jr.Combos[i] = comboJSON(f, &run.Results[i])
		}
		out.Runs = append(out.Runs, jr)
	}
	return out
}

// parityOf is the parity report's JSON, nil without one.
func parityOf(r *engine.Report) *jsonParity {
	p := r.Parity
	if p == nil {
		return nil
	}
	f := objectFields(r.Grid)
	jp := &jsonParity{jsonParityHead: parityHeadOf(r), Combos: make([]any, len(p.Combos)), Flips: make([]any, len(p.Flips))}
	for i := range p.Combos {
		jp.Combos[i] = comboParityJSON(f, &p.Combos[i])
	}
	for i := range p.Flips {
		jp.Flips[i] = flipJSON(f, &p.Flips[i])
	}
	return jp
}

func parityHeadOf(r *engine.Report) jsonParityHead {
	p := r.Parity
	h := jsonParityHead{Compared: r.ParityOf, Verdict: string(p.Verdict), Reasons: append([]string{}, p.Reasons...), Explanation: p.Explanation, Incomplete: p.Incomplete,
		CombosCompared: p.CombosCompared, ShiftedTrades: p.ShiftedTrades, ShiftedShare: engine.JSONFloat(p.ShiftedShare),
		TotalTrades64: p.TotalTrades64, TotalTrades32: p.TotalTrades32, MaxAbsDn: p.MaxAbsDn, MaxRelDn: engine.JSONFloat(p.MaxRelDn),
		MaxAbsDPnLpp: engine.JSONFloat(p.MaxAbsDPnLpp), MaxRelDPnL: engine.JSONFloat(p.MaxRelDPnL), CombosDiffering: p.CombosDiffering,
		NonBorderlineFlips: p.NonBorderlineFlips, FlipCount: p.FlipCount, BorderlineTolerance: engine.JSONFloat(p.Tolerance),
		MaxRelIndicatorError: engine.JSONFloat(p.MaxRelIndicatorError),
		IndicatorErrors:      make([]jsonSeriesError, len(p.IndicatorErrors))}
	for i, e := range p.IndicatorErrors {
		h.IndicatorErrors[i] = jsonSeriesError{e.Series, e.Length, engine.JSONFloat(e.MaxRel), e.Bar}
	}
	return h
}

func toJSONComboParity(c *engine.ComboParity) jsonComboParity {
	return jsonComboParity{c.HMA, c.HMA3, toJSONParityFigures(c)}
}

func toJSONParityFigures(c *engine.ComboParity) jsonParityFigures {
	return jsonParityFigures{c.Trades64, c.Trades32, c.Dn, engine.JSONFloat(c.RelDn), engine.JSONFloat(c.DPnLpp),
		engine.JSONFloat(c.RelDPnL), c.Flips, c.NonBorderline, engine.JSONFloat(c.MaxFlipMargin)}
}

func toJSONFlip(f *engine.Flip) jsonFlip {
	return jsonFlip{f.HMA, f.HMA3, jsonFlipFigures{f.Bar, time.Unix(0, f.Time).UTC(), f.Pos64, f.Pos32, engine.JSONFloat(f.Margin), f.Borderline}}
}

// objectFields is the compact fields of g's combos opening their object:
// what comboJSON, comboParityJSON and flipJSON take.
func objectFields(g engine.Grid) *jsonFields { return newJSONFields(paramColsOf(g), compactJSON, true) }

// comboJSON is combo r's JSON value: jsonCombo for a hull grid; for a
// strategy grid its strategy and parameters (paramsObject), then its
// metrics. f is objectFields(grid).
func comboJSON(f *jsonFields, r *engine.ComboResult) any {
	if f.pc == nil {
		return toJSONCombo(r)
	}
	return paramsObject{f, r.Index, toJSONMetrics(r)}
}

// comboParityJSON is a parity row's JSON value, as comboJSON's.
func comboParityJSON(f *jsonFields, c *engine.ComboParity) any {
	if f.pc == nil {
		return toJSONComboParity(c)
	}
	return paramsObject{f, c.Index, toJSONParityFigures(c)}
}

// flipJSON is a flip's JSON value, as comboJSON's.
func flipJSON(f *jsonFields, fl *engine.Flip) any {
	if f.pc == nil {
		return toJSONFlip(fl)
	}
	return paramsObject{f, fl.Index, toJSONFlip(fl).jsonFlipFigures}
}

// paramsObject is a strategy grid's combo as a JSON object: "strategy"
// (the family), the combo's parameters under their SPEC names (a leg's
// NAME_kind and NAME; jsonFields, compact), then rest's fields.
type paramsObject struct {
	f     *jsonFields // objectFields(grid)
	index int
	rest  any // a struct, marshalled to an object
}

func (o paramsObject) MarshalJSON() ([]byte, error) {
	rest, err := json.Marshal(o.rest)
	if err != nil {
		return nil, err
	}
	b := o.f.appendParams(append(make([]byte, 0, 64+len(rest)), '{'), o.index, engine.Combo{})
	if len(rest) > 2 {
		b = append(append(b, ','), rest[1:]...)
	} else {
		b = append(b, '}')
	}
	return b, nil
}

// parityKeys are jsonParityFigures' fields, in order.
var parityKeys = [...]string{"trades_fp64", "trades_fp32", "dn", "rel_dn", "dpnl_pp", "rel_dpnl", "flips", "non_borderline_flips", "max_flip_margin"}

// parityFields appends a parity row's fields in one layout: its combo's
// parameters (jsonFields, opening the object), then jsonParityFigures'.
type parityFields struct {
	*jsonFields
	figures [len(parityKeys)][]byte
}

func newParityFields(pc *paramCols, l jsonLayout) *parityFields {
	f := &parityFields{jsonFields: newJSONFields(pc, l, true)}
	for k, name := range parityKeys {
		f.figures[k] = l.key(name, false)
	}
	return f
}

// appendObject appends c's object, braces included.
func (f *parityFields) appendObject(b []byte, c *engine.ComboParity) []byte {
	b = f.appendParams(append(b, '{'), c.Index, c.Combo)
	b = strconv.AppendInt(append(b, f.figures[0]...), int64(c.Trades64), 10)
	b = strconv.AppendInt(append(b, f.figures[1]...), int64(c.Trades32), 10)
	b = strconv.AppendInt(append(b, f.figures[2]...), int64(c.Dn), 10)
	b = appendJSONFloat(append(b, f.figures[3]...), c.RelDn)
	b = appendJSONFloat(append(b, f.figures[4]...), c.DPnLpp)
	b = appendJSONFloat(append(b, f.figures[5]...), c.RelDPnL)
	b = strconv.AppendInt(append(b, f.figures[6]...), int64(c.Flips), 10)
	b = strconv.AppendInt(append(b, f.figures[7]...), int64(c.NonBorderline), 10)
	b = appendJSONFloat(append(b, f.figures[8]...), c.MaxFlipMargin)
	return append(b, f.layout.end...)
}

// WriteJSON writes the report in the documented JSON shape, indented by
// two spaces, as one encoding of the whole document would (the same
// bytes), but element by element: the head, then each run's fields and
// its combos one at a time, then the parity report; no copy of the
// results is built. A run of a million combos writes in constant memory.
// The combos and the parity rows are written by hand, as JSON lines' are
// (jsonFields, indented): no reflection per row, about JSON lines' cost;
// the heads and the flips (at most engine.MaxFlipsListed) go through
// encoding/json.
func WriteJSON(w io.Writer, r *engine.Report) error {
	if err := r.Kept(); err != nil {
		return err
	}
	j := &jsonStream{w: bufio.NewWriterSize(w, 256<<10)}
	j.enc = json.NewEncoder(&j.buf)
	pc := paramColsOf(r.Grid)
	j.object(reportHeadOf(r), "") // {"dataset": ..., "complete": ..., its closing brace to come
	j.raw(",\n  \"runs\": ")
	combos := newJSONFields(pc, indentedJSON("        "), true)
	j.array(len(r.Runs), "  ", func(i int) {
		run := r.Runs[i]
		j.object(jsonRunHeadOf(run), "    ")
		j.raw(",\n      \"combos\": ")
		j.rows(len(run.Results), "      ", func(b []byte, k int) []byte {
			c := &run.Results[k]
			b = combos.appendParams(append(b, '{'), c.Index, c.Combo)
			return append(combos.appendMetrics(b, &c.Metrics), combos.layout.end...)
		})
		j.raw("\n    }")
	})
	j.raw(",\n  \"parity\": ")
	if p := r.Parity; p == nil {
		j.raw("null")
	} else {
		j.object(parityHeadOf(r), "  ")
		j.raw(",\n    \"combos\": ")
		rows := newParityFields(pc, indentedJSON("      "))
		j.rows(len(p.Combos), "    ", func(b []byte, k int) []byte { return rows.appendObject(b, &p.Combos[k]) })
		j.raw(",\n    \"flips\": ")
		f := objectFields(r.Grid) // at most MaxFlipsListed: through the Encoder
		j.array(len(p.Flips), "    ", func(k int) { j.value(flipJSON(f, &p.Flips[k]), "      ") })
		j.raw("\n  }")
	}
	if len(r.Robustness) > 0 {
		j.raw(",\n  \"robustness\": ")
		// Kept compact (sessions store it so); indented like the rest.
		j.value(r.Robustness, "  ")
	}
	j.raw("\n}\n")
	if j.err != nil {
		return j.err
	}
	return j.w.Flush()
}

// jsonStream writes a JSON document piece by piece: value encodes one
// element with an Encoder indented for its depth (prefix), raw writes the
// punctuation between elements; the first error sticks.
type jsonStream struct {
	w   *bufio.Writer
	buf bytes.Buffer
	enc *json.Encoder
	err error
	// pieces are rows' buffers, kept from one array to the next.
	pieces [][]byte
}

func (j *jsonStream) raw(s string) {
	if j.err == nil {
		_, j.err = j.w.WriteString(s)
	}
}

// bytes writes b as it is (a row object).
func (j *jsonStream) bytes(b []byte) {
	if j.err == nil {
		_, j.err = j.w.Write(b)
	}
}

// value writes v indented at prefix, without the Encoder's newline.
func (j *jsonStream) value(v any, prefix string) {
	if j.err != nil {
		return
	}
	j.buf.Reset()
	j.enc.SetIndent(prefix, "  ")
	if j.err = j.enc.Encode(v); j.err == nil {
		b := j.buf.Bytes()
		_, j.err = j.w.Write(b[:len(b)-1])
	}
}

// array writes an array of n elements at depth prefix, elem(i) writing
// element i (indented at prefix plus two spaces), as the Encoder does:
// "[]" when empty.
func (j *jsonStream) array(n int, prefix string, elem func(i int)) {
	j.raw("[")
	open := "\n" + prefix + "  "
	for i := 0; i < n && j.err == nil; i++ {
		if i > 0 {
			j.raw(",")
		}
		j.raw(open)
		elem(i)
	}
	if n > 0 {
		j.raw("\n" + prefix)
	}
	j.raw("]")
}

// rowsPerPiece is how many rows jsonStream.rows formats as one piece.
const rowsPerPiece = 512

// rows writes an array of n row objects at depth prefix as array does,
// row(b, k) appending row k's object to b (called from several goroutines:
// it must only read shared state). The rows are formatted in pieces of
// rowsPerPiece on up to GOMAXPROCS goroutines and written in order, so the
// bytes are those of one goroutine; at most two pieces per goroutine are
// held at a time.
func (j *jsonStream) rows(n int, prefix string, row func(b []byte, k int) []byte) {
	j.raw("[")
	open := "\n" + prefix + "  "
	format := func(b []byte, piece int) []byte {
		for k := piece * rowsPerPiece; k < min(n, (piece+1)*rowsPerPiece); k++ {
			if k > 0 {
				b = append(b, ',')
			}
			b = row(append(b, open...), k)
		}
		return b
	}
	pieces := (n + rowsPerPiece - 1) / rowsPerPiece
	if workers := min(runtime.GOMAXPROCS(0), pieces); workers <= 1 {
		if len(j.pieces) == 0 {
			j.pieces = append(j.pieces, nil)
		}
		for p := 0; p < pieces && j.err == nil; p++ {
			j.pieces[0] = format(j.pieces[0][:0], p)
			j.bytes(j.pieces[0])
		}
	} else {
		j.parallel(pieces, workers, format)
	}
	if n > 0 {
		j.raw("\n" + prefix)
	}
	j.raw("]")
}

// parallel writes pieces 0..pieces-1, each format(buf, piece), formatted by
// workers goroutines. A buffer is handed to a piece in order before the
// piece is, so the pieces holding one always start at the next to write
// (no wait on a later piece); a write error stops it.
func (j *jsonStream) parallel(pieces, workers int, format func(b []byte, piece int) []byte) {
	type job struct {
		piece int
		buf   []byte
	}
	free := make(chan []byte, 2*workers)
	for k := range cap(free) {
		if k < len(j.pieces) {
			free <- j.pieces[k]
		} else {
			free <- nil
		}
	}
	done := make([]chan []byte, pieces)
	for p := range done {
		done[p] = make(chan []byte, 1)
	}
	work, stop := make(chan job), make(chan struct{})
	go func() {
		defer close(work)
		for p := range pieces {
			var buf []byte
			select {
			case <-stop:
				return
			case buf = <-free:
			}
			select {
			case <-stop:
				return
			case work <- job{p, buf}:
			}
		}
	}()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for jb := range work {
				done[jb.piece] <- format(jb.buf[:0], jb.piece)
			}
		})
	}
	for p := 0; p < pieces && j.err == nil; p++ {
		b := <-done[p]
		j.bytes(b)
		free <- b
	}
	close(stop)
	wg.Wait()
	j.pieces = j.pieces[:0]
	for len(free) > 0 {
		j.pieces = append(j.pieces, <-free) // the next array's, grown already
	}
}

// object writes the struct v indented at prefix without its closing
// brace, for the fields that follow it to be written after a comma.
func (j *jsonStream) object(v any, prefix string) {
	if j.err != nil {
		return
	}
	j.buf.Reset()
	j.enc.SetIndent(prefix, "  ")
	if j.err = j.enc.Encode(v); j.err == nil {
		b := bytes.TrimSuffix(j.buf.Bytes(), []byte("\n"+prefix+"}\n"))
		_, j.err = j.w.Write(b)
	}
}

// MarshalReport is the report in the documented shape as one compact
// value, for a document that holds it (the bytes engine.Report's
// MarshalJSON gave).
func MarshalReport(r *engine.Report) ([]byte, error) { return json.Marshal(toJSON(r)) }

// ParseMetricsJSON decodes one combo object of the JSON shape (SPEC names,
// "inf"/"nan" strings) into a ComboResult whose Index is placed on g: a
// strategy grid's combo by its parameters (an error when g holds none
// with those values).
func ParseMetricsJSON(b []byte, g engine.Grid) (engine.ComboResult, error) {
	var c jsonCombo
	if err := json.Unmarshal(b, &c); err != nil {
		return engine.ComboResult{}, err
	}
	r := c.toResult(g)
	if g.Strategy != nil {
		i, err := strategyIndexJSON(b, g)
		if err != nil {
			return engine.ComboResult{}, err
		}
		r.Index, r.Combo = i, engine.Combo{}
	}
	return r, nil
}

// strategyIndexJSON is the index on g (a strategy grid) of the combo
// object b, from its parameters: each axis' value (a number, compared as
// the float64 of the axis' decimal texts) and a leg's kind.
func strategyIndexJSON(b []byte, g engine.Grid) (int, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return -1, err
	}
	axes := g.Strategy.Axes()
	coords := make([]int, len(axes))
	for k, ax := range axes {
		raw, ok := m[ax.Name]
		if !ok {
			return -1, fmt.Errorf("combo: no %q (a %s combo's parameter)", ax.Name, g.Family())
		}
		v, err := strconv.ParseFloat(string(raw), 64)
		if err != nil {
			return -1, fmt.Errorf("combo: %s %s is not a number", ax.Name, raw)
		}
		if ax.Kind != "" {
			var kind string
			if err := json.Unmarshal(m[ax.Name+"_kind"], &kind); err != nil || kind != ax.Kind {
				return -1, fmt.Errorf("combo: %s_kind %s, the grid's is %q", ax.Name, m[ax.Name+"_kind"], ax.Kind)
			}
			if ax.Kind == "price" {
				continue // one value, 0
			}
		}
		coords[k] = slices.IndexFunc(ax.Values, func(t string) bool {
			f, err := strconv.ParseFloat(t, 64)
			return err == nil && f == v
		})
		if coords[k] < 0 {
			return -1, fmt.Errorf("combo: %s %s is not on the grid's %s axis (%s)", ax.Name, raw, ax.Name, ax.Range)
		}
	}
	i := g.Strategy.IndexOf(coords)
	if i < 0 {
		return -1, fmt.Errorf("combo: its parameters are not a combo of the grid %s (--fast-below-slow drops it)", g.Text())
	}
	return i, nil
}
