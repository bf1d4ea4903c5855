package strategy

import (
	"math"
	"testing"
)

// TestCross: first = 2; ties keep the state (bar 3 +1, bars 5 and 6 -1,
// bar 2's tie at the first bar would keep 0: see the second case), a NaN
// after first keeps it (bar 7); margins |fast-slow|/close exact in binary.
func TestCross(t *testing.T) {
	nan := math.NaN()
	fast := []float64{nan, 1, 3, 2, 1, 1, 3, nan, 5}
	slow := []float64{nan, nan, 1, 2, 2, 1, 3, 4, 6}
	close := []float64{9, 9, 4, 8, 2, 8, 8, 8, 4}
	pos := make([]State, len(fast))
	margin := make([]float64, len(fast))
	if err := Cross(fast, slow, close, 2, pos, margin); err != nil {
		t.Fatal(err)
	}
	wantPos := []State{0, 0, 1, 1, -1, -1, -1, -1, -1}
	// bar 2: |3-1|/4 = 0.5; 3: 0; 4: |1-2|/2 = 0.5; 5, 6: 0; 7: NaN; 8: 1/4.
	wantMargin := []float64{nan, nan, 0.5, 0, 0.5, 0, 0, nan, 0.25}
	for i := range fast {
		if pos[i] != wantPos[i] || !rsiNear(margin[i], wantMargin[i], 0) {
			t.Errorf("bar %d: pos %d margin %v, want %d %v", i, pos[i], margin[i], wantPos[i], wantMargin[i])
		}
	}

	// A tie at the first bar keeps 0; fp32 margins are taken in float64
	// from the float32 values: |0.1f - 0.3f| / 1 exactly.
	f32 := []float32{2, 0.1, 0.3}
	s32 := []float32{2, 0.3, 0.1}
	c32 := []float32{1, 1, 1}
	pos = make([]State, 3)
	margin = make([]float64, 3)
	if err := Cross(f32, s32, c32, 0, pos, margin); err != nil {
		t.Fatal(err)
	}
	m := math.Abs(float64(float32(0.1)) - float64(float32(0.3)))
	if pos[0] != 0 || pos[1] != -1 || pos[2] != 1 || margin[0] != 0 || margin[1] != m || margin[2] != m {
		t.Errorf("fp32: pos %v margin %v, want [0 -1 1] [0 %v %v]", pos, margin, m, m)
	}

	// first past the end: every state 0; nil margin allowed.
	pos = []State{5, 5, 5}
	if err := Cross(f32, s32, c32, 3, pos, nil); err != nil || pos[0] != 0 || pos[1] != 0 || pos[2] != 0 {
		t.Errorf("first 3: %v %v", err, pos)
	}
	if err := Cross(f32, s32, c32, -1, pos, nil); err == nil {
		t.Error("first -1: no error")
	}
	if err := Cross(f32, s32[:2], c32, 0, pos, nil); err == nil {
		t.Error("short slow: no error")
	}
	if err := Cross(f32, s32, c32, 0, pos, make([]float64, 2)); err == nil {
		t.Error("short margin: no error")
	}
}
