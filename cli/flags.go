package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/engine/robust"
	"sweepbench/engine/suite"
)

// studyFlags bind the flags that define a study to an engine.Spec (one set
// of defaults: engine.DefaultSpec); `run`, `tui` and `bench` share them.
type studyFlags struct {
	spec engine.Spec
	// datas are the --data values in order (the flag repeats: a suite of
	// datasets, suite.ExpandDatasets); spec.Data is the first.
	datas []string
	// hullGiven is the hull flag given (--hma, --param hma3), "" when none:
	// a family other than hull refuses it.
	hullGiven string
}

func (f *studyFlags) register(fs *pflag.FlagSet) {
	d, s := engine.DefaultSpec(), &f.spec
	s.Fee, s.Head, s.BarsPerYear, s.Borderline = d.Fee, d.Head, d.BarsPerYear, d.Borderline
	s.Data = d.Data
	fs.Var(&dataValues{first: &s.Data, all: &f.datas}, engine.FieldData, "bars to sweep: a file (CSV, Binance, freqtrade, klines JSON, LEAN, Parquet, Feather/Arrow; .gz and .zip ok, FILE.zip#MEMBER), a folder or glob of them (one dataset), or embedded:NAME (filusdt-1m, btcusdt-1m); run: repeat it, or @LIST (a file naming one dataset a line), for a suite over several datasets")
	s.HMA, s.HMA3 = d.HMA, d.HMA3
	fs.Var(&strategyValue{f}, engine.FieldStrategy, "strategy family: hull, cross, zscore, breakout or rsi (`sweepbench strategies` lists their parameters)")
	fs.Var(&paramValue{f, ""}, engine.FieldParams, "a parameter of the strategy as NAME=RANGE, repeatable: --param length=10:60:5 --param entry=1.5:3:0.25 (a leg as --param fast=ema:5:50:5); every family but hull also takes the stops stop_loss, take_profit and trail, fractions of the entry price (--param stop_loss=0.01:0.05:0.01)")
	fs.Var(&paramValue{f, "fast"}, "fast", "cross: the fast leg KIND:RANGE or price (sma, wma, ema, dema, tema, hma, hma3), the same as --param fast=...")
	fs.Var(&paramValue{f, "slow"}, "slow", "cross: the slow leg KIND:RANGE or price, the same as --param slow=...")
	fs.BoolVar(&s.FastBelowSlow, engine.FieldFastBelowSlow, false, "cross: keep only the combos whose fast length is below the slow one")
	fs.Var(&paramValue{f, engine.FieldHMA}, engine.FieldHMA, "hull: HMA length range start:stop:step, inclusive (min 2), the same as --param hma=...")
	fs.Var(&paramValue{f, engine.FieldHMA3}, engine.FieldHMA3, "hull: HMA3 length range start:stop:step, inclusive (min 6), the same as --param hma3=...")
	fs.Var(decimalFloat{&s.Fee, d.Fee}, engine.FieldFee, "fee per side, a fraction (0.00045 = 0.045%)")
	fs.StringVar(&s.Fill, engine.FieldFill, "", "when a position decided at a bar's close is entered: close (that close, the default) or next-open (the next bar's open; needs open prices)")
	fs.Var(decimalFloat{&s.Slippage, 0}, engine.FieldSlippage, "slippage per unit of position change, a fraction (0.0005 = 0.05%), paid beside the fee")
	fs.Var(decimalFloat{&s.RiskFree, 0}, engine.FieldRiskFree, "annual risk-free rate, a fraction (0.04 = 4%), subtracted per bar from the returns in Sharpe and Sortino")
	fs.StringVar(&s.Mode, engine.FieldMode, d.Mode, "long-short or long-only")
	fs.StringVar(&s.Source, engine.FieldSource, d.Source, "series for the HMA: close, hl2, hlc3 or ohlc4 (HMA3 always uses close)")
	fs.StringVar(&s.Timeframe, engine.FieldTimeframe, d.Timeframe, "resample first: 5m, 15m, 30m, 1h, 4h or 1d (UTC-aligned, left-labelled)")
	fs.Var(decimalInt{&s.Head, d.Head}, engine.FieldHead, "use only the first N bars (after resampling and --from/--to); 0 = all")
	fs.StringVar(&s.From, engine.FieldFrom, d.From, "use only bars from this date or time (2023-09-01, 2023-09-01 12:00; in --tz, else the data's zone, else UTC)")
	fs.StringVar(&s.To, engine.FieldTo, d.To, "use only bars before this time; a date includes that day (2023-09-30)")
	fs.StringVar(&s.Backend, engine.FieldBackend, d.Backend, "auto, reference, cuda or metal")
	fs.StringVar(&s.Precision, engine.FieldPrecision, d.Precision, "fp64, fp32 or both")
	fs.StringVar(&s.WMA, "formulation", d.WMA, "formulation of the fp32 run: direct, or prefix (the trap: running sums for hull's WMA, sma, wma, hma, hma3 and zscore's variance; rsi's moves as differences of rounded prices; fp64 is always direct)")
	fs.StringVar(&s.WMA, engine.FieldWMA, d.WMA, "the same as --formulation (its name before strategies)")
	fs.Var(decimalFloat{&s.BarsPerYear, d.BarsPerYear}, engine.FieldBarsPerYear, "bars per year for Sharpe, Sortino and CAGR; 0 = derived from the data: the bars observed a year when they follow a session calendar (nights, weekends), else 365 x 24 h / the median bar spacing (24/7); the report says which")
	fs.Var(decimalFloat{&s.Borderline, d.Borderline}, engine.FieldBorderline, "parity: a flip is borderline when |h3-h|/close is below this")
	fs.StringVar(&s.TZ, engine.FieldTZ, d.TZ, "exchange time zone for local times without offset (default: the LEAN convention's zone for LEAN files, else UTC)")
	fs.StringVar(&s.LEANAsset, engine.FieldLEANAsset, d.LEANAsset, "LEAN security type when the path does not say it: "+strings.Join(data.LEANAssets(), ", ")+" (decides the price scale and zone)")
	fs.StringVar(&s.TimeColumn, engine.FieldTimeColumn, d.TimeColumn, "name of the timestamp column of a CSV with a header")
}

// strategyValue is --strategy. A family other than hull refuses the hull
// flags given before it (paramValue refuses those given after).
type strategyValue struct{ f *studyFlags }

func (v *strategyValue) Set(s string) error {
	s = strings.TrimSpace(s)
	if s != engine.FamilyHull && v.f.hullGiven != "" {
		return fmt.Errorf("%s is a hull parameter: %s has its own (`sweepbench strategies` lists them; e.g. --param NAME=RANGE)", v.f.hullGiven, s)
	}
	v.f.spec.Strategy = s
	return nil
}

func (v *strategyValue) String() string {
	if v.f == nil || v.f.spec.Strategy == "" {
		return engine.FamilyHull
	}
	return v.f.spec.Strategy
}

func (*strategyValue) Type() string { return "name" }

// paramValue is --param NAME=RANGE (name ""), or one parameter's own flag
// (--fast, --slow, --hma, --hma3: name set, the value a RANGE). hull's
// hma and hma3 go to Spec.HMA and HMA3, every other parameter to
// Spec.Params, which the family's grid checks (an unknown name is its
// error, naming the family's parameters).
type paramValue struct {
	f    *studyFlags
	name string
}

func (v *paramValue) Set(s string) error {
	name, val := v.name, strings.TrimSpace(s)
	if name == "" {
		k, r, ok := strings.Cut(s, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return errors.New("want NAME=RANGE, e.g. length=10:60:5 or fast=ema:5:50:5")
		}
		name, val = strings.TrimSpace(k), strings.TrimSpace(r)
	}
	sp := &v.f.spec
	if name == engine.FieldHMA || name == engine.FieldHMA3 {
		flag := "--" + name
		if v.name == "" {
			flag = "--param " + name
		}
		if sp.IsStrategy() {
			return fmt.Errorf("%s is a hull parameter: %s has its own (`sweepbench strategies` lists them)", flag, sp.Strategy)
		}
		v.f.hullGiven = flag
		if name == engine.FieldHMA {
			sp.HMA = val
		} else {
			sp.HMA3 = val
		}
		return nil
	}
	if sp.Params == nil {
		sp.Params = map[string]string{}
	}
	sp.Params[name] = val
	return nil
}

func (v *paramValue) String() string {
	if v.f == nil {
		return ""
	}
	switch v.name {
	case engine.FieldHMA:
		return v.f.spec.HMA
	case engine.FieldHMA3:
		return v.f.spec.HMA3
	case "":
		return ""
	}
	return v.f.spec.Params[v.name]
}

func (v *paramValue) Type() string {
	if v.name == "" {
		return "NAME=RANGE"
	}
	if v.name == "fast" || v.name == "slow" {
		return "KIND:RANGE"
	}
	return "string"
}

// registerRobust binds the robustness flags and the objective to the Spec
// (run's and tui's; robust.OptionsFor checks them together).
func (f *studyFlags) registerRobust(fs *pflag.FlagSet) {
	s := &f.spec
	fs.Var(decimalInt{&s.Blocks, 0}, engine.FieldBlocks, "robustness: split the bar returns into N blocks (16 is usual) and report PBO, the deflated Sharpe ratio and the plateau best; 0 = none")
	fs.StringVar(&s.WF, engine.FieldWF, "", "robustness: walk-forward over the blocks, rolling:K (K blocks in sample, the next out) or anchored (needs --blocks)")
	fs.StringVar(&s.Objective, engine.FieldObjective, "sharpe", "the metric the top lists rank by (any metric of the table; max_drawdown lowest first, the others highest) and, with --blocks, the robustness statistics' choice (one of "+strings.Join(robust.ObjectiveNames(), ", ")+")")
	fs.Var(decimalInt{&s.MinTrades, 0}, engine.FieldMinTrades, "only combos with at least N trades in the top lists and the robustness statistics' choice (the others still count as trials)")
	fs.Var(decimalFloat{&s.MaxDrawdown, 0}, engine.FieldMaxDrawdown, "only combos whose max drawdown is at most this fraction in the top lists and the robustness choice (0.3 = 30%; 0 = no bound)")
}

// oneDataset refuses a repeated --data in a command that takes one
// dataset (tui, bench).
func (f *studyFlags) oneDataset(cmd string) error {
	if len(f.datas) > 1 || (len(f.datas) == 1 && strings.HasPrefix(f.datas[0], "@")) {
		return fmt.Errorf("--data: %s takes one dataset (a file, folder or glob); `sweepbench run` takes several (repeat --data, or @LIST)", cmd)
	}
	return nil
}

// dataValues is --data: each value given appends (the first replaces the
// default); first is the first value.
type dataValues struct {
	first *string
	all   *[]string
}

func (v *dataValues) Set(s string) error {
	*v.all = append(*v.all, s)
	*v.first = (*v.all)[0]
	return nil
}

func (v *dataValues) String() string {
	if v.first == nil {
		return ""
	}
	return *v.first
}

func (*dataValues) Type() string { return "string" }

// decimalInt and decimalFloat are the study's number flags, read as plain
// decimals: pflag's own accept Go syntax (1_000, 0x10, 0x1p-4), which reads
// a typo as a number.
type (
	decimalInt struct {
		p   *int
		def int
	}
	decimalFloat struct {
		p   *float64
		def float64
	}
)

func (v decimalInt) Set(s string) error {
	n, err := strconv.Atoi(strings.TrimSpace(s)) // base 10: no 1_000, no 0x10
	if err != nil {
		return errors.New("want a whole number written in decimal digits, e.g. 5000")
	}
	*v.p = n
	return nil
}

func (v decimalInt) String() string {
	if v.p == nil {
		return strconv.Itoa(v.def)
	}
	return strconv.Itoa(*v.p)
}

func (decimalInt) Type() string { return "int" }

func (v decimalFloat) Set(s string) error {
	s = strings.TrimSpace(s)
	if s == "" || strings.Trim(s, "0123456789.eE+-") != "" {
		return errors.New("want a decimal number, e.g. 0.00045 or 1e-5")
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return errors.New("want a decimal number, e.g. 0.00045 or 1e-5")
	}
	*v.p = f
	return nil
}

func (v decimalFloat) String() string {
	if v.p == nil {
		return strconv.FormatFloat(v.def, 'g', -1, 64)
	}
	return strconv.FormatFloat(*v.p, 'g', -1, 64)
}

func (decimalFloat) Type() string { return "float" }

// study builds the study the flags describe (engine.Spec.BuildContext),
// with the backend resolved through the registry. Loading the data stops
// when ctx is done (Ctrl-C): the error is then an *exitError of status 130.
func (f *studyFlags) study(ctx context.Context, reg *engine.Registry) (*engine.Study, error) {
	s, err := f.spec.BuildContext(ctx, reg)
	if err != nil && errors.Is(err, context.Canceled) {
		return nil, &exitError{130, errors.New("interrupted while loading the data: nothing was computed")}
	}
	return s, err
}

// datasetsOf is the suite's datasets: the --data values (or the default)
// and --data-each, expanded (suite.ExpandDatasets).
func datasetsOf(sf *studyFlags, each string) ([]string, error) {
	vals := sf.datas
	if len(vals) == 0 && each == "" {
		vals = []string{sf.spec.Data}
	}
	ds, err := suite.ExpandDatasets(vals, each)
	var de *suite.DatasetsError
	if !errors.As(err, &de) {
		return ds, err
	}
	var dup *suite.DuplicateDatasetError
	if errors.As(de.Err, &dup) {
		return nil, fmt.Errorf("%s: the same dataset as %s: each dataset runs once, give it once", datasetOrigin(dup.Second), datasetOrigin(dup.First))
	}
	return nil, fmt.Errorf("%s %s: %v", dataFlag(de.Each), de.Value, de.Err)
}

// dataFlag is the flag a dataset value was given to.
func dataFlag(each bool) string {
	if each {
		return "--data-each"
	}
	return "--data"
}
