package engine

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"sweepbench/engine/data"
	"sweepbench/engine/text"
)

// Field names of a Spec: its JSON keys, the CLI's flags (without "--") and
// the TUI form's keys. FieldError.Field is one of them.
const (
	FieldData        = "data"
	FieldTZ          = "tz"
	FieldTimeColumn  = "time-column"
	FieldLEANAsset   = "lean-asset"
	FieldTimeframe   = "timeframe"
	FieldHead        = "head"
	FieldFrom        = "from"
	FieldTo          = "to"
	FieldHMA         = "hma"
	FieldHMA3        = "hma3"
	FieldFee         = "fee"
	FieldMode        = "mode"
	FieldSource      = "source"
	FieldBackend     = "backend"
	FieldPrecision   = "precision"
	FieldWMA         = "wma"
	FieldBarsPerYear = "bars-per-year"
	FieldBorderline  = "borderline"
	FieldBlocks      = "blocks"
	FieldWF          = "wf"
	FieldObjective   = "objective"
	FieldMinTrades   = "min-trades"
	FieldMaxDrawdown = "max-drawdown"
	// FieldStrategy is the family (--strategy); FieldParams its parameters
	// (--param NAME=RANGE; a FieldError of package strategy names the
	// parameter itself); FieldFastBelowSlow the crossover restriction.
	FieldStrategy      = "strategy"
	FieldParams        = "param"
	FieldFastBelowSlow = "fast-below-slow"
	// FieldFill, FieldSlippage and FieldRiskFree are the execution options
	// and the risk-free rate (SPEC Part 2 "Execution options", "New
	// metrics").
	FieldFill     = "fill"
	FieldSlippage = "slippage"
	FieldRiskFree = "risk-free"
)

// FieldError is a study input that cannot be used: Field names it (one of
// the Field* constants), Value is the value as given, Err says why. The
// library's text is neutral ("hma3 \"5:10\": length 5 is below the minimum
// 6"); front ends phrase it (the CLI as --hma3, the TUI marks the field).
type FieldError struct {
	Field string
	Value string
	Err   error
}

func (e *FieldError) Error() string {
	if e.Value == "" {
		return fmt.Sprintf("%s: %v", e.Field, e.Err)
	}
	return fmt.Sprintf("%s %s: %v", e.Field, e.Shown(), e.Err)
}

// Shown is Value as messages show it: as given, or quoted when it is
// empty or holds anything but letters, digits and : . _ / + - (a space,
// a quote, a control character).
func (e *FieldError) Shown() string {
	if e.Value == "" {
		return `""`
	}
	for _, r := range e.Value {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(":._/+-", r)) {
			return strconv.Quote(e.Value)
		}
	}
	return e.Value
}

func (e *FieldError) Unwrap() error { return e.Err }

// fieldErr builds a *FieldError with a formatted reason.
func fieldErr(field, value, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Value: value, Err: fmt.Errorf(format, args...)}
}

// FieldErrors returns every *FieldError in err's tree (errors.Join of them,
// or one wrapped), in order; nil when there is none.
func FieldErrors(err error) []*FieldError {
	var out []*FieldError
	var walk func(error)
	walk = func(err error) {
		if err == nil {
			return
		}
		if fe, ok := err.(*FieldError); ok {
			out = append(out, fe)
			return
		}
		switch u := err.(type) {
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				walk(e)
			}
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		}
	}
	walk(err)
	return out
}

// Spec is every input of a study as plain data: what the CLI's flags, the
// TUI's form and a saved session hold. DefaultSpec gives the one set of
// defaults; Spec.Study validates a Spec into a Study. Zero values of
// BarsPerYear and Borderline mean "derived" and DefaultBorderline.
type Spec struct {
	// Data is the dataset: embedded:NAME or a file path (a saved session
	// holds it absolute, so resume works from another directory).
	Data       string `json:"data"`
	TZ         string `json:"tz,omitempty"`          // exchange zone of local times without offset
	TimeColumn string `json:"time_column,omitempty"` // the timestamp column of a CSV with a header
	LEANAsset  string `json:"lean_asset,omitempty"`  // LEAN security type when the path does not say it (data.LEANAssets)
	Timeframe  string `json:"timeframe,omitempty"`   // resample first: 5m .. 1d; "" = as loaded
	Head       int    `json:"head,omitempty"`        // the first N bars after resampling (and the window); 0 = all
	// From and To select the bars whose open time is in [From, To)
	// (WindowOf): a date (2023-09-01) or a date and time (2023-09-01 12:00,
	// or RFC 3339), in TZ, else the data's own zone, else UTC; a To that
	// is a date includes that whole day. "" = no bound.
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`

	HMA  string `json:"hma"`  // HMA length range start:stop:step, inclusive (hull)
	HMA3 string `json:"hma3"` // HMA3 length range (hull)
	// Strategy is the family (SPEC Part 2): "" or "hull" for HMA x HMA3
	// (HMA, HMA3), else cross, zscore, breakout or rsi with Params, each
	// parameter's range text by its SPEC name (a parameter not given takes
	// its default; hull's are HMA and HMA3). FastBelowSlow drops the
	// crossover combos whose fast length is not below the slow one. All
	// three are omitted from a hull study's JSON, so its digest is the one
	// it had before strategies existed.
	Strategy      string            `json:"strategy,omitempty"`
	Params        map[string]string `json:"params,omitempty"`
	FastBelowSlow bool              `json:"fast_below_slow,omitempty"`

	Fee float64 `json:"fee"` // per side, a fraction (SPEC "Input")
	// Fill (close or next-open; "" = close), Slippage (q, a fraction per
	// unit of position change) and RiskFree (annual, a fraction, for
	// Sharpe and Sortino) are SPEC Part 2's execution options; omitted at
	// their defaults, so a Part 1 study's JSON and digest are unchanged.
	Fill        string  `json:"fill,omitempty"`
	Slippage    float64 `json:"slippage,omitempty"`
	RiskFree    float64 `json:"risk_free,omitempty"`
	Mode        string  `json:"mode"`                    // long-short or long-only
	Source      string  `json:"source"`                  // close, hl2, hlc3, ohlc4 (the HMA's series)
	BarsPerYear float64 `json:"bars_per_year,omitempty"` // annualisation; 0 = derived from the data (DerivedBarsPerYear)

	Backend    string  `json:"backend"`    // auto, reference, cuda, metal
	Precision  string  `json:"precision"`  // fp64, fp32 or both
	WMA        string  `json:"wma"`        // the fp32 lane's formulation: direct or prefix
	Borderline float64 `json:"borderline"` // parity margin |h3-h|/close; 0 = DefaultBorderline
	// Blocks, when > 0, asks for per-block statistics over that many
	// contiguous blocks of bar returns (Study.Blocks): the input of the
	// robustness statistics (engine/robust). 0 = none. Not saved with a
	// session yet (resume computes none).
	Blocks int `json:"blocks,omitempty"`
	// WF, with Blocks, asks for a walk-forward over the blocks: rolling:K
	// (K blocks in sample, the next out) or anchored (anchored:K); "" =
	// none. Its grammar is engine/robust's (ParseWF), which checks it with
	// the blocks (robust.OptionsFor); not saved with a session (its
	// robustness summary names it).
	WF string `json:"wf,omitempty"`
	// Objective names what "best" means for the top lists (any metric of
	// MetricNames; max_drawdown lowest first) and, with Blocks, for the
	// robustness statistics; "" = sharpe. MinTrades and MaxDrawdown (a
	// fraction, 0 = no bound) are the constraints on the combos listed and
	// chosen (ParseObjective).
	Objective   string  `json:"objective,omitempty"`
	MinTrades   int     `json:"min_trades,omitempty"`
	MaxDrawdown float64 `json:"max_drawdown,omitempty"`
	// Suite, when set, says this study is one dataset of a suite (a Spec
	// run over several datasets, Suite): "ID D/N", the suite's id (the
	// first 12 hex digits of its SuiteDescription's SHA-256), this
	// dataset's place (from 1) and the datasets in it. Saved with a
	// session; "" for a study of one dataset.
	Suite string `json:"suite,omitempty"`
}

// DefaultSpec is the study `sweepbench run` makes without flags: the
// embedded FIL/USDT minute bars, HMA 20:200:20 x HMA3 30:240:30, fee
// 0.045% per side, long-short on close, fp64 and fp32 through direct sums
// on the best available backend.
func DefaultSpec() Spec {
	return Spec{Data: data.DefaultDataset, HMA: "20:200:20", HMA3: "30:240:30", Fee: DefaultFee,
		Mode: LongShort.String(), Source: SourceClose.String(), Backend: "auto", Precision: "both",
		WMA: Direct.String(), Borderline: DefaultBorderline}
}

// Settings are a Spec's values parsed: what a study runs with, less the
// dataset and the backend.
type Settings struct {
	Grid       Grid
	Params     Params // BarsPerYear 0 when the Spec derives it from the data
	Precisions []Precision
	WMA        Formulation
	Tolerance  float64
	Objective  Objective     // the zero value for sharpe, unconstrained
	Timeframe  time.Duration // 0 = as loaded
	Location   *time.Location
}

// Parse checks every field that needs no data and no backend and returns
// their values. The error joins one *FieldError per bad field (all of
// them, not the first), in the order of the form.
func (s Spec) Parse() (*Settings, error) {
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	out := &Settings{}
	var err error
	if s.Blocks < 0 || s.Blocks == 1 || s.Blocks > MaxBlocks {
		add(fieldErr(FieldBlocks, fmt.Sprint(s.Blocks), "want 0 (none) or 2 to %d blocks of bar returns", MaxBlocks))
	}
	gerr := s.parseGrid(out)
	add(gerr)
	out.Params.Fee = s.Fee
	if !(s.Fee >= 0 && s.Fee < 1) {
		add(fieldErr(FieldFee, text.FormatFloat(s.Fee), "want a fraction per side in [0, 1), e.g. 0.00045"))
	}
	out.Params.Fill, err = ParseFill(s.Fill)
	add(err)
	out.Params.Slippage = s.Slippage
	if !(s.Slippage >= 0 && s.Slippage < 1) {
		add(fieldErr(FieldSlippage, text.FormatFloat(s.Slippage), "want a fraction per unit of position change in [0, 1), e.g. 0.0005"))
	}
	out.Params.RiskFree = s.RiskFree
	if !(s.RiskFree > -1 && s.RiskFree < 10) {
		add(fieldErr(FieldRiskFree, text.FormatFloat(s.RiskFree), "want an annual rate as a fraction above -1, e.g. 0.04"))
	}
	out.Params.Mode, err = ParseMode(s.Mode)
	add(err)
	out.Params.Source, err = ParseSource(s.Source)
	add(err)

	if tf, err := data.ParseTimeframe(s.Timeframe); err != nil {
		add(&FieldError{Field: FieldTimeframe, Value: s.Timeframe, Err: err})
	} else {
		out.Timeframe = tf
	}
	if s.Head < 0 {
		add(fieldErr(FieldHead, strconv.Itoa(s.Head), "want a positive bar count or 0 for all"))
	}
	out.Precisions, err = ParsePrecisions(s.Precision)
	add(err)
	out.WMA, err = ParseFormulation(s.WMA)
	add(err)
	if gerr == nil && err == nil {
		add(out.Grid.CheckParams(out.Params, out.WMA))
	}
	if s.BarsPerYear < 0 || s.BarsPerYear > 1e12 || s.BarsPerYear != s.BarsPerYear {
		add(fieldErr(FieldBarsPerYear, text.FormatFloat(s.BarsPerYear), "want a positive number, or 0 to derive it from the data"))
	}
	out.Params.BarsPerYear = s.BarsPerYear
	out.Tolerance = s.Borderline
	if out.Tolerance == 0 {
		out.Tolerance = DefaultBorderline
	}
	if !(out.Tolerance > 0) {
		add(fieldErr(FieldBorderline, text.FormatFloat(s.Borderline), "want a positive margin, e.g. 1e-5"))
	}
	if s.TZ != "" {
		loc, err := time.LoadLocation(s.TZ)
		if err != nil {
			add(&FieldError{Field: FieldTZ, Value: s.TZ, Err: err})
		}
		out.Location = loc
	}
	add(checkLEANAsset(s.LEANAsset))
	if s.MinTrades < 0 {
		add(fieldErr(FieldMinTrades, strconv.Itoa(s.MinTrades), "want a count >= 0"))
	}
	if !(s.MaxDrawdown >= 0 && s.MaxDrawdown <= 1) {
		add(fieldErr(FieldMaxDrawdown, text.FormatFloat(s.MaxDrawdown), "want a fraction in [0, 1] (0.3 = 30%%; 0 = no bound)"))
	}
	if s.Objective != "" || s.MinTrades != 0 || s.MaxDrawdown != 0 {
		name := s.Objective
		if name == "" {
			name = "sharpe"
		}
		out.Objective, err = ParseObjective(name, s.MinTrades, s.MaxDrawdown)
		add(err)
		if out.Objective.Metric == "sharpe" && !out.Objective.Constrained() {
			out.Objective = Objective{} // the tables' "Sharpe"
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// parseGrid sets out.Grid from the family and its ranges: hull's HMA and
// HMA3 (each bad one its own *FieldError, with the range as written), or
// the strategy grid NewStrategy builds.
func (s Spec) parseGrid(out *Settings) error {
	if s.IsStrategy() {
		g, err := strategyGrid(s.Strategy, s.Params, s.FastBelowSlow)
		out.Grid = g
		return err
	}
	var perr error
	for _, k := range sortedKeys(s.Params) {
		if slices.Contains(StopParams, k) {
			perr = errors.Join(perr, fieldErr(FieldParams, k+"="+s.Params[k], "%s", HullStops))
			continue
		}
		perr = errors.Join(perr, fieldErr(FieldParams, k+"="+s.Params[k], "unknown parameter of hull (its parameters: hma, hma3)"))
	}
	hma, herr := ParseRange(FieldHMA, s.HMA)
	hma3, h3err := ParseRange(FieldHMA3, s.HMA3)
	var gerr error
	switch {
	case herr == nil && h3err == nil:
		out.Grid = Grid{HMA: hma, HMA3: hma3}
		gerr = out.Grid.Validate(0)
	case herr == nil:
		gerr = hma.validate(FieldHMA)
	case h3err == nil:
		gerr = hma3.validate(FieldHMA3)
	}
	for _, fe := range FieldErrors(gerr) {
		// The range as the user wrote it, not as parsed ("5:10", not "5:10:1").
		if fe.Field == FieldHMA {
			fe.Value = s.HMA
		} else if fe.Field == FieldHMA3 {
			fe.Value = s.HMA3
		}
	}
	return errors.Join(perr, herr, h3err, gerr)
}

// IsStrategy reports whether s names a family other than hull.
func (s Spec) IsStrategy() bool { return s.Strategy != "" && s.Strategy != FamilyHull }

// Family is s's strategy family, "hull" when none is named.
func (s Spec) Family() string {
	if s.Strategy == "" {
		return FamilyHull
	}
	return s.Strategy
}

// checkLEANAsset accepts "" (from the path) or one of data.LEANAssets.
func checkLEANAsset(a string) error {
	if a == "" || slices.Contains(data.LEANAssets(), a) {
		return nil
	}
	return fieldErr(FieldLEANAsset, a, "want one of %s, or nothing to take it from the path",
		strings.Join(data.LEANAssets(), ", "))
}

// LoadOptions are the data.Options the Spec loads its file with.
func (s Spec) LoadOptions() (data.Options, error) {
	if err := checkLEANAsset(s.LEANAsset); err != nil {
		return data.Options{}, err
	}
	opt := data.Options{TimeColumn: s.TimeColumn, LEANAsset: s.LEANAsset}
	if s.TZ != "" {
		loc, err := time.LoadLocation(s.TZ)
		if err != nil {
			return opt, &FieldError{Field: FieldTZ, Value: s.TZ, Err: err}
		}
		opt.Location = loc
	}
	return opt, nil
}

// Open reads the Spec's dataset as stored (data.Open), before resampling
// and Head: the TUI keeps it to derive from as the form changes.
func (s Spec) Open() (*data.Dataset, error) { return s.OpenContext(context.Background()) }

// OpenContext is Open under ctx: the load stops soon after ctx is done
// (data.OpenContext), with an error that wraps ctx's.
func (s Spec) OpenContext(ctx context.Context) (*data.Dataset, error) {
	opt, err := s.LoadOptions()
	if err != nil {
		return nil, err
	}
	ds, err := data.OpenContext(ctx, s.Data, opt)
	if errors.Is(err, data.ErrTimeColumn) { // the field's fault, not the file's
		return nil, &FieldError{Field: FieldTimeColumn, Value: s.TimeColumn, Err: err}
	}
	return ds, err
}

// Derive resamples raw to the Spec's timeframe and keeps its first Head
// bars (`--timeframe`, `--head`).
func (s Spec) Derive(raw *data.Dataset) (*data.Dataset, error) {
	tf, err := data.ParseTimeframe(s.Timeframe)
	if err != nil {
		return nil, &FieldError{Field: FieldTimeframe, Value: s.Timeframe, Err: err}
	}
	if s.Head < 0 {
		return nil, fieldErr(FieldHead, strconv.Itoa(s.Head), "want a positive bar count or 0 for all")
	}
	ds := raw
	if tf > 0 {
		if ds, err = raw.Resample(tf); err != nil {
			return nil, &FieldError{Field: FieldTimeframe, Value: s.Timeframe, Err: err}
		}
	}
	from, to, err := s.WindowOf(&ds.Info)
	if err != nil {
		return nil, err
	}
	if ds, err = ds.Window(from, to); err != nil {
		f, v := FieldFrom, s.From
		if s.From == "" {
			f, v = FieldTo, s.To
		}
		return nil, &FieldError{Field: f, Value: v, Err: err}
	}
	return ds.Head(s.Head), nil
}

// windowLayouts are the forms --from and --to take.
var windowLayouts = []string{"2006-01-02", "2006-01-02 15:04", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02T15:04:05"}

// WindowOf parses From and To into instants: in the Spec's TZ when set,
// else the zone the data's local times are in (Info.TimeZone), else UTC; a
// To given as a date is the next day's midnight (the day included); RFC
// 3339 carries its own offset. Zero for an empty bound. Errors
// (*FieldError): a bound in no known form, or From not before To.
func (s Spec) WindowOf(in *data.Info) (from, to time.Time, err error) {
	loc := time.UTC
	zone := s.TZ
	if zone == "" && in != nil {
		zone = in.TimeZone
	}
	if zone != "" {
		if l, lerr := time.LoadLocation(zone); lerr == nil {
			loc = l
		}
	}
	parse := func(field, v string, end bool) (time.Time, error) {
		if v == "" {
			return time.Time{}, nil
		}
		v = strings.TrimSpace(v)
		if t, err := time.Parse(time.RFC3339, v); err == nil {
			return t, nil
		}
		for i, layout := range windowLayouts {
			if t, err := time.ParseInLocation(layout, v, loc); err == nil {
				if end && i == 0 {
					t = t.AddDate(0, 0, 1)
				}
				return t, nil
			}
		}
		return time.Time{}, fieldErr(field, v, "want a date (2023-09-01), a date and time (2023-09-01 12:00) or RFC 3339")
	}
	if from, err = parse(FieldFrom, s.From, false); err != nil {
		return
	}
	if to, err = parse(FieldTo, s.To, true); err != nil {
		return
	}
	if !from.IsZero() && !to.IsZero() && !from.Before(to) {
		err = fieldErr(FieldTo, s.To, "is not after --from %s", s.From)
	}
	return
}

// Load opens, resamples and trims the Spec's dataset (Open then Derive).
func (s Spec) Load() (*data.Dataset, error) { return s.LoadContext(context.Background()) }

// LoadContext is Load under ctx (OpenContext).
func (s Spec) LoadContext(ctx context.Context) (*data.Dataset, error) {
	if _, err := data.ParseTimeframe(s.Timeframe); err != nil {
		return nil, &FieldError{Field: FieldTimeframe, Value: s.Timeframe, Err: err}
	}
	raw, err := s.OpenContext(ctx)
	if err != nil {
		return nil, err
	}
	return s.Derive(raw)
}

// feeNoteAbove: a fee per side at or above this (1%) gets a note that fees
// are fractions, in case a percentage was meant.
const feeNoteAbove = 0.01

// Study validates the Spec into a Study on ds (the Spec's dataset, loaded
// by Load or derived by Derive), with the backend resolved through reg
// (auto picks the first available GPU backend; the reference is the
// fallback of lanes a backend cannot compute). The Study's Note says what
// is known before it runs: what auto picked, a fee that looks like a
// percentage, a lane that runs on the fallback. Errors are *FieldError values (joined when several fields
// are bad), the dataset's own error otherwise.
func (s Spec) Study(ds *data.Dataset, reg *Registry) (*Study, error) {
	set, err := s.Parse()
	if err != nil {
		return nil, err
	}
	if reg == nil {
		return nil, &FieldError{Field: FieldBackend, Value: s.Backend, Err: errors.New("no backend registry")}
	}
	if ds == nil {
		return nil, &FieldError{Field: FieldData, Value: s.Data, Err: errors.New("no dataset loaded")}
	}
	var be Backend
	var note string
	if work := set.Work(ds.Bars.Len()); isAuto(s.Backend) && SmallWork(work) && reg.Reference() != nil && len(reg.All()) > 1 {
		be, note = reg.Reference(), fmt.Sprintf("auto: using reference (CPU) for a small study (%s bar-steps: done before a GPU backend would start)", text.Thousands(int(work)))
	} else if be, note, err = reg.Lookup(s.Backend); err != nil {
		return nil, err
	}
	p := set.Params
	var derivedWhy string // the rule, when the bars per year are derived
	if p.BarsPerYear == 0 {
		p.BarsPerYear, derivedWhy = DerivedBarsPerYear(&ds.Info)
	}
	if s.Fee >= feeNoteAbove {
		note = JoinNote(note, fmt.Sprintf("fee %s is %s%% per side: fees are fractions (0.00045 = 0.045%%)", text.FormatFloat(s.Fee), text.FormatFloat(100*s.Fee)))
	}
	st := &Study{Spec: s, Dataset: ds, Grid: set.Grid, Params: p, Precisions: set.Precisions, WMA: set.WMA,
		Backend: be, Fallback: reg.Reference(), Tolerance: set.Tolerance, Note: note, Blocks: s.Blocks, Objective: set.Objective}
	if err := st.Validate(); err != nil {
		var fe *FieldError
		if derivedWhy != "" && errors.As(err, &fe) && fe.Field == FieldBarsPerYear {
			return nil, notDerived(&ds.Info, p.BarsPerYear, derivedWhy) // the data's, not a field's
		}
		return nil, err
	}
	st.Note = JoinNote(st.Note, st.FallbackNote())
	return st, nil
}

// SmallWorkPerCore bounds the studies auto runs on the CPU reference:
// at most this many bar-steps (SmallWork) per CPU core, about 0.1 s at
// the reference's ~8 ns a bar-step and lane (BenchmarkBacktest), less
// than a GPU backend takes to start (driver, context and modules: 0.34 s
// on an H200, docs/PERFORMANCE.md). An explicit --backend is obeyed.
const SmallWorkPerCore = 10_000_000

// SmallWork reports whether a study of work bar-steps (Settings.Work) is
// small enough for auto to run on the CPU reference (SmallWorkPerCore on
// each of GOMAXPROCS cores).
func SmallWork(work int64) bool {
	return work <= SmallWorkPerCore*int64(runtime.GOMAXPROCS(0))
}

// Work is how many bar-steps a study of these settings computes over
// bars bars: the grid's distinct combos (Grid.Distinct) x bars x lanes.
func (set *Settings) Work(bars int) int64 {
	return int64(set.Grid.Distinct().Len()) * int64(bars) * int64(len(set.Precisions))
}

func isAuto(backend string) bool { return backend == "" || backend == "auto" }

// Build loads the Spec's dataset and builds its Study (Load, then Study),
// checking first what needs no data (Parse), and the backend while the data
// loads, so that a bad flag is refused before a large file is read.
func (s Spec) Build(reg *Registry) (*Study, error) { return s.BuildContext(context.Background(), reg) }

// BuildContext is Build under ctx: loading the dataset stops soon after
// ctx is done (LoadContext), with an error that wraps ctx's. A bad backend
// returns at once; the load then stops with ctx (the caller's to cancel)
// or runs out in the background.
func (s Spec) BuildContext(ctx context.Context, reg *Registry) (*Study, error) {
	if _, err := s.Parse(); err != nil {
		return nil, err
	}
	// The data loads while the backend starts (a GPU's driver, context and
	// kernels: a tenth of a second or more); a bad backend is refused at
	// once, without waiting for the data.
	type loaded struct {
		ds  *data.Dataset
		err error
	}
	load := make(chan loaded, 1)
	go func() {
		ds, err := s.LoadContext(ctx)
		load <- loaded{ds, err}
	}()
	switch set, _ := s.Parse(); {
	case reg == nil:
	case isAuto(s.Backend):
		// auto cannot fail; the GPU starts beside the load (Study waits
		// for it if it picks it), unless the study is small for certain
		// (its --head bounds the bars) and runs on the CPU.
		if s.Head == 0 || !SmallWork(set.Work(s.Head)) {
			go reg.Lookup(s.Backend)
		}
	default:
		if _, _, err := reg.Lookup(s.Backend); err != nil {
			return nil, err
		}
	}
	l := <-load
	ds, err := l.ds, l.err
	if err != nil {
		return nil, err
	}
	return s.Study(ds, reg)
}
