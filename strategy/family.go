package strategy

// The registry of SPEC Part 2 "Families": each family's parameters in
// the grid's order, their kinds, minimums and defaults, and an example
// command line.

import (
	"math"
	"strconv"
	"strings"
)

// ParamKind is what a parameter's values are.
type ParamKind int

const (
	// IntegerParam is a length: an integer range, start:stop:step.
	IntegerParam ParamKind = iota
	// DecimalParam is a threshold: a decimal range, expanded exactly.
	DecimalParam
	// LegParam is a crossover leg, KIND:RANGE or price.
	LegParam
)

// String is the kind as the registry prints it: integer, decimal, leg.
func (k ParamKind) String() string {
	switch k {
	case IntegerParam:
		return "integer"
	case DecimalParam:
		return "decimal"
	case LegParam:
		return "leg"
	}
	return "unknown"
}

// Param is one parameter of a family: its SPEC name, kind, minimum (Min,
// excluded when MinExclusive; -Inf when the bound depends on another
// parameter, which Doc states; for a leg, 1, the kind setting its own),
// default range (or leg) and a one-line Doc.
type Param struct {
	Name         string
	Kind         ParamKind
	Min          float64
	MinExclusive bool
	Default      string
	Doc          string
}

// MinText is the minimum as the registry prints it: ">= 2", "> 0", or
// "-" when another parameter bounds it (Doc says how).
func (p Param) MinText() string {
	switch {
	case p.Kind == LegParam:
		return "per kind"
	case math.IsInf(p.Min, -1):
		return "-"
	case p.MinExclusive:
		return "> " + trimFloat(p.Min)
	}
	return ">= " + trimFloat(p.Min)
}

func trimFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// Family is one strategy family: its name, a one-line Doc, an Example
// command line and its parameters in the grid's order.
type Family struct {
	Name, Doc, Example string
	Params             []Param

	eval evaluator // the family's arithmetic (its file)
}

// Param is the family's parameter of that name.
func (f Family) Param(name string) (Param, bool) {
	for _, p := range f.Params {
		if p.Name == name {
			return p, true
		}
	}
	return Param{}, false
}

// Families lists every family in SPEC's order: hull, cross, zscore,
// breakout, rsi. The defaults are valid together (NewGrid with no
// parameter given builds each family's default grid); hull's are
// engine.DefaultSpec's.
var Families = []Family{
	{
		Name:    "hull",
		eval:    hullEval{},
		Doc:     "Hull MA of the source against HMA3 of the close (SPEC Part 1, the default)",
		Example: "sweepbench run --strategy hull --param hma=20:200:20 --param hma3=30:240:30",
		Params: []Param{
			{Name: "hma", Kind: IntegerParam, Min: 2, Default: "20:200:20", Doc: "HMA length"},
			{Name: "hma3", Kind: IntegerParam, Min: 6, Default: "30:240:30", Doc: "HMA3 length (read through p = floor(L/2))"},
		},
	},
	{
		Name:    "cross",
		eval:    crossEval{},
		Doc:     "moving-average crossover: long while fast > slow, short while fast < slow",
		Example: "sweepbench run --strategy cross --param fast=ema:5:50:5 --param slow=sma:20:200:10",
		Params: []Param{
			{Name: "fast", Kind: LegParam, Min: 1, Default: "ema:5:50:5", Doc: "fast leg, KIND:RANGE or price"},
			{Name: "slow", Kind: LegParam, Min: 1, Default: "sma:20:200:10", Doc: "slow leg, KIND:RANGE or price"},
		},
	},
	{
		Name:    "zscore",
		eval:    zscoreEval{},
		Doc:     "Bollinger-band mean reversion on the z-score of the source",
		Example: "sweepbench run --strategy zscore --param length=10:60:5 --param entry=1.5:3:0.25 --param exit=0:1:0.5",
		Params: []Param{
			{Name: "length", Kind: IntegerParam, Min: 2, Default: "10:60:5", Doc: "window length L"},
			{Name: "entry", Kind: DecimalParam, Min: 0, MinExclusive: true, Default: "1.5:3:0.25", Doc: "entry threshold k_in"},
			{Name: "exit", Kind: DecimalParam, Min: math.Inf(-1), Default: "0:1:0.5", Doc: "exit threshold k_out, -entry < exit < entry"},
		},
	},
	{
		Name:    "breakout",
		eval:    breakoutEval{},
		Doc:     "Donchian channel breakout on the previous bars' highs and lows",
		Example: "sweepbench run --strategy breakout --param entry=10:100:10 --param exit=5:50:5",
		Params: []Param{
			{Name: "entry", Kind: IntegerParam, Min: 1, Default: "10:100:10", Doc: "entry channel length L_in"},
			{Name: "exit", Kind: IntegerParam, Min: 1, Default: "5:50:5", Doc: "exit channel length L_out"},
		},
	},
	{
		Name:    "rsi",
		eval:    rsiEval{},
		Doc:     "stop-and-reverse on Wilder's RSI: long below lower, short above upper",
		Example: "sweepbench run --strategy rsi --param length=7:28:7 --param lower=20:35:5 --param upper=65:80:5",
		Params: []Param{
			{Name: "length", Kind: IntegerParam, Min: 2, Default: "7:28:7", Doc: "RSI length L"},
			{Name: "lower", Kind: DecimalParam, Min: 0, MinExclusive: true, Default: "20:35:5", Doc: "lower threshold, 0 < lower < upper"},
			{Name: "upper", Kind: DecimalParam, Min: 0, MinExclusive: true, Default: "65:80:5", Doc: "upper threshold, lower < upper < 100"},
		},
	},
}

// StopParams are the exits every family but hull takes as grid
// parameters (SPEC Part 2 "Execution options"), in engine.StopParams'
// order: each optional, a decimal fraction of the entry price (trail: of
// the trade's best price), a single value or a range. Given, each is an
// axis of the grid after the family's own parameters, in this order.
// stop_loss and trail are below 1 (a level at or below 0 is no stop).
var StopParams = []Param{
	{Name: "stop_loss", Kind: DecimalParam, Min: 0, MinExclusive: true, Doc: "stop loss, a fraction of the entry price, 0 < stop_loss < 1"},
	{Name: "take_profit", Kind: DecimalParam, Min: 0, MinExclusive: true, Doc: "take profit, a fraction of the entry price, take_profit > 0"},
	{Name: "trail", Kind: DecimalParam, Min: 0, MinExclusive: true, Doc: "trailing stop, a fraction of the trade's best price, 0 < trail < 1"},
}

// stopParam is the stop parameter of that name.
func stopParam(name string) (Param, bool) {
	for _, p := range StopParams {
		if p.Name == name {
			return p, true
		}
	}
	return Param{}, false
}

// Lookup is the family of that name; an unknown name is a *ParamError
// for "strategy" listing the families.
func Lookup(name string) (Family, error) {
	var names []string
	for _, f := range Families {
		if f.Name == name {
			return f, nil
		}
		names = append(names, f.Name)
	}
	return Family{}, paramErr("strategy", name, "unknown strategy (the families: %s)", strings.Join(names, ", "))
}
