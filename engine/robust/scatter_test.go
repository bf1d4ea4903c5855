package robust

import (
	"math"
	"testing"
)

// TestScatterOf: a Summary's IS/OOS sample is every Every-th split, at
// most MaxScatterPoints, skipping the non-finite ones.
func TestScatterOf(t *testing.T) {
	n := 2*MaxScatterPoints + 1
	p := &PBOResult{IS: make([]float64, n), OOS: make([]float64, n)}
	for i := range p.IS {
		p.IS[i], p.OOS[i] = float64(i), -float64(i)
	}
	p.OOS[3] = math.NaN() // split 3 is every third's: skipped
	sc := scatterOf(p)
	if sc.Every != 3 {
		t.Fatalf("every %d, want 3 (ceil(%d/%d))", sc.Every, n, MaxScatterPoints)
	}
	if len(sc.IS) != 667-1 || sc.IS[0] != 0 || sc.IS[1] != 6 || sc.OOS[1] != -6 {
		t.Errorf("%d points, first %v %v", len(sc.IS), sc.IS[:2], sc.OOS[:2])
	}
	if scatterOf(&PBOResult{}) != nil {
		t.Error("no splits: want nil")
	}
}
