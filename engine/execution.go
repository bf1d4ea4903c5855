package engine

import (
	"math"
	"strings"
)

// Fill is when a position decided at a bar's close is entered (SPEC Part 2
// "Execution options").
type Fill int

const (
	// FillClose enters at the signal bar's close (Part 1; the default).
	FillClose Fill = iota
	// FillNextOpen enters at the next bar's open: the old position is held
	// until the open, the new one from the open to the close.
	FillNextOpen
)

func (f Fill) String() string {
	if f == FillNextOpen {
		return "next-open"
	}
	return "close"
}

// ParseFill accepts close or next-open.
func ParseFill(s string) (Fill, error) {
	switch strings.ToLower(s) {
	case "close", "":
		return FillClose, nil
	case "next-open", "nextopen", "open":
		return FillNextOpen, nil
	}
	return 0, fieldErr(FieldFill, s, "want close or next-open")
}

// Keep is k = (1-f)(1-q), what one unit of position change keeps (SPEC
// Part 2 "Execution options"), in F: (1-f) rounded, times (1-q) rounded
// when q > 0. With q = 0 it is Part 1's 1-f bit for bit.
func Keep[F Float](p Params) F {
	k := F(1) - F(p.Fee)
	if p.Slippage > 0 {
		k = k * (F(1) - F(p.Slippage))
	}
	return k
}

// RiskFreePerBar is the risk-free rate per bar that Sharpe and Sortino
// subtract from every strategy return (SPEC Part 2 "New metrics"):
// (1+rf)^(1/bars_per_year) - 1 for the annual rate rf (a fraction), in
// float64; 0 for rf = 0.
func (p Params) RiskFreePerBar() float64 {
	if p.RiskFree == 0 || !(p.BarsPerYear > 0) {
		return 0
	}
	return math.Pow(1+p.RiskFree, 1/p.BarsPerYear) - 1
}

// Stops are one combo's exits (SPEC Part 2 "Execution options"), each a
// fraction of the entry price (of the trade's best price for Trail); 0 is
// no such exit. They are grid parameters (stop_loss, take_profit, trail).
type Stops struct {
	Loss, Take, Trail float64
}

// Any reports whether s has an exit.
func (s Stops) Any() bool { return s.Loss > 0 || s.Take > 0 || s.Trail > 0 }

// StopParams are the grid parameters of the stops, in Stops' order.
var StopParams = []string{"stop_loss", "take_profit", "trail"}

// Exit is why a trade ended.
type Exit int8

const (
	ExitSignal     Exit = iota // the family's state changed
	ExitStop                   // stop_loss
	ExitTakeProfit             // take_profit
	ExitTrail                  // trail
	ExitEnd                    // the last bar closed the open trade
)

var exitNames = [...]string{"signal", "stop", "take-profit", "trail", "end"}

func (e Exit) String() string {
	if int(e) < len(exitNames) && e >= 0 {
		return exitNames[e]
	}
	return "exit?"
}
