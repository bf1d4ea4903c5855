package reference

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// useAVX2 selects the assembly WMA blocks and the parity scan
// (scanAlikeAVX2); tests turn it off to compare.
var useAVX2 = cpu.X86.HasAVX2

//go:noescape
func wmaBlocksF64(w *float64, p int, den float64, out *float64, blocks int)

//go:noescape
func wmaBlocksF32(w *float32, p int, den float32, out *float32, blocks int)

// wmaSIMD computes as many outputs from index i on as whole AVX2 blocks
// allow (32 fp64 or 64 fp32 outputs per block), bit-identical to the scalar
// loop, and returns how many it wrote. i >= p-1 and x is defined from i-p+1.
func wmaSIMD[F Float](x []F, p, i int, out []F, den F) int {
	if !useAVX2 || p < 1 {
		return 0
	}
	n := len(x)
	var zero F
	switch any(zero).(type) {
	case float64:
		blocks := (n - i) / 32
		if blocks == 0 {
			return 0
		}
		xs := unsafe.Slice((*float64)(unsafe.Pointer(&x[0])), n)
		os := unsafe.Slice((*float64)(unsafe.Pointer(&out[0])), n)
		wmaBlocksF64(&xs[i-p+1], p, float64(den), &os[i], blocks)
		return blocks * 32
	case float32:
		blocks := (n - i) / 64
		if blocks == 0 {
			return 0
		}
		xs := unsafe.Slice((*float32)(unsafe.Pointer(&x[0])), n)
		os := unsafe.Slice((*float32)(unsafe.Pointer(&out[0])), n)
		wmaBlocksF32(&xs[i-p+1], p, float32(den), &os[i], blocks)
		return blocks * 64
	}
	return 0
}
