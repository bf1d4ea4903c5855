// Package kernels is the GPU twin of package reference: sweep_common.h,
// the C header every GPU kernel includes (the WMA window, the per-bar state
// machine of reference.Backtest, the drawdown stitching and the exact
// selection), and the Go the CPU and the GPU backends share around it: the
// host's input series (SourceSeries, BarReturns: series.go), the exact
// selection (Select: select.go, sb_select's twin), the one definition of
// each metric from a backtest's accumulators (Accumulators, Finish:
// accumulators.go), the layout of a launch's raw outputs and their
// finishing (finish.go), the VaR histogram's bins (bins.go), the warm-up
// tables (warmups.go) and launch sizing (layout.go). The .cu and .metal
// kernels that include the header, and the drivers, stay in cuda/ and
// metal/. It imports engine only: reference, cuda and metal import it, so
// the GPU backends share with the CPU through here and engine, never
// through reference itself.
//
// The header is embedded (SweepCommon) so that Metal can compile it at run
// time (newLibraryWithSource has no include path); nvcc finds it with
// -Ireference/kernels (scripts/cuda-build.sh). Its bytes are part of the
// hash the embedded PTX is checked against (cuda.SourcesHash).
package kernels

import _ "embed"

// SweepCommon is sweep_common.h, byte for byte.
//
//go:embed sweep_common.h
var SweepCommon string

// SweepCommonName is the header's file name, as the .cu and .metal
// kernels #include it.
const SweepCommonName = "sweep_common.h"

// SweepCommonPath is where the header lives in the repository, for
// messages (the Metal source's #line directives).
const SweepCommonPath = "reference/kernels/" + SweepCommonName
