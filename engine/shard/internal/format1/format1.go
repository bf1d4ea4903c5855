// Package engine (import path sweepbench/engine/shard/internal/format1)
// holds the parity types of shard file format 1 as they were before the
// strategy families, for package shard to write a hull study's parts in
// that layout byte for byte (shardwire.go). gob spells a slice of structs
// by its Go type, package name included ("[]engine.ComboParity"), and a
// struct by its name alone: these types are named as the engine's were, in
// a package named engine, with the fields they had.
package engine

import eng "sweepbench/engine"

// ComboParity is engine.ComboParity without the fields added since (Name).
type ComboParity struct {
	Index int
	eng.Combo
	Trades64        int
	Trades32        int
	Dn              int
	RelDn           float64
	DPnLpp          float64
	RelDPnL         float64
	Flips           int
	NonBorderline   int
	MaxFlipMargin   float64
	DnLimitBreached bool
}

// Flip is engine.Flip without the fields added since (Name, Bars, Trades,
// DPnLpp).
type Flip struct {
	Index int
	eng.Combo
	Bar        int
	Time       int64
	Pos64      int8
	Pos32      int8
	Margin     float64
	Borderline bool
}

// Parity is engine.Parity without the fields added since (Sensitive,
// SensitiveWorst).
type Parity struct {
	Verdict              eng.Verdict
	Reasons              []string
	Explanation          string
	Tolerance            float64
	Incomplete           bool
	CombosCompared       int
	TotalTrades64        int
	TotalTrades32        int
	ShiftedTrades        int
	ShiftedShare         float64
	MaxAbsDn             int
	MaxRelDn             float64
	MaxAbsDPnLpp         float64
	MaxRelDPnL           float64
	CombosDiffering      int
	FlipCount            int
	NonBorderlineFlips   int
	MaxRelIndicatorError float64
	IndicatorErrors      []eng.SeriesError
	Combos               []ComboParity
	Flips                []Flip
	Device               string
}

// Of is p in format 1's types.
func Of(p *eng.Parity) *Parity {
	q := &Parity{Verdict: p.Verdict, Reasons: p.Reasons, Explanation: p.Explanation, Tolerance: p.Tolerance, Incomplete: p.Incomplete,
		CombosCompared: p.CombosCompared, TotalTrades64: p.TotalTrades64, TotalTrades32: p.TotalTrades32, ShiftedTrades: p.ShiftedTrades,
		ShiftedShare: p.ShiftedShare, MaxAbsDn: p.MaxAbsDn, MaxRelDn: p.MaxRelDn, MaxAbsDPnLpp: p.MaxAbsDPnLpp, MaxRelDPnL: p.MaxRelDPnL,
		CombosDiffering: p.CombosDiffering, FlipCount: p.FlipCount, NonBorderlineFlips: p.NonBorderlineFlips,
		MaxRelIndicatorError: p.MaxRelIndicatorError, IndicatorErrors: p.IndicatorErrors, Device: p.Device}
	for _, c := range p.Combos {
		q.Combos = append(q.Combos, ComboParity{c.Index, c.Combo, c.Trades64, c.Trades32, c.Dn, c.RelDn, c.DPnLpp, c.RelDPnL,
			c.Flips, c.NonBorderline, c.MaxFlipMargin, c.DnLimitBreached})
	}
	for _, f := range p.Flips {
		q.Flips = append(q.Flips, Flip{f.Index, f.Combo, f.Bar, f.Time, f.Pos64, f.Pos32, f.Margin, f.Borderline})
	}
	return q
}
