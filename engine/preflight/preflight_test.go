package preflight

import (
	"testing"
	"time"
)

// TestLongDuration: from two days up in whole days, from an hour up to the
// minute, else as the estimate.
func TestLongDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		1220 * time.Hour:              "51 days",
		48 * time.Hour:                "2 days",
		47*time.Hour + 30*time.Minute: "47h30m0s",
		9 * time.Minute:               "9m0s",
	} {
		if got := longDuration(d); got != want {
			t.Errorf("longDuration(%v) = %q, want %q", d, got, want)
		}
	}
}
