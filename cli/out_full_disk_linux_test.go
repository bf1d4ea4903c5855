package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestOutStreamFullDisk: a row format streamed to a file on a disk that
// fills while the study runs (a 16 KiB tmpfs: root) does not claim to
// write the report to stdout (the rows went to the file, not kept): it
// says what was lost and exits 1, and leaves nothing behind. With the run
// saved, it names the export that writes the rows again, which does.
func TestOutStreamFullDisk(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("a full file system: mounting a small tmpfs needs root")
	}
	xdg, dir := t.TempDir(), t.TempDir()
	small := filepath.Join(dir, "small")
	os.Mkdir(small, 0o755)
	if err := syscall.Mount("tmpfs", small, "tmpfs", 0, "size=16k"); err != nil {
		t.Skipf("mount tmpfs: %v", err)
	}
	defer syscall.Unmount(small, 0)
	grid := []string{"run", "--hma", "10:30", "--hma3", "12:30", "--backend", "reference", "-q"}
	out := filepath.Join(small, "r.csv")
	for _, format := range []string{"csv", "jsonl", "parquet"} {
		r := cli(t, xdg, append(grid, "--no-save", "--format", format, "--out", out)...)
		if r.code != 1 || strings.Contains(r.stderr, "writing to stdout instead") || r.stdout != "" ||
			!strings.Contains(r.stderr, "--out "+out+": no space left on device") || !strings.Contains(r.stderr, "rows") || !strings.Contains(r.stderr, "lost") ||
			strings.Contains(r.stderr, small+"/.") /* a temporary file */ {
			t.Errorf("%s to a full disk, --no-save: exit %d, %d bytes on stdout, stderr %q; want exit 1 saying what was lost", format, r.code, len(r.stdout), r.stderr)
		}
		leftovers(t, small)
	}
	full := cli(t, xdg, append(grid, "--no-save", "--format", "csv")...)
	db := filepath.Join(dir, "s.db")
	r := cli(t, xdg, append(grid, "--db", db, "--format", "csv", "--out", out)...)
	hint := "sweepbench sessions export 1 --db " + db + " --format csv --out " + out
	if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, hint) {
		t.Errorf("saved, to a full disk: exit %d, stderr %q; want exit 1 naming %q", r.code, r.stderr, hint)
	}
	again := filepath.Join(dir, "again.csv")
	if e := cli(t, xdg, "sessions", "export", "1", "--db", db, "--format", "csv", "--out", again); e.code != 0 {
		t.Fatalf("the export named: %+v", e)
	}
	if b, _ := os.ReadFile(again); string(b) != full.stdout || len(b) < 16<<10 {
		t.Errorf("the export named wrote %d bytes, the run %d", len(b), len(full.stdout))
	}
}
