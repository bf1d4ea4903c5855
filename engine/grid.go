package engine

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Range is an inclusive integer range start:stop:step (SPEC "Input").
type Range struct {
	Start, Stop, Step int
}

// ParseRange parses "start:stop:step", "start:stop" (step 1) or a single
// length. name is the Spec field it belongs to (FieldHMA, FieldHMA3; a
// leading "--" is dropped); errors are *FieldError naming it.
func ParseRange(name, s string) (Range, error) {
	name = strings.TrimPrefix(name, "--")
	parts := strings.Split(strings.TrimSpace(s), ":")
	if len(parts) > 3 || s == "" {
		return Range{}, fieldErr(name, s, "want start:stop:step, e.g. 20:200:20")
	}
	var v [3]int
	v[2] = 1
	for i, p := range parts {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil {
			return Range{}, fieldErr(name, s, "%q is not an integer (want start:stop:step, e.g. 20:200:20; start:stop means step 1)", p)
		}
		v[i] = n
	}
	if len(parts) == 1 {
		v[1] = v[0]
	}
	r := Range{v[0], v[1], v[2]}
	if r.Step <= 0 {
		return Range{}, fieldErr(name, s, "step %d must be positive", r.Step)
	}
	if r.Stop < r.Start {
		return Range{}, fieldErr(name, s, "empty range (stop %d < start %d; write start:stop:step, e.g. %d:%d:%d)", r.Stop, r.Start, r.Stop, r.Start, r.Step)
	}
	return r, nil
}

// Len is the number of values in the range.
func (r Range) Len() int {
	if r.Step <= 0 || r.Stop < r.Start {
		return 0
	}
	return (r.Stop-r.Start)/r.Step + 1
}

// At returns the i-th value, 0 <= i < Len().
func (r Range) At(i int) int { return r.Start + i*r.Step }

// Values expands the range (its length is the range's, not the grid's).
func (r Range) Values() []int {
	out := make([]int, r.Len())
	for i := range out {
		out[i] = r.At(i)
	}
	return out
}

// Last is the largest value in the range.
func (r Range) Last() int { return r.At(r.Len() - 1) }

func (r Range) String() string { return fmt.Sprintf("%d:%d:%d", r.Start, r.Stop, r.Step) }

// Combo is one (Lh, L3) pair of the grid.
//
// A combo of a strategy grid (Grid.Strategy) has HMA and HMA3 0; its
// parameters are Grid.Point(index).
type Combo struct {
	HMA  int // Lh, the HMA length in bars
	HMA3 int // L3, the HMA3 length in bars
}

// Grid is the Cartesian product HMA x HMA3, expanded lazily: combo i is
// (HMA.At(i / HMA3.Len()), HMA3.At(i % HMA3.Len())), HMA-major.
//
// When Strategy is set the grid is that family's (engine/strategy.go):
// HMA and HMA3 are empty, Len is the strategy's, At gives the zero Combo
// and Point the combo's parameters.
type Grid struct {
	HMA, HMA3 Range
	Strategy  Strategy
}

// Len is the number of combos.
func (g Grid) Len() int {
	if g.Strategy != nil {
		return g.Strategy.Len()
	}
	return g.HMA.Len() * g.HMA3.Len()
}

// At returns combo i without materialising the grid (the zero Combo for a
// strategy grid: its parameters are Point(i)).
func (g Grid) At(i int) Combo {
	if g.Strategy != nil {
		return Combo{}
	}
	n3 := g.HMA3.Len()
	return Combo{HMA: g.HMA.At(i / n3), HMA3: g.HMA3.At(i % n3)}
}

// Index returns the combo index of the cell (row, col) = (HMA index, HMA3 index).
func (g Grid) Index(row, col int) int { return row*g.HMA3.Len() + col }

// MaxCombos bounds a grid so that index arithmetic and progress stay sane.
const MaxCombos = 1 << 40

// Validate checks minimum lengths (HMA >= 2, HMA3 >= 6, SPEC "Indicators")
// and, when n > 0, that the longest combo fits in n bars (SPEC "How many bars
// are enough"). Errors name the parameter, the combo and the counts.
func (g Grid) Validate(n int) error {
	if g.Strategy != nil {
		if need := g.Strategy.BarsNeeded(); n > 0 && n < need {
			return fmt.Errorf("grid %s: its longest combo needs %d bars (warm-up %d + 2), the data has %d: lower the longest lengths, or use more bars (a longer file, a larger --head, a finer or no --timeframe)",
				g.Strategy, need, need-2, n)
		}
		return nil
	}
	if err := errors.Join(g.HMA.validate(FieldHMA), g.HMA3.validate(FieldHMA3)); err != nil {
		return err
	}
	if float64(g.HMA.Len())*float64(g.HMA3.Len()) > MaxCombos {
		return fmt.Errorf("grid %s x %s: %.3g combos is more than %d", g.HMA, g.HMA3, float64(g.HMA.Len())*float64(g.HMA3.Len()), int64(MaxCombos))
	}
	if n > 0 {
		c := Combo{HMA: g.HMA.Last(), HMA3: g.HMA3.Last()}
		need := BarsNeeded(c)
		if n < need {
			return fmt.Errorf("grid %s x %s: combo (hma %d, hma3 %d) needs %d bars (warm-up %d + 2), the data has %d: lower the longest lengths, or use more bars (a longer file, a larger --head, a finer or no --timeframe)",
				g.HMA, g.HMA3, c.HMA, c.HMA3, need, need-2, n)
		}
	}
	return nil
}

// validate checks that the range of field (FieldHMA or FieldHMA3) is not
// empty and starts at or above the field's minimum length.
func (r Range) validate(field string) error {
	minLen, why := MinHMA, "HMA needs floor(L/2) >= 1"
	if field == FieldHMA3 {
		minLen, why = MinHMA3, "HMA3 needs floor(floor(L/2)/3) >= 1"
	}
	switch {
	case r.Step <= 0 || r.Stop < r.Start:
		return fieldErr(field, r.String(), "empty range")
	case r.Start < minLen:
		return fieldErr(field, r.String(), "length %d is below the minimum %d (%s)", r.Start, minLen, why)
	case r.Stop > MaxLength:
		return fieldErr(field, r.String(), "length %d is above the maximum %d (a length is a number of bars)", r.Stop, MaxLength)
	}
	return nil
}

// Text names the grid as reports do: "hma 20:200:20 x hma3 30:240:30", or
// the strategy grid's own text ("fast ema:5:50:5 x slow sma:20:200:10").
func (g Grid) Text() string {
	if g.Strategy != nil {
		return g.Strategy.String()
	}
	return fmt.Sprintf("hma %s x hma3 %s", g.HMA, g.HMA3)
}

// MaxLength bounds an HMA or HMA3 length (about a billion bars, more than
// any dataset holds), so that warm-up arithmetic (L + sqrt(L), 2 x L/2)
// cannot overflow, in int64 here or in the GPU kernels' 32-bit ints.
const MaxLength = 1 << 30

// BarsNeeded is max(W, W3) + 2 for the combo (SPEC "How many bars are enough").
func BarsNeeded(c Combo) int {
	return max(HMAWarmup(c.HMA), HMA3Warmup(c.HMA3)) + 2
}
