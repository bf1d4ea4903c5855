package strategy

import (
	"fmt"
	"math"
)

// Signal is what a combo's state machine compares, for a chart around a
// flip (the workbench's and the HTML report's signal chart): the lines it
// reads on one axis and the constant levels it compares them with.
//
//	hull      price: "hma3 L3" (of the close) and "hma L" (of the source)
//	cross     price: "fast KIND L" and "slow KIND L" (a price leg: the source)
//	zscore    z: z = (x-m)/sd, levels +entry, -entry (entries), +exit, -exit
//	breakout  price: "close", "up entry", "down entry", "up exit", "down exit"
//	rsi       RSI 0..100: "rsi L", levels "lower", "upper"
//
// Each line has n values (NaN where undefined: the warm-up, sd = 0, a
// prefix variance below 0, RSI where ag = al = 0), in float64 from the
// precision F that computed them.
type Signal struct {
	Scale  string // "price", "z" or "rsi": the unit of the axis
	Lines  []Line
	Levels []Level
}

// Line is one series of a Signal.
type Line struct {
	Name   string
	Values []float64
}

// Level is one constant threshold of a Signal.
type Level struct {
	Name  string
	Value float64
}

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
			{fmt.Sprintf("hma3 %d", L3), ma("close", HMA3, L3)},
			{fmt.Sprintf("hma %d", L), ma("src", HMA, L)},
		}}, nil
	case "cross":
		var lines []Line
		for k, name := range []string{"fast", "slow"} {
			kind, L := c.Kinds[k], length(c.Values[k])
			if kind == Price {
				lines = append(lines, Line{name + " price", toFloat64(in.Src)})
				continue
			}
			lines = append(lines, Line{fmt.Sprintf("%s %s %d", name, kind, L), ma("src", kind, L)})
		}
		return Signal{Scale: "price", Lines: lines}, nil
	case "zscore":
		L := length(c.Values[0])
		kin, kout := c.Values[1].Float64(), c.Values[2].Float64()
		zf := f
		m, sd := series(seriesKey{name: "zscore", src: "src", length: L, f: zf}, 0), series(seriesKey{name: "zscore", src: "src", length: L, f: zf}, 1)
		z := make([]float64, n)
		for i := range z {
			z[i] = math.NaN()
			if m != nil && sd != nil && sd[i] > 0 {
				z[i] = (float64(in.Src[i]) - m[i]) / sd[i]
			}
		}
		return Signal{Scale: "z", Lines: []Line{{fmt.Sprintf("z %d", L), z}},
			Levels: []Level{{"+entry", kin}, {"-entry", -kin}, {"+exit", kout}, {"-exit", -kout}}}, nil
	case "breakout":
		lin, lout := length(c.Values[0]), length(c.Values[1])
		ch := func(src string, L int) []float64 { return series(seriesKey{name: "channel", src: src, length: L}, 0) }
		return Signal{Scale: "price", Lines: []Line{
			{"close", toFloat64(in.Close)},
			{fmt.Sprintf("up entry %d", lin), ch("high", lin)},
			{fmt.Sprintf("down entry %d", lin), ch("low", lin)},
			{fmt.Sprintf("up exit %d", lout), ch("high", lout)},
			{fmt.Sprintf("down exit %d", lout), ch("low", lout)},
		}}, nil
	case "rsi":
		L := length(c.Values[0])
		rf := f
		if f != Prefix {
			rf = Direct
		}
		return Signal{Scale: "rsi", Lines: []Line{{fmt.Sprintf("rsi %d", L), series(seriesKey{name: "rsi", src: "src", length: L, f: rf}, 0)}},
			Levels: []Level{{"lower", c.Values[1].Float64()}, {"upper", c.Values[2].Float64()}}}, nil
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
