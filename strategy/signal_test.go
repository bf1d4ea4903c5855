package strategy

import (
	"math"
	"testing"

	"sweepbench/engine"
)

// TestSignalSeriesDecides: the signal chart's lines are the numbers that
// decided: at every bar where the fp64 state enters +1 or -1 (from flat
// or reversing),
// the family's own comparison holds on the Signal's lines and levels
// (cross: fast above or below slow; zscore: z beyond -entry or +entry;
// breakout: close beyond the entry channel; rsi: RSI beyond lower or
// upper).
func TestSignalSeriesDecides(t *testing.T) {
	bars := btcBars(t)
	in := NewInputs[float64](bars, engine.SourceClose)
	n := bars.Len()
	cases := []struct {
		family string
		params map[string]string
		lines  int
	}{
		{"cross", map[string]string{"fast": "ema:12", "slow": "sma:100"}, 2},
		{"zscore", map[string]string{"length": "20", "entry": "2", "exit": "0"}, 1},
		{"breakout", map[string]string{"entry": "20", "exit": "10"}, 5},
		{"rsi", map[string]string{"length": "14", "lower": "30", "upper": "70"}, 1},
		{"hull", map[string]string{"hma": "50", "hma3": "60"}, 2},
	}
	for _, tc := range cases {
		g, err := NewGrid(tc.family, tc.params, false)
		if err != nil {
			t.Fatal(err)
		}
		c := g.At(0)
		sig, err := SignalSeries(g, c, in, Direct)
		if err != nil {
			t.Fatalf("%s: %v", g, err)
		}
		if len(sig.Lines) != tc.lines {
			t.Fatalf("%s: %d lines, want %d", g, len(sig.Lines), tc.lines)
		}
		for _, l := range sig.Lines {
			if len(l.Values) != n {
				t.Fatalf("%s: line %q has %d values, want %d", g, l.Name, len(l.Values), n)
			}
		}
		pos := make([]State, n)
		if _, err := Evaluate(g, c, in, Direct, pos, nil); err != nil {
			t.Fatal(err)
		}
		checked := 0
		for i := 1; i < n; i++ {
			if pos[i] == pos[i-1] || pos[i] == 0 {
				continue
			}
			up := pos[i] > 0
			var ok bool
			switch tc.family {
			case "cross":
				ok = (sig.Lines[0].Values[i] > sig.Lines[1].Values[i]) == up
			case "hull":
				ok = (sig.Lines[0].Values[i] > sig.Lines[1].Values[i]) == up
			case "zscore":
				z := sig.Lines[0].Values[i]
				ok = up && z < sig.Levels[1].Value || !up && z > sig.Levels[0].Value
			case "breakout":
				cl := sig.Lines[0].Values[i]
				ok = up && cl > sig.Lines[1].Values[i] || !up && cl < sig.Lines[2].Values[i]
			case "rsi":
				r := sig.Lines[0].Values[i]
				ok = up && r < sig.Levels[0].Value || !up && r > sig.Levels[1].Value
			}
			if !ok {
				t.Fatalf("%s bar %d: entered %+d, but the signal's lines say otherwise (%v)", g, i, pos[i], valuesAt(sig, i))
			}
			checked++
		}
		if checked < 100 {
			t.Errorf("%s: only %d entries to check", g, checked)
		}
		t.Logf("%s: %d entries checked", g, checked)
	}
}

func valuesAt(s Signal, i int) map[string]float64 {
	m := map[string]float64{}
	for _, l := range s.Lines {
		m[l.Name] = l.Values[i]
	}
	for _, l := range s.Levels {
		m[l.Name] = l.Value
	}
	if len(m) == 0 {
		m["none"] = math.NaN()
	}
	return m
}
