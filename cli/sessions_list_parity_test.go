package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestSessionsListParity: `sessions ls` says each study's parity verdict:
// pass for the direct sum, collapse for the prefix-sum trap in fp32, "-"
// for a study of one precision (no parity report).
func TestSessionsListParity(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	grid := []string{"--db", db, "--hma", "10:50:20", "--hma3", "12:60:24", "--head", "20000"}
	for _, extra := range [][]string{nil, {"--wma", "prefix"}, {"--precision", "fp32"}} {
		if _, _, err := execute(t, append(append([]string{"run"}, grid...), extra...)...); err != "" {
			t.Fatalf("run %v: %s", extra, err)
		}
	}
	list, _, err := execute(t, "sessions", "ls", "--db", db)
	if err != "" {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(list), "\n")
	col := strings.Index(lines[0], "PARITY")
	if len(lines) != 4 || col < 0 {
		t.Fatalf("sessions ls:\n%s\nwant a header with PARITY and 3 sessions", list)
	}
	for i, want := range []string{"-", "collapse", "pass"} { // newest first
		if got := strings.Fields(lines[i+1][col:])[0]; got != want {
			t.Errorf("session %d: parity %q, want %q\n%s", 3-i, got, want, list)
		}
	}
}
