package engine

import (
	"fmt"
	"strings"
	"time"

	"sweepbench/engine/data"
	"sweepbench/engine/text"
)

// Mode says which positions the strategy may hold (SPEC "Signal, position, fills").
type Mode int

const (
	// LongShort holds +1 when h3 > h and -1 when h3 < h (the default).
	LongShort Mode = iota
	// LongOnly maps the -1 state to flat (0).
	LongOnly
)

func (m Mode) String() string {
	if m == LongOnly {
		return "long-only"
	}
	return "long-short"
}

// ParseMode accepts "long-short" or "long-only".
func ParseMode(s string) (Mode, error) {
	switch strings.ToLower(s) {
	case "long-short", "longshort", "ls":
		return LongShort, nil
	case "long-only", "longonly", "lo":
		return LongOnly, nil
	}
	return 0, fieldErr(FieldMode, s, "want long-short or long-only")
}

// Source picks the swept series x from the bars (SPEC "Input").
type Source int

const (
	SourceClose Source = iota // close
	SourceHL2                 // (high+low)/2
	SourceHLC3                // (high+low+close)/3
	SourceOHLC4               // (open+high+low+close)/4
)

var sourceNames = [...]string{"close", "hl2", "hlc3", "ohlc4"}

func (s Source) String() string {
	if int(s) < len(sourceNames) {
		return sourceNames[s]
	}
	return fmt.Sprintf("source(%d)", int(s))
}

// ParseSource accepts close, hl2, hlc3 or ohlc4.
func ParseSource(s string) (Source, error) {
	for i, n := range sourceNames {
		if strings.EqualFold(s, n) {
			return Source(i), nil
		}
	}
	return 0, fieldErr(FieldSource, s, "want close, hl2, hlc3 or ohlc4")
}

// Precision is the floating-point type a run computes in.
type Precision int

const (
	FP64 Precision = iota // float64 throughout (the reference)
	FP32                  // float32 throughout, as a GPU without fp64 would
)

func (p Precision) String() string {
	if p == FP32 {
		return "fp32"
	}
	return "fp64"
}

// ParsePrecisions accepts fp64, fp32 or both and returns the runs to make,
// fp64 first.
func ParsePrecisions(s string) ([]Precision, error) {
	switch strings.ToLower(s) {
	case "fp64", "float64", "f64":
		return []Precision{FP64}, nil
	case "fp32", "float32", "f32":
		return []Precision{FP32}, nil
	case "both", "":
		return []Precision{FP64, FP32}, nil
	}
	return nil, fieldErr(FieldPrecision, s, "want fp64, fp32 or both")
}

// Formulation is the WMA evaluation method (SPEC "WMA formulations").
type Formulation int

const (
	// Direct sums each window, oldest bar first (the default and the reference).
	Direct Formulation = iota
	// Prefix recovers each window from two running prefix sums: O(n) but its
	// intermediates grow to ~n^2*price and lose every digit in fp32.
	Prefix
)

func (f Formulation) String() string {
	if f == Prefix {
		return "prefix"
	}
	return "direct"
}

// ParseFormulation accepts direct or prefix.
func ParseFormulation(s string) (Formulation, error) {
	switch strings.ToLower(s) {
	case "direct", "":
		return Direct, nil
	case "prefix":
		return Prefix, nil
	}
	return 0, fieldErr(FieldWMA, s, "want direct or prefix")
}

// DefaultFee is the fee per side, a fraction (0.00045 = 0.045% per side,
// 0.09% round trip), SPEC "Input".
const DefaultFee = 0.00045

// Params are the options that apply to the whole sweep.
type Params struct {
	Fee         float64 // per side, fraction in [0, 1)
	Mode        Mode
	Source      Source
	BarsPerYear float64 // annualisation factor; > 0
	// Fill, Slippage (q, a fraction in [0, 1) per unit of position change)
	// and RiskFree (annual, a fraction; Sharpe and Sortino only) are SPEC
	// Part 2's execution options; their zero values are Part 1.
	Fill     Fill
	Slippage float64
	RiskFree float64
}

// Part1 reports whether p's execution is Part 1's (fills at the close, no
// slippage, no risk-free rate): what every GPU lane computes today.
func (p Params) Part1() bool { return p.Fill == FillClose && p.Slippage == 0 && p.RiskFree == 0 }

// Validate checks the ranges of the parameters.
func (p Params) Validate() error {
	if !(p.Fee >= 0 && p.Fee < 1) {
		return fieldErr(FieldFee, text.FormatFloat(p.Fee), "want a fraction per side in [0, 1), e.g. 0.00045")
	}
	if !(p.Slippage >= 0 && p.Slippage < 1) {
		return fieldErr(FieldSlippage, text.FormatFloat(p.Slippage), "want a fraction per unit of position change in [0, 1)")
	}
	if !(p.RiskFree > -1) {
		return fieldErr(FieldRiskFree, text.FormatFloat(p.RiskFree), "want an annual rate as a fraction above -1")
	}
	if !(p.BarsPerYear > 0) || p.BarsPerYear > MaxBarsPerYear {
		return fieldErr(FieldBarsPerYear, text.FormatFloat(p.BarsPerYear), "want a positive number")
	}
	return nil
}

// MaxBarsPerYear is the most bars per year a study takes (a bar every
// 31.5 microseconds).
const MaxBarsPerYear = 1e12

// notDerived is the dataset's error when the bars per year derived from it
// (bpy, by the rule why) is not one a study takes: bars too close together
// (timestamps read in the wrong unit, or near the ends of the int64 range),
// naming the file and the span of the bars.
func notDerived(in *data.Info, bpy float64, why string) *data.Error {
	const at = "2006-01-02 15:04:05.999999999 MST"
	return &data.Error{File: in.Name, Reason: fmt.Sprintf("bars per year cannot be derived from the data: %s gives %s, "+
		"above the %s a study takes; the %s bars run from %s to %s: check the unit of the timestamps, or give the bars per year",
		why, text.FormatFloat(bpy), text.FormatFloat(MaxBarsPerYear), text.Thousands(in.Bars), in.First.UTC().Format(at), in.Last.UTC().Format(at))}
}

// SecondsPerYear is the 24/7 calendar year SPEC annualises with (365 days).
const SecondsPerYear = 365 * 24 * 3600

// BarsPerYear derives the annualisation factor from the median bar spacing
// on a 24/7 calendar (SPEC "Metrics per combo"): 525,600 for one-minute
// bars, 8,760 for hourly. Returns 0 for a non-positive spacing.
func BarsPerYear(medianSpacing time.Duration) float64 {
	if medianSpacing <= 0 {
		return 0
	}
	return SecondsPerYear / medianSpacing.Seconds()
}

// DerivedBarsPerYear is the annualisation factor a study on the dataset
// takes when none is given, and why. On a session calendar (data.Info's
// Calendar: regular night and weekend gaps, as in exchange-hours equity
// data) it is the bars actually observed per year over the span; the 24/7
// rule there would count every closed hour as a bar and overstate Sharpe
// by the square root of the ratio (about 2.2x for US equity hourly bars).
// Otherwise it is SPEC's 24/7 calendar from the median spacing
// (BarsPerYear).
func DerivedBarsPerYear(in *data.Info) (float64, string) {
	if in.Calendar == data.CalendarSessions {
		years := in.Last.Sub(in.First).Hours() / (365.25 * 24)
		return in.ObservedBarsPerYear(), fmt.Sprintf("observed over %.1f years: a session calendar (%s)",
			years, in.CalendarWhy)
	}
	why := "24/7 calendar from the " + text.ShortDuration(in.MedianSpacing) + " median spacing"
	if in.CalendarWhy != "" {
		why += " (" + in.CalendarWhy + ")"
	}
	return BarsPerYear(in.MedianSpacing), why
}

// BarsPerYearRule says where a report's bars per year came from: the rule
// DerivedBarsPerYear gives when bpy is what it derives from in, else
// "as given".
func BarsPerYearRule(in *data.Info, bpy float64) string {
	if d, why := DerivedBarsPerYear(in); d == bpy {
		return why
	}
	return "as given"
}
