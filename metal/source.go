package metal

import (
	_ "embed"
	"fmt"
	"strings"

	"sweepbench/reference/kernels"
)

// The Metal kernels, embedded. newLibraryWithSource:options:error: takes
// one string and has no include path, so Source assembles it.
var (
	//go:embed kernels/prelude.metal
	preludeMSL string
	//go:embed kernels/indicators.metal
	indicatorsMSL string
	//go:embed kernels/sweep.metal
	sweepMSL string
	//go:embed kernels/f64.metal
	f64MSL string
	//go:embed kernels/blocks.metal
	blocksMSL string
)

// kernelFiles are the .metal kernels in the order Source concatenates them.
var kernelFiles = []struct{ name, text string }{
	{"indicators.metal", indicatorsMSL},
	{"sweep.metal", sweepMSL},
	{"f64.metal", f64MSL},
	{"blocks.metal", blocksMSL},
}

// Kernel function names the backend builds pipelines for.
const (
	fnHMAStage1  = "hma_stage1_f32"
	fnHMA3Stage1 = "hma3_stage1_f32"
	fnPrefixScan = "prefix_scan_f32"
	fnWMASeries  = "wma_series_f32"
	fnSweep      = "sweep_f32"
	fnBlockStats = "block_stats_f32"
)

var kernelFunctions = []string{fnHMAStage1, fnHMA3Stage1, fnPrefixScan, fnWMASeries, fnSweep, fnBlockStats}

// Source returns the one Metal Shading Language string the backend
// compiles: the prelude (metal/kernels/prelude.metal: the Metal standard
// library, the thread-index macros), then the shared header
// reference/kernels/sweep_common.h byte for byte (the state machine,
// stitching and metrics CUDA compiles too), then each .metal
// kernel with its `#include "sweep_common.h"` line turned into a comment.
// Each part is preceded by a #line directive so that compiler messages
// name the original file and line. An #include of anything else is an
// error: the Metal compiler could not resolve it.
func Source() (string, error) {
	return assemble(preludeMSL, kernels.SweepCommon, kernelFiles)
}

func assemble(prelude, header string, files []struct{ name, text string }) (string, error) {
	var sb strings.Builder
	part := func(name, text string) {
		fmt.Fprintf(&sb, "#line 1 %q\n", name)
		sb.WriteString(text)
		if !strings.HasSuffix(text, "\n") {
			sb.WriteByte('\n')
		}
	}
	part("metal/kernels/prelude.metal", prelude)
	for i, l := range strings.SplitAfter(header, "\n") {
		if isInclude(l) {
			return "", fmt.Errorf("%s:%d: %s: the Metal source is one string without an include path; inline it", kernels.SweepCommonPath, i+1, strings.TrimSpace(l))
		}
	}
	part(kernels.SweepCommonPath, header)
	for _, f := range files {
		lines := strings.SplitAfter(f.text, "\n")
		for i, l := range lines {
			if !isInclude(l) {
				continue
			}
			t := strings.TrimSpace(l)
			if strings.Contains(t, `"`+kernels.SweepCommonName+`"`) {
				// Keep the line count: the #line directive stays right.
				lines[i] = "// (inlined above) " + l
				continue
			}
			return "", fmt.Errorf("metal/kernels/%s:%d: %s: only %q can be included (Source inlines it)", f.name, i+1, t, kernels.SweepCommonName)
		}
		part("metal/kernels/"+f.name, strings.Join(lines, ""))
	}
	return sb.String(), nil
}

// isInclude reports whether line is an #include directive (spaces allowed
// around the #, as the preprocessor allows them).
func isInclude(line string) bool {
	t := strings.TrimSpace(line)
	if !strings.HasPrefix(t, "#") {
		return false
	}
	return strings.HasPrefix(strings.TrimSpace(t[1:]), "include")
}
