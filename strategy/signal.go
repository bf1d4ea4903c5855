package strategy

import (
	"fmt"

	"sweepbench/engine"
)

// Signal is what a combo's state machine compares (engine.Signal), per
// family:
//
//	hull      price: "hma3 L3" (of the close) and "hma L" (of the source)
//	cross     price: "fast KIND L" and "slow KIND L" (a price leg: the source)
//	zscore    z: z = (x-m)/sd as the machine compared it, levels +entry,
//	          -entry (entries), +exit, -exit
//	breakout  price: "close", "up entry", "down entry", "up exit", "down exit"
//	rsi       RSI 0..100: "rsi L", levels "lower", "upper"
//
// Each line has n values (NaN where undefined: the warm-up, sd = 0, a
// prefix variance below 0, RSI where ag = al = 0).
type Signal = engine.Signal

// Line is one series of a Signal; Level one constant threshold.
type (
	Line  = engine.SignalLine
	Level = engine.SignalLevel
)

// SignalSeries is combo c's Signal over in, in precision F and
// formulation f (the series the family's Evaluate reads, computed the
// same way, so a chart shows the numbers that decided). Errors: those of
// Evaluate.
func SignalSeries[F Float](g Grid, c Combo, in *Inputs[F], f Formulation) (Signal, error) {
	fam, err := Lookup(g.Family)
	if err != nil {
		return Signal{}, err
	}
	n := len(in.Close)
	sc := newSeriesCache[F]()
	if _, err := evaluate(fam, c, in, f, make([]State, n), nil, sc); err != nil {
		return Signal{}, err
	}
	got := sc.snapshot()
	series := func(k seriesKey, j int) []float64 {
		v, ok := got[k]
		if !ok || j >= len(v) {
			return nil
		}
		return toFloat64(v[j])
	}
	kf := func(k Kind) Formulation {
		if k == SMA || k == WMA || k == HMA || k == HMA3 {
			return f
		}
		return Direct
	}
	ma := func(src string, k Kind, L int) []float64 {
		return series(seriesKey{name: "ma", src: src, kind: k, length: L, f: kf(k)}, 0)
	}
	switch fam.Name {
	case "hull":
		L, L3 := length(c.Values[0]), length(c.Values[1])
		return Signal{Scale: "price", Lines: []Line{
			{Name: fmt.Sprintf("hma3 %d", L3), Values: ma("close", HMA3, L3)},
			{Name: fmt.Sprintf("hma %d", L), Values: ma("src", HMA, L)},
		}}, nil
	case "cross":
		var lines []Line
		for k, name := range []string{"fast", "slow"} {
			kind, L := c.Kinds[k], length(c.Values[k])
			if kind == Price {
				lines = append(lines, Line{Name: name + " price", Values: toFloat64(in.Src)})
				continue
			}
			lines = append(lines, Line{Name: fmt.Sprintf("%s %s %d", name, kind, L), Values: ma("src", kind, L)})
		}
		return Signal{Scale: "price", Lines: lines}, nil
	case "zscore":
		L := length(c.Values[0])
		kin, kout := c.Values[1].Float64(), c.Values[2].Float64()
		// The z the machine compared (zSeries, in the working precision;
		// NaN where sd is undefined or 0).
		z := series(seriesKey{name: "zscore", src: "src", length: L, f: f}, 2)
		return Signal{Scale: "z", Lines: []Line{{Name: fmt.Sprintf("z %d", L), Values: z}},
			Levels: []Level{{Name: "+entry", Value: kin}, {Name: "-entry", Value: -kin}, {Name: "+exit", Value: kout}, {Name: "-exit", Value: -kout}}}, nil
	case "breakout":
		lin, lout := length(c.Values[0]), length(c.Values[1])
		ch := func(src string, L int) []float64 { return series(seriesKey{name: "channel", src: src, length: L}, 0) }
		return Signal{Scale: "price", Lines: []Line{
			{Name: "close", Values: toFloat64(in.Close)},
			{Name: fmt.Sprintf("up entry %d", lin), Values: ch("high", lin)},
			{Name: fmt.Sprintf("down entry %d", lin), Values: ch("low", lin)},
			{Name: fmt.Sprintf("up exit %d", lout), Values: ch("high", lout)},
			{Name: fmt.Sprintf("down exit %d", lout), Values: ch("low", lout)},
		}}, nil
	case "rsi":
		L := length(c.Values[0])
		rf := f
		if f != Prefix {
			rf = Direct
		}
		return Signal{Scale: "rsi", Lines: []Line{{Name: fmt.Sprintf("rsi %d", L), Values: series(seriesKey{name: "rsi", src: "src", length: L, f: rf}, 0)}},
			Levels: []Level{{Name: "lower", Value: c.Values[1].Float64()}, {Name: "upper", Value: c.Values[2].Float64()}}}, nil
	}
	return Signal{}, fmt.Errorf("strategy %s: no signal chart", fam.Name)
}

func toFloat64[F Float](v []F) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}
