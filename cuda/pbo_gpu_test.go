package cuda

import (
	"context"
	"math/rand/v2"
	"testing"

	"sweepbench/engine/robust"
)

// TestGPUPBO: PBO with its two passes on the GPU (kernels/robust.cu)
// equals the CPU's, split for split (the same chosen combos and ranks, so
// the same logits and PBO), over 12,870 splits of 16 blocks of 3,000
// combos on fresh random returns, with a planted edge in a few combos and
// without, maximised and minimised.
func TestGPUPBO(t *testing.T) {
	b := gpuBackend(t)
	const n, s, per = 3000, 16, 120
	bounds, err := robust.EqualBounds(s*per, s)
	if err != nil {
		t.Fatal(err)
	}
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	for _, edge := range []float64{0, 0.2} {
		rng := rand.New(rand.NewPCG(seed, uint64(10*edge)))
		rs := make([][]float64, n)
		for c := range rs {
			rs[c] = make([]float64, s*per)
			mu := 0.0
			if c%500 == 7 {
				mu = edge * 0.01
			}
			for i := range rs[c] {
				rs[c][i] = mu + 0.01*rng.NormFloat64()
			}
		}
		bs, err := robust.FromReturns(rs, nil, bounds)
		if err != nil {
			t.Fatal(err)
		}
		for _, min := range []bool{false, true} {
			obj := robust.DefaultObjective(525600)
			obj.Minimise = min
			cpu, err := robust.PBO(context.Background(), bs, robust.PBOOptions{Objective: obj})
			if err != nil {
				t.Fatal(err)
			}
			gpu, err := robust.PBO(context.Background(), bs, robust.PBOOptions{Objective: obj, Device: b})
			if err != nil {
				t.Fatal(err)
			}
			bad := 0
			for k := range cpu.Selected {
				if gpu.Selected[k] != cpu.Selected[k] || gpu.Rank[k] != cpu.Rank[k] {
					if bad++; bad <= 5 {
						t.Errorf("edge %g min %v split %d: GPU combo %d rank %g, CPU %d %g", edge, min, k, gpu.Selected[k], gpu.Rank[k], cpu.Selected[k], cpu.Rank[k])
					}
				}
			}
			if gpu.PBO != cpu.PBO {
				t.Errorf("edge %g min %v: PBO %g on the GPU, %g on the CPU", edge, min, gpu.PBO, cpu.PBO)
			}
			t.Logf("edge %g min %v: PBO %.4f over %d splits, %d differences", edge, min, cpu.PBO, cpu.Splits(), bad)
		}
	}
}
