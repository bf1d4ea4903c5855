// Package metal is the Apple Metal backend (fp32 only: Apple GPUs have no
// fp64). The kernels are not ported yet: on every system the backend
// reports itself unavailable with the reason, so `--backend metal` fails
// plainly and `auto` never picks it.
package metal

import (
	"context"
	"errors"
	"runtime"

	"sweepbench/engine"
)

// Backend is the Metal backend.
type Backend struct{}

// New returns the Metal backend.
func New() *Backend { return &Backend{} }

func (b *Backend) Name() string { return "metal" }

// Available says why Metal cannot run here.
func (b *Backend) Available() error {
	if runtime.GOOS != "darwin" {
		return errors.New("Metal is available on macOS only")
	}
	return errors.New("the Metal kernels are not built yet (see issue: Metal backend); use --backend reference")
}

// Devices lists none.
func (b *Backend) Devices() ([]engine.Device, error) { return nil, b.Available() }

// Prepare always fails with the reason from Available.
func (b *Backend) Prepare(context.Context, *engine.Job) (engine.Kernel, error) {
	return nil, b.Available()
}
