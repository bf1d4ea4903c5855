//go:build unix

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMissingDatabase: the sessions subcommands never create a database as
// a side effect. ls on a missing one is an empty list (exit 0, said on
// stderr); show, diff, export, rm and resume name the missing file.
func TestMissingDatabase(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "nothing-here.db")
	if r := cli(t, dir, "sessions", "ls", "--db", missing); r.code != 0 || r.stdout != "" ||
		!strings.Contains(r.stderr, "no sessions yet: "+missing+" does not exist") {
		t.Errorf("ls: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	for _, args := range [][]string{{"show", "1"}, {"diff", "1", "2"}, {"export", "1"}, {"rm", "1"}, {"resume", "1"}} {
		r := cli(t, dir, append(append([]string{"sessions"}, args...), "--db", missing)...)
		if r.code == 0 || !strings.Contains(r.stderr, "no sessions database at "+missing+": nothing has been saved there yet") {
			t.Errorf("%v: exit %d, stderr %q", args, r.code, r.stderr)
		}
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("a sessions command created %s (stat: %v)", missing, err)
	}
	// The default path (XDG_DATA_HOME) likewise.
	if r := cli(t, dir, "sessions", "ls"); r.code != 0 || !strings.Contains(r.stderr, "no sessions yet") {
		t.Errorf("ls on the default path: exit %d, stderr %q", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "sweepbench", "sessions.db")); !os.IsNotExist(err) {
		t.Errorf("ls created the default database (stat: %v)", err)
	}
}
