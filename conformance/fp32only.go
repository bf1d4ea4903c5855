package conformance

import (
	"errors"

	"sweepbench/engine"
)

// ErrNoFP64 is FP32Only's refusal of an fp64 lane.
var ErrNoFP64 = errors.New("no fp64 here")

// FP32Only wraps b as a backend without fp64, as Metal is: named
// "fp32only", it refuses fp64 (engine.PrecisionSupport) and computes fp32
// on b. A study on it runs its fp64 lane on the fallback.
func FP32Only(b engine.Backend) engine.Backend { return fp32Only{b} }

type fp32Only struct{ engine.Backend }

var _ engine.PrecisionSupport = fp32Only{}

func (fp32Only) Name() string { return "fp32only" }

func (fp32Only) Supports(p engine.Precision) error {
	if p != engine.FP32 {
		return ErrNoFP64
	}
	return nil
}
