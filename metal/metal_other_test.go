//go:build !darwin

package metal

import (
	"context"
	"errors"
	"testing"

	"sweepbench/engine"
)

func TestUnavailableOffMacOS(t *testing.T) {
	b := New()
	if err := b.Available(); !errors.Is(err, ErrNotMacOS) || err.Error() != "Metal is available on macOS only" {
		t.Errorf("Available = %v", err)
	}
	if _, err := b.Devices(); !errors.Is(err, ErrNotMacOS) {
		t.Errorf("Devices = %v", err)
	}
	if _, err := b.Prepare(context.Background(), &engine.Job{Precision: engine.FP32}); !errors.Is(err, ErrNotMacOS) {
		t.Errorf("Prepare = %v", err)
	}
}
