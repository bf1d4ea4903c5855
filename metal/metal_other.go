//go:build !darwin

package metal

import (
	"context"

	"sweepbench/engine"
)

// Backend is the Metal backend; off macOS it is never available.
type Backend struct{}

// Available says why Metal cannot run here: ErrNotMacOS.
func (b *Backend) Available() error { return ErrNotMacOS }

// Devices lists none, with the reason.
func (b *Backend) Devices() ([]engine.Device, error) { return nil, ErrNotMacOS }

// Prepare always fails with the reason from Available.
func (b *Backend) Prepare(context.Context, *engine.Job) (engine.Kernel, error) {
	return nil, ErrNotMacOS
}
