// Package kernels exports the text of the GPU kernel header that CUDA and
// Metal share (sweep_common.h: the WMA window, the per-bar state machine,
// the drawdown stitching and the exact selection), so that the Metal
// backend can compile the same source at run time (newLibraryWithSource
// has no include path). It holds no driver code and imports nothing.
package kernels

import _ "embed"

// SweepCommon is sweep_common.h, byte for byte.
//
//go:embed sweep_common.h
var SweepCommon string

// SweepCommonName is the header's file name, as the .cu and .metal
// kernels #include it.
const SweepCommonName = "sweep_common.h"
