package cli

import (
	"context"
	"io"
	"testing"
)

// BenchmarkRunNoSave times a whole `sweepbench run --no-save` in process:
// the embedded FIL set, the default grid (80 combos), both precisions and
// the parity report, on the backend auto picks (the CPU reference on a
// machine without a GPU). docs/PERFORMANCE.md reads its CPU profile:
//
//	CGO_ENABLED=0 go test . -run '^$' -bench RunNoSave -benchtime 5x -cpuprofile cpu.out
//	go tool pprof -top -cum -focus 'data\.Open' sweepbench.test cpu.out
func BenchmarkRunNoSave(b *testing.B) {
	for b.Loop() {
		root := newRoot()
		root.SetOut(io.Discard)
		root.SetErr(io.Discard)
		root.SetArgs([]string{"run", "--no-save"})
		if err := root.ExecuteContext(context.Background()); err != nil {
			b.Fatal(phrase(err))
		}
	}
}
