package robust

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
)

// naiveDevice is engine.PBODevice on the CPU, as kernels/robust.cu computes it:
// per set, every combo's union sums (the lower half of the blocks then the
// upper, each ascending from 0), its sharpeFrac key, the best by
// cross-multiplication (ties to the lowest combo); then per set the keys
// below and equal to the chosen one's. It is the kernel's specification in
// Go, and what the GPU test compares with.
type naiveDevice struct{ calls int }

func (d *naiveDevice) PBOSharpe(_ context.Context, sum, sq []float64, n, s int, bars []float64, sets []uint64, comp []int32) (sel, less, equal []int32, err error) {
	d.calls++
	union := func(m uint64, c int) (float64, float64, float64) {
		var s0, q0, n0, s1, q1, n1 float64
		for b := 0; b < s; b++ {
			if m&(1<<uint(b)) == 0 {
				continue
			}
			if b < s/2 {
				s0, q0, n0 = s0+sum[b*n+c], q0+sq[b*n+c], n0+bars[b]
			} else {
				s1, q1, n1 = s1+sum[b*n+c], q1+sq[b*n+c], n1+bars[b]
			}
		}
		return s0 + s1, q0 + q1, n0 + n1
	}
	key := func(m uint64, c int) (float64, float64) { return sharpeFrac(union(m, c)) }
	sel, less, equal = make([]int32, len(sets)), make([]int32, len(sets)), make([]int32, len(sets))
	for k, m := range sets {
		bn, bd, bc := 0.0, 1.0, -1
		for c := 0; c < n; c++ {
			num, d := key(m, c)
			if x, y := float64(num*bd), float64(bn*d); bc < 0 || x > y {
				bn, bd, bc = num, d, c
			}
		}
		sel[k] = int32(bc)
	}
	for k, m := range sets {
		ns, ds := key(m, int(sel[comp[k]]))
		for c := 0; c < n; c++ {
			num, d := key(m, c)
			x, y := float64(num*ds), float64(ns*d)
			if x < y {
				less[k]++
			} else if x == y {
				equal[k]++
			}
		}
	}
	return sel, less, equal, nil
}

// TestPBODevicePasses: PBO with its passes on a device (the naive one,
// the CUDA kernels' specification) equals the CPU passes field for field,
// maximised and minimised, on noise and with a planted edge: the same
// chosen combos, ranks, logits and PBO.
func TestPBODevicePasses(t *testing.T) {
	const n, s, per = 80, 12, 50
	bounds, _ := EqualBounds(s*per, s)
	for _, edge := range []float64{0, 0.3} {
		rng := rand.New(rand.NewPCG(uint64(100*edge)+1, 7))
		mu := make([]float64, n)
		for _, c := range []int{3, 4, 5} {
			mu[c] = edge * 0.01 // the planted edge: combos 3..5
		}
		rs := randomReturns(rng, n, s*per, mu, 0.01)
		bs, err := FromReturns(rs, nil, bounds)
		if err != nil {
			t.Fatal(err)
		}
		for _, min := range []bool{false, true} {
			obj := DefaultObjective(525600)
			obj.Minimise = min
			cpu, err := PBO(context.Background(), bs, PBOOptions{Objective: obj})
			if err != nil {
				t.Fatal(err)
			}
			dev := &naiveDevice{}
			got, err := PBO(context.Background(), bs, PBOOptions{Objective: obj, Device: dev})
			if err != nil {
				t.Fatal(err)
			}
			if dev.calls != 1 {
				t.Fatalf("the device was called %d times", dev.calls)
			}
			if got.PBO != cpu.PBO || got.Slope != cpu.Slope && !(math.IsNaN(got.Slope) && math.IsNaN(cpu.Slope)) {
				t.Errorf("edge %g min %v: PBO %g slope %g, CPU %g %g", edge, min, got.PBO, got.Slope, cpu.PBO, cpu.Slope)
			}
			for k := range cpu.Selected {
				if got.Selected[k] != cpu.Selected[k] || got.Rank[k] != cpu.Rank[k] {
					t.Fatalf("edge %g min %v split %d: combo %d rank %g, CPU %d %g", edge, min, k, got.Selected[k], got.Rank[k], cpu.Selected[k], cpu.Rank[k])
				}
			}
		}
	}
}
