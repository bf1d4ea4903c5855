package strategy

import "fmt"

// Divergence is one divergence of SPEC Part 2 "Parity for families with
// memory": a maximal run of consecutive bars over which the fp32 and fp64
// positions (after the mode) differ. Root is its first bar (an index into
// the bars), Bars its length in bars, Margin the fp64 run's margin at the
// root (a fraction: of close, or of the RSI scale for `rsi`), Borderline
// whether Margin < the tolerance (a NaN margin is not borderline).
type Divergence struct {
	Root, Bars int
	Margin     float64
	Borderline bool
}

// Divergences lists, in bar order, the divergences of p32 against p64
// (positions after the mode, len n each) with margin64 (len n, the fp64
// run's margins, as the families write them) and the borderline tolerance
// tol (a fraction, e.g. 1e-5).
//
// The root's margin is read from the fp64 run alone: SPEC takes the
// smaller of the two precisions' margins at the root, both on the fp64
// series, and at a root the two machines leave the same state, so they
// evaluate the same comparisons and the two margins are one. (In
// long-only, -1 and 0 both show as 0, so the machines' states may already
// differ before a root; the fp64 margin is then the fp64 machine's.)
//
// It panics when the three slices differ in length (a caller's defect).
func Divergences(p64, p32 []State, margin64 []float64, tol float64) []Divergence {
	n := len(p64)
	if len(p32) != n || len(margin64) != n {
		panic(fmt.Sprintf("strategy.Divergences: p64 %d, p32 %d, margin64 %d bars: want one length", n, len(p32), len(margin64)))
	}
	var ds []Divergence
	for i := 0; i < n; {
		if p64[i] == p32[i] {
			i++
			continue
		}
		j := i + 1
		for j < n && p64[j] != p32[j] {
			j++
		}
		m := margin64[i]
		ds = append(ds, Divergence{Root: i, Bars: j - i, Margin: m, Borderline: m < tol})
		i = j
	}
	return ds
}

// ComboParity is one combo's parity by divergences (SPEC Part 2 "Parity
// for families with memory", the verdict; the indicator-error limit is
// judged elsewhere).
//
// FlipBars is the number of bars whose positions differ (the sum of the
// divergences' Bars: flip counts still count bars), Divergences their
// number, NonBorderline the number not borderline. Collapsed: some
// divergence is non-borderline (a defect of the method). Sensitive: there
// are divergences and all are borderline. Worst is the longest
// non-borderline divergence if there is one, else the longest borderline
// one (the earliest among equally long ones), nil without divergences; it
// is a copy, not a pointer into the slice judged.
type ComboParity struct {
	FlipBars, Divergences, NonBorderline int
	Collapsed, Sensitive                 bool
	Worst                                *Divergence
}

// JudgeCombo summarises ds (one combo's divergences, as Divergences
// returns them) into its ComboParity.
func JudgeCombo(ds []Divergence) ComboParity {
	var cp ComboParity
	worst := -1
	for k, d := range ds {
		cp.FlipBars += d.Bars
		if !d.Borderline {
			cp.NonBorderline++
		}
		if worst < 0 {
			worst = k
			continue
		}
		w := ds[worst]
		if (!d.Borderline && w.Borderline) || (d.Borderline == w.Borderline && d.Bars > w.Bars) {
			worst = k
		}
	}
	cp.Divergences = len(ds)
	cp.Collapsed = cp.NonBorderline > 0
	cp.Sensitive = len(ds) > 0 && cp.NonBorderline == 0
	if worst >= 0 {
		w := ds[worst]
		cp.Worst = &w
	}
	return cp
}
