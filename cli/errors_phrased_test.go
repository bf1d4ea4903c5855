package cli

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"sweepbench/engine"
	"sweepbench/sessions"
)

// TestDigestErrorPhrased: a run refused by its digest names the session
// and the run, and the command says what can be done about it.
func TestDigestErrorPhrased(t *testing.T) {
	err := fmt.Errorf("export: %w", &sessions.DigestError{ID: 7, Precision: engine.FP32, Rows: 60})
	msg := phrase(err)
	for _, want := range []string{"session 7, run 7:fp32", "sweepbench sessions rm 7"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q lacks %q", msg, want)
		}
	}
}

// TestBatchErrorPhrased: a run refused for a damaged batch names the
// session, the run and the batch, and the command says what can be done.
func TestBatchErrorPhrased(t *testing.T) {
	err := fmt.Errorf("show: %w", &sessions.BatchError{ID: 7, Precision: engine.FP64, First: 512, Rows: 512, Err: errors.New("it ends early")})
	msg := phrase(err)
	for _, want := range []string{"session 7, run 7:fp64", "from combo 512", "it ends early", "sweepbench sessions rm 7"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q lacks %q", msg, want)
		}
	}
}
