#include "textflag.h"

// func scanAlikeAVX2(h3, h *float64, f3, f *float32, blocks int) int
// Scans blocks of 8 bars from the pointers on and returns the bars scanned
// before the first block holding a bar where the fp64 pair (h3, h) and the
// fp32 pair (f3, f) compare differently (h3 > h against f3 > f, h3 < h
// against f3 < f), or 8*blocks when none does. The fp32 values are widened
// to fp64 (exact), so each comparison is the one the scalar code makes;
// the predicates are ordered and quiet (GT_OQ 0x1e, LT_OQ 0x11): false on
// a NaN, as Go's > and < are.
TEXT ·scanAlikeAVX2(SB), NOSPLIT, $0-48
	MOVQ h3+0(FP), SI
	MOVQ h+8(FP), DI
	MOVQ f3+16(FP), R8
	MOVQ f+24(FP), R9
	MOVQ blocks+32(FP), CX
	XORQ AX, AX
	TESTQ CX, CX
	JZ done

loop:
	VMOVUPD (SI)(AX*8), Y0
	VMOVUPD (DI)(AX*8), Y1
	VCVTPS2PD (R8)(AX*4), Y2
	VCVTPS2PD (R9)(AX*4), Y3
	VMOVUPD 32(SI)(AX*8), Y8
	VMOVUPD 32(DI)(AX*8), Y9
	VCVTPS2PD 16(R8)(AX*4), Y10
	VCVTPS2PD 16(R9)(AX*4), Y11
	VCMPPD $0x1e, Y1, Y0, Y4   // h3 > h
	VCMPPD $0x11, Y1, Y0, Y5   // h3 < h
	VCMPPD $0x1e, Y3, Y2, Y6   // g3 > g
	VCMPPD $0x11, Y3, Y2, Y7   // g3 < g
	VCMPPD $0x1e, Y9, Y8, Y12
	VCMPPD $0x11, Y9, Y8, Y13
	VCMPPD $0x1e, Y11, Y10, Y14
	VCMPPD $0x11, Y11, Y10, Y0
	VXORPD Y4, Y6, Y6
	VXORPD Y5, Y7, Y7
	VXORPD Y12, Y14, Y14
	VXORPD Y13, Y0, Y0
	VORPD Y6, Y7, Y7
	VORPD Y14, Y0, Y0
	VORPD Y7, Y0, Y0
	VPTEST Y0, Y0
	JNZ done
	ADDQ $8, AX
	DECQ CX
	JNZ loop

done:
	VZEROUPPER
	MOVQ AX, ret+40(FP)
	RET
