#include "textflag.h"

// AVX2 direct WMA blocks. Bit-identical to the scalar loop in wma.go:
// every product k*x is rounded (VMULPD/VMULPS, no FMA), added to its
// output's accumulator oldest bar first (VADDPD/VADDPS), and the sum divided
// by den (VDIVPD/VDIVPS), all IEEE round-to-nearest like the scalar SSE
// code. Lanes are outputs: eight accumulators of 4 (fp64) or 8 (fp32)
// consecutive outputs each, so the eight add chains hide the add latency.
// Y15 is not touched (Go's ABIInternal keeps zero there).

// func wmaBlocksF64(w *float64, p int, den float64, out *float64, blocks int)
// w points at x[i-p+1], the window start of output i; each block writes
// out[i .. i+32).
TEXT ·wmaBlocksF64(SB), NOSPLIT, $0-40
	MOVQ w+0(FP), SI
	MOVQ p+8(FP), CX
	VBROADCASTSD den+16(FP), Y14
	MOVQ out+24(FP), DI
	MOVQ blocks+32(FP), DX
	MOVQ $0x3ff0000000000000, AX
	MOVQ AX, X9
	VBROADCASTSD X9, Y9

block64:
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	VXORPD Y8, Y8, Y8
	MOVQ SI, R8
	MOVQ CX, BX

k64:
	VADDPD Y9, Y8, Y8
	VMULPD 0(R8), Y8, Y10
	VADDPD Y10, Y0, Y0
	VMULPD 32(R8), Y8, Y11
	VADDPD Y11, Y1, Y1
	VMULPD 64(R8), Y8, Y12
	VADDPD Y12, Y2, Y2
	VMULPD 96(R8), Y8, Y13
	VADDPD Y13, Y3, Y3
	VMULPD 128(R8), Y8, Y10
	VADDPD Y10, Y4, Y4
	VMULPD 160(R8), Y8, Y11
	VADDPD Y11, Y5, Y5
	VMULPD 192(R8), Y8, Y12
	VADDPD Y12, Y6, Y6
	VMULPD 224(R8), Y8, Y13
	VADDPD Y13, Y7, Y7
	ADDQ $8, R8
	DECQ BX
	JNZ k64

	VDIVPD Y14, Y0, Y0
	VDIVPD Y14, Y1, Y1
	VDIVPD Y14, Y2, Y2
	VDIVPD Y14, Y3, Y3
	VDIVPD Y14, Y4, Y4
	VDIVPD Y14, Y5, Y5
	VDIVPD Y14, Y6, Y6
	VDIVPD Y14, Y7, Y7
	VMOVUPD Y0, 0(DI)
	VMOVUPD Y1, 32(DI)
	VMOVUPD Y2, 64(DI)
	VMOVUPD Y3, 96(DI)
	VMOVUPD Y4, 128(DI)
	VMOVUPD Y5, 160(DI)
	VMOVUPD Y6, 192(DI)
	VMOVUPD Y7, 224(DI)
	ADDQ $256, SI
	ADDQ $256, DI
	DECQ DX
	JNZ block64
	VZEROUPPER
	RET

// func wmaBlocksF32(w *float32, p int, den float32, out *float32, blocks int)
// Each block writes out[i .. i+64).
TEXT ·wmaBlocksF32(SB), NOSPLIT, $0-40
	MOVQ w+0(FP), SI
	MOVQ p+8(FP), CX
	VBROADCASTSS den+16(FP), Y14
	MOVQ out+24(FP), DI
	MOVQ blocks+32(FP), DX
	MOVL $0x3f800000, AX
	MOVQ AX, X9
	VBROADCASTSS X9, Y9

block32:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	MOVQ SI, R8
	MOVQ CX, BX

k32:
	VADDPS Y9, Y8, Y8
	VMULPS 0(R8), Y8, Y10
	VADDPS Y10, Y0, Y0
	VMULPS 32(R8), Y8, Y11
	VADDPS Y11, Y1, Y1
	VMULPS 64(R8), Y8, Y12
	VADDPS Y12, Y2, Y2
	VMULPS 96(R8), Y8, Y13
	VADDPS Y13, Y3, Y3
	VMULPS 128(R8), Y8, Y10
	VADDPS Y10, Y4, Y4
	VMULPS 160(R8), Y8, Y11
	VADDPS Y11, Y5, Y5
	VMULPS 192(R8), Y8, Y12
	VADDPS Y12, Y6, Y6
	VMULPS 224(R8), Y8, Y13
	VADDPS Y13, Y7, Y7
	ADDQ $4, R8
	DECQ BX
	JNZ k32

	VDIVPS Y14, Y0, Y0
	VDIVPS Y14, Y1, Y1
	VDIVPS Y14, Y2, Y2
	VDIVPS Y14, Y3, Y3
	VDIVPS Y14, Y4, Y4
	VDIVPS Y14, Y5, Y5
	VDIVPS Y14, Y6, Y6
	VDIVPS Y14, Y7, Y7
	VMOVUPS Y0, 0(DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VMOVUPS Y4, 128(DI)
	VMOVUPS Y5, 160(DI)
	VMOVUPS Y6, 192(DI)
	VMOVUPS Y7, 224(DI)
	ADDQ $256, SI
	ADDQ $256, DI
	DECQ DX
	JNZ block32
	VZEROUPPER
	RET
