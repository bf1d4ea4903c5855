// Command sweepbench sweeps a Hull MA / HMA3 crossover strategy over a grid
// of lengths on the CPU or a GPU, in fp64 and fp32 side by side, and checks
// every fp32 result against the fp64 reference (docs/SPEC.md). The command
// line is package cli; main only runs it.
package main

import (
	"os"

	// Initialised before Bubble Tea: no command asks the terminal anything
	// (internal/earlyinit says why it must be imported here, by main).
	_ "earlyinit"

	"sweepbench/cli"
)

func main() { os.Exit(cli.Main()) }
