package engine

import (
	"encoding/json"
	"io"
	"time"
)

// The JSON shape of a report (`sweepbench run --format json`, sessions
// export). Field names are SPEC's; non-finite numbers are the strings
// "inf", "-inf", "nan". Times are RFC 3339 UTC, durations seconds.

type jsonDataset struct {
	Name           string    `json:"name"`
	Path           string    `json:"path,omitempty"`
	Layout         string    `json:"layout"`
	SHA256         string    `json:"sha256"`
	Bars           int       `json:"bars"`
	SourceBars     int       `json:"source_bars"`
	First          time.Time `json:"first"`
	Last           time.Time `json:"last"`
	Timeframe      string    `json:"timeframe,omitempty"`
	MedianSpacingS float64   `json:"median_spacing_s"`
	Gaps           int       `json:"gaps"`
	LargestGapS    float64   `json:"largest_gap_s"`
	DroppedNaN     int       `json:"dropped_nan_rows"`
	MinPrice       JSONFloat `json:"min_price"`
	MaxPrice       JSONFloat `json:"max_price"`
	Files          int       `json:"files,omitempty"`       // files read (a folder or glob: more than 1)
	PriceScale     JSONFloat `json:"price_scale,omitempty"` // the file's prices were divided by it (10000: LEAN equity)
	Times          string    `json:"times,omitempty"`       // unix, offset, local or mixed
	TimeZone       string    `json:"time_zone,omitempty"`   // the zone local times were read in
	Convention     string    `json:"convention,omitempty"`  // e.g. "LEAN equity/usa (from the path)"
}

type jsonParams struct {
	HMA             string    `json:"hma"`
	HMA3            string    `json:"hma3"`
	Combos          int       `json:"combos"`
	Fee             JSONFloat `json:"fee"`
	Mode            string    `json:"mode"`
	Source          string    `json:"source"`
	BarsPerYear     JSONFloat `json:"bars_per_year"`
	BarsPerYearRule string    `json:"bars_per_year_rule"` // how it was chosen: observed, 24/7 from the spacing, or as given
	Backend         string    `json:"backend"`
	WMA             string    `json:"wma"`
	Note            string    `json:"note,omitempty"`
}

type jsonCombo struct {
	HMA         int       `json:"hma"`
	HMA3        int       `json:"hma3"`
	TotalReturn JSONFloat `json:"total_return"`
	CAGR        JSONFloat `json:"cagr"`
	Sharpe      JSONFloat `json:"sharpe"`
	Sortino     JSONFloat `json:"sortino"`
	MaxDrawdown JSONFloat `json:"max_drawdown"`
	Calmar      JSONFloat `json:"calmar"`
	WinRate     JSONFloat `json:"win_rate"`
	TotalTrades int       `json:"total_trades"`
	VaR95       JSONFloat `json:"var_95"`
	CVaR95      JSONFloat `json:"cvar_95"`
	Omega       JSONFloat `json:"omega"`
	LongBars    int       `json:"long_bars"`
	ShortBars   int       `json:"short_bars"`
	FlatBars    int       `json:"flat_bars"`
}

func toJSONCombo(r *ComboResult) jsonCombo {
	m := &r.Metrics
	return jsonCombo{r.HMA, r.HMA3, JSONFloat(m.TotalReturn), JSONFloat(m.CAGR), JSONFloat(m.Sharpe),
		JSONFloat(m.Sortino), JSONFloat(m.MaxDrawdown), JSONFloat(m.Calmar), JSONFloat(m.WinRate),
		m.TotalTrades, JSONFloat(m.VaR95), JSONFloat(m.CVaR95), JSONFloat(m.Omega),
		m.LongBars, m.ShortBars, m.FlatBars}
}

func (c *jsonCombo) toResult(g Grid) ComboResult {
	r := ComboResult{Combo: Combo{HMA: c.HMA, HMA3: c.HMA3}}
	if g.HMA.Step > 0 && g.HMA3.Step > 0 {
		r.Index = g.Index((c.HMA-g.HMA.Start)/g.HMA.Step, (c.HMA3-g.HMA3.Start)/g.HMA3.Step)
	}
	r.Metrics = Metrics{float64(c.TotalReturn), float64(c.CAGR), float64(c.Sharpe), float64(c.Sortino),
		float64(c.MaxDrawdown), float64(c.Calmar), float64(c.WinRate), c.TotalTrades, float64(c.VaR95),
		float64(c.CVaR95), float64(c.Omega), c.LongBars, c.ShortBars, c.FlatBars}
	return r
}

type jsonRun struct {
	Backend    string      `json:"backend"`
	Device     string      `json:"device"`
	Precision  string      `json:"precision"`
	WMA        string      `json:"wma"`
	Status     string      `json:"status"`
	Error      string      `json:"error,omitempty"`
	ElapsedS   JSONFloat   `json:"elapsed_s"`
	PrepareS   JSONFloat   `json:"prepare_s"`
	CombosPerS JSONFloat   `json:"combos_per_s"`
	CombosDone int         `json:"combos_done"`
	Combos     []jsonCombo `json:"combos"`
}

type jsonComboParity struct {
	HMA           int       `json:"hma"`
	HMA3          int       `json:"hma3"`
	Trades64      int       `json:"trades_fp64"`
	Trades32      int       `json:"trades_fp32"`
	Dn            int       `json:"dn"`
	RelDn         JSONFloat `json:"rel_dn"`
	DPnLpp        JSONFloat `json:"dpnl_pp"`
	RelDPnL       JSONFloat `json:"rel_dpnl"`
	Flips         int       `json:"flips"`
	NonBorderline int       `json:"non_borderline_flips"`
	MaxFlipMargin JSONFloat `json:"max_flip_margin"`
}

type jsonFlip struct {
	HMA        int       `json:"hma"`
	HMA3       int       `json:"hma3"`
	Bar        int       `json:"bar"`
	Time       time.Time `json:"time"`
	Pos64      int8      `json:"pos_fp64"`
	Pos32      int8      `json:"pos_fp32"`
	Margin     JSONFloat `json:"margin"`
	Borderline bool      `json:"borderline"`
}

type jsonSeriesError struct {
	Series string    `json:"series"`
	Length int       `json:"length"`
	MaxRel JSONFloat `json:"max_rel_error"`
	Bar    int       `json:"bar"`
}

type jsonParity struct {
	Compared             string            `json:"compared"`
	Verdict              string            `json:"verdict"`
	Reasons              []string          `json:"reasons"`
	Explanation          string            `json:"explanation,omitempty"`
	Incomplete           bool              `json:"incomplete"`
	CombosCompared       int               `json:"combos_compared"`
	ShiftedTrades        int               `json:"shifted_trades"`
	ShiftedShare         JSONFloat         `json:"shifted_share"`
	TotalTrades64        int               `json:"total_trades_fp64"`
	TotalTrades32        int               `json:"total_trades_fp32"`
	MaxAbsDn             int               `json:"max_abs_dn"`
	MaxRelDn             JSONFloat         `json:"max_rel_dn"`
	MaxAbsDPnLpp         JSONFloat         `json:"max_abs_dpnl_pp"`
	MaxRelDPnL           JSONFloat         `json:"max_rel_dpnl"`
	CombosDiffering      int               `json:"combos_differing"`
	NonBorderlineFlips   int               `json:"non_borderline_flips"`
	FlipCount            int               `json:"flip_count"`
	BorderlineTolerance  JSONFloat         `json:"borderline_tolerance"`
	MaxRelIndicatorError JSONFloat         `json:"max_rel_indicator_error"`
	IndicatorErrors      []jsonSeriesError `json:"indicator_errors"`
	Combos               []jsonComboParity `json:"combos"`
	Flips                []jsonFlip        `json:"flips"`
}

type jsonReport struct {
	Dataset jsonDataset `json:"dataset"`
	Params  jsonParams  `json:"params"`
	Created time.Time   `json:"created"`
	// Complete is false when any requested run stopped early or never
	// started (NotStarted): the combos and the parity then cover only what
	// completed.
	Complete   bool        `json:"complete"`
	NotStarted []string    `json:"not_started,omitempty"`
	Runs       []jsonRun   `json:"runs"`
	Parity     *jsonParity `json:"parity"`
}

func (r *Report) toJSON() jsonReport {
	d := r.Dataset
	out := jsonReport{
		Dataset: jsonDataset{d.Name, d.Path, d.Layout, d.SHA256, d.Bars, d.SourceBars, d.First, d.Last, d.Timeframe,
			d.MedianSpacing.Seconds(), d.Gaps, d.LargestGap.Seconds(), d.DroppedNaN, JSONFloat(d.MinPrice), JSONFloat(d.MaxPrice),
			d.Files, JSONFloat(d.PriceScale), d.Times, d.TimeZone, d.Convention},
		Params: jsonParams{r.Grid.HMA.String(), r.Grid.HMA3.String(), r.Grid.Len(), JSONFloat(r.Params.Fee),
			r.Params.Mode.String(), r.Params.Source.String(), JSONFloat(r.Params.BarsPerYear),
			BarsPerYearRule(&r.Dataset, r.Params.BarsPerYear), r.Backend, r.WMA.String(), r.Note},
		Created:  r.Created,
		Complete: r.Complete(),
		Runs:     []jsonRun{},
	}
	for _, p := range r.NotStarted() {
		out.NotStarted = append(out.NotStarted, p.String())
	}
	for _, run := range r.Runs {
		jr := jsonRun{Backend: run.Backend, Device: run.Device, Precision: run.Precision.String(), WMA: run.WMA.String(),
			Status: string(run.Status), ElapsedS: JSONFloat(run.Elapsed.Seconds()), PrepareS: JSONFloat(run.Prepare.Seconds()),
			CombosPerS: JSONFloat(run.CombosPerSecond()), CombosDone: len(run.Results), Combos: make([]jsonCombo, len(run.Results))}
		if run.Err != nil {
			jr.Error = ErrText(run.Err.Error())
		}
		for i := range run.Results {
			jr.Combos[i] = toJSONCombo(&run.Results[i])
		}
		out.Runs = append(out.Runs, jr)
	}
	if p := r.Parity; p != nil {
		jp := &jsonParity{Compared: r.ParityOf, Verdict: string(p.Verdict), Reasons: append([]string{}, p.Reasons...), Explanation: p.Explanation, Incomplete: p.Incomplete,
			CombosCompared: p.CombosCompared, ShiftedTrades: p.ShiftedTrades, ShiftedShare: JSONFloat(p.ShiftedShare),
			TotalTrades64: p.TotalTrades64, TotalTrades32: p.TotalTrades32, MaxAbsDn: p.MaxAbsDn, MaxRelDn: JSONFloat(p.MaxRelDn),
			MaxAbsDPnLpp: JSONFloat(p.MaxAbsDPnLpp), MaxRelDPnL: JSONFloat(p.MaxRelDPnL), CombosDiffering: p.CombosDiffering,
			NonBorderlineFlips: p.NonBorderlineFlips, FlipCount: p.FlipCount, BorderlineTolerance: JSONFloat(p.Tolerance),
			MaxRelIndicatorError: JSONFloat(p.MaxRelIndicatorError),
			IndicatorErrors:      make([]jsonSeriesError, len(p.IndicatorErrors)),
			Combos:               make([]jsonComboParity, len(p.Combos)), Flips: make([]jsonFlip, len(p.Flips))}
		for i, e := range p.IndicatorErrors {
			jp.IndicatorErrors[i] = jsonSeriesError{e.Series, e.Length, JSONFloat(e.MaxRel), e.Bar}
		}
		for i, c := range p.Combos {
			jp.Combos[i] = jsonComboParity{c.HMA, c.HMA3, c.Trades64, c.Trades32, c.Dn, JSONFloat(c.RelDn), JSONFloat(c.DPnLpp),
				JSONFloat(c.RelDPnL), c.Flips, c.NonBorderline, JSONFloat(c.MaxFlipMargin)}
		}
		for i, f := range p.Flips {
			jp.Flips[i] = jsonFlip{f.HMA, f.HMA3, f.Bar, time.Unix(0, f.Time).UTC(), f.Pos64, f.Pos32, JSONFloat(f.Margin), f.Borderline}
		}
		out.Parity = jp
	}
	return out
}

// WriteJSON writes the report in the documented JSON shape, indented.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r.toJSON())
}

// MarshalJSON gives the documented shape.
func (r *Report) MarshalJSON() ([]byte, error) { return json.Marshal(r.toJSON()) }

// ParseMetricsJSON decodes one combo object of the JSON shape (SPEC names,
// "inf"/"nan" strings) into a ComboResult whose Index is placed on g.
func ParseMetricsJSON(b []byte, g Grid) (ComboResult, error) {
	var c jsonCombo
	if err := json.Unmarshal(b, &c); err != nil {
		return ComboResult{}, err
	}
	return c.toResult(g), nil
}
