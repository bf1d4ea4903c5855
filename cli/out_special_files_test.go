//go:build unix

package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// outSmall is a study of four combos on the embedded data, quick on the
// CPU reference.
var outSmall = []string{"--hma", "10:20:10", "--hma3", "12:24:12", "--backend", "reference"}

func outRun(args ...string) []string {
	return append(append([]string{"run"}, outSmall...), args...)
}

// savedSession is a database in dir holding session 1 (outSmall).
func savedSession(t *testing.T, xdg, dir string) string {
	t.Helper()
	db := filepath.Join(dir, "s.db")
	if r := cli(t, xdg, outRun("-q", "--db", db)...); r.code != 0 {
		t.Fatalf("saving a session: exit %d: %s", r.code, r.stderr)
	}
	return db
}

// mode is path's type (Lstat: a link is a link).
func mode(t *testing.T, path string) fs.FileMode {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return fi.Mode().Type()
}

// leftovers fails when dir holds a file other than want (a temporary
// file left behind).
func leftovers(t *testing.T, dir string, want ...string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		found := false
		for _, w := range want {
			found = found || e.Name() == w
		}
		if !found {
			t.Errorf("%s left in %s", e.Name(), dir)
		}
	}
}

// TestOutThroughDevices: --out writes through a character device and a
// FIFO as the shell's > would, and never replaces them (a temporary file
// renamed into place is for regular files only): a null device takes
// every format and stays a device, a full device fails with ENOSPC and
// exit 1; the sessions commands that write a file do the same. A FIFO's
// reader gets the report that stdout would; a symbolic link is written
// through to its target (a new one when the link dangles) and stays a
// link; a block device is refused. Devices need root (mknod).
func TestOutThroughDevices(t *testing.T) {
	xdg, dir := t.TempDir(), t.TempDir()
	csv := cli(t, xdg, outRun("--no-save", "-q", "--format", "csv")...)
	if csv.code != 0 || !strings.HasPrefix(csv.stdout, "precision,") {
		t.Fatalf("csv to stdout: %+v", csv)
	}

	// A FIFO: its reader gets what stdout would.
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	// The test holds both ends open (O_RDWR, non-blocking): the writer's
	// open never waits and the report (a few KiB) fits the pipe's buffer,
	// read once the command is done.
	rd, err := unix.Open(fifo, unix.O_RDWR|unix.O_NONBLOCK, 0) // raw: a read returns EAGAIN when empty
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(rd)
	r := cli(t, xdg, outRun("--no-save", "--format", "csv", "--out", fifo)...)
	if r.code != 0 || !strings.Contains(r.stderr, "wrote "+fifo) {
		t.Errorf("--out FIFO: exit %d: %s", r.code, r.stderr)
	}
	var got []byte
	buf := make([]byte, 64<<10)
	for {
		n, err := unix.Read(rd, buf)
		if err != nil || n <= 0 {
			break
		}
		got = append(got, buf[:n]...)
	}
	if string(got) != csv.stdout {
		t.Errorf("the FIFO's reader got %d bytes %q, want stdout's %d", len(got), got, len(csv.stdout))
	}
	if m := mode(t, fifo); m != fs.ModeNamedPipe {
		t.Errorf("the FIFO is now %v", m)
	}

	// A symbolic link: written through, still a link.
	target := filepath.Join(dir, "target.csv")
	os.WriteFile(target, []byte("old\n"), 0o640)
	link, dangling, fresh := filepath.Join(dir, "link.csv"), filepath.Join(dir, "dangling.csv"), filepath.Join(dir, "fresh.csv")
	os.Symlink("target.csv", link)
	os.Symlink("fresh.csv", dangling)
	for _, l := range []struct{ link, target string }{{link, target}, {dangling, fresh}} {
		r := cli(t, xdg, outRun("--no-save", "--format", "csv", "--out", l.link)...)
		if r.code != 0 || !strings.Contains(r.stderr, "wrote "+l.link) {
			t.Errorf("--out %s: exit %d: %s", l.link, r.code, r.stderr)
		}
		if m := mode(t, l.link); m != fs.ModeSymlink {
			t.Errorf("%s is now %v, not a link", l.link, m)
		}
		if b, _ := os.ReadFile(l.target); string(b) != csv.stdout {
			t.Errorf("%s through %s: %q", l.target, l.link, b)
		}
	}
	if fi, _ := os.Stat(target); fi == nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("the link's target lost its mode: %v", fi)
	}
	leftovers(t, dir, "fifo", "target.csv", "link.csv", "dangling.csv", "fresh.csv")

	if os.Geteuid() != 0 {
		t.Skip("devices: mknod needs root (run the tests as root for this part)")
	}
	devs := t.TempDir()
	null, full, block := filepath.Join(devs, "null"), filepath.Join(devs, "full"), filepath.Join(devs, "block")
	for _, d := range []struct {
		path string
		mode uint32
		maj  uint32
		min  uint32
	}{{null, syscall.S_IFCHR, 1, 3}, {full, syscall.S_IFCHR, 1, 7}, {block, syscall.S_IFBLK, 240, 77}} {
		if err := unix.Mknod(d.path, d.mode|0o666, int(unix.Mkdev(d.maj, d.min))); err != nil {
			t.Fatalf("mknod %s: %v", d.path, err)
		}
	}
	for _, format := range []string{"table", "json", "csv", "jsonl", "parquet"} {
		r := cli(t, xdg, outRun("--no-save", "--format", format, "--out", null)...)
		if r.code != 0 || !strings.Contains(r.stderr, "wrote "+null) || r.stdout != "" {
			t.Errorf("%s --out null: exit %d, stdout %q: %s", format, r.code, r.stdout, r.stderr)
		}
		r = cli(t, xdg, outRun("--no-save", "--format", format, "--out", full)...)
		if r.code != 1 || !strings.Contains(r.stderr, full) || !strings.Contains(r.stderr, "no space left on device") || strings.Contains(r.stderr, "wrote ") {
			t.Errorf("%s --out full: exit %d, want 1 with ENOSPC: %s", format, r.code, r.stderr)
		}
	}
	r = cli(t, xdg, outRun("--no-save", "--format", "csv", "--out", block)...)
	if r.code != 1 || !strings.Contains(r.stderr, "--out "+block+" is a block device") {
		t.Errorf("--out block device: exit %d: %s", r.code, r.stderr)
	}
	db := savedSession(t, xdg, dir)
	for _, args := range [][]string{
		{"sessions", "export", "1", "--db", db},
		{"sessions", "export", "1", "--db", db, "--format", "json"},
		{"sessions", "report", "1", "--db", db},
		{"sessions", "plot", "1", "--db", db, "--figure", "heatmap", "--format", "svg"},
	} {
		r := cli(t, xdg, append(args, "--out", null)...)
		if r.code != 0 || !strings.Contains(r.stderr, "wrote "+null) {
			t.Errorf("%v --out null: exit %d: %s", args, r.code, r.stderr)
		}
		r = cli(t, xdg, append(args, "--out", full)...)
		if r.code != 1 || !strings.Contains(r.stderr, "no space left on device") {
			t.Errorf("%v --out full: exit %d: %s", args, r.code, r.stderr)
		}
	}
	want := map[string]fs.FileMode{null: fs.ModeDevice | fs.ModeCharDevice, full: fs.ModeDevice | fs.ModeCharDevice, block: fs.ModeDevice}
	for p, m := range want {
		if got := mode(t, p); got != m {
			t.Errorf("%s is now %v, want %v", p, got, m)
		}
	}
	leftovers(t, devs, "null", "full", "block")
}

// TestOutRefusesReadOnly: an --out file without write permission is
// refused as the shell's > refuses it ("permission denied"), by its mode
// bits, so root is refused too; nothing runs and the file is unchanged.
// --force replaces it, and it keeps its mode.
func TestOutRefusesReadOnly(t *testing.T) {
	xdg, dir := t.TempDir(), t.TempDir()
	db := savedSession(t, xdg, dir)
	f := filepath.Join(dir, "ro") // no extension: a figure takes --format
	for _, args := range [][]string{
		outRun("--no-save", "--format", "csv"),
		outRun("--no-save", "--format", "parquet"),
		{"sessions", "export", "1", "--db", db},
		{"sessions", "report", "1", "--db", db},
		{"sessions", "plot", "1", "--db", db, "--figure", "heatmap", "--format", "svg"},
		{"sessions", "trades", "1", "--db", db, "--combo", "hma=10,hma3=12"},
		{"sessions", "bars", "1", "--db", db, "--combo", "hma=20,hma3=24", "--format", "parquet"},
	} {
		os.Remove(f)
		os.WriteFile(f, []byte("keep\n"), 0o444)
		r := cli(t, xdg, append(args, "--out", f)...)
		if r.code != 1 || !strings.Contains(r.stderr, "--out "+f+": permission denied") || !strings.Contains(r.stderr, "--force") || r.stdout != "" {
			t.Errorf("%v --out read-only: exit %d: %s", args, r.code, r.stderr)
		}
		if b, _ := os.ReadFile(f); string(b) != "keep\n" {
			t.Errorf("%v: the read-only file changed: %q", args, b)
		}
		r = cli(t, xdg, append(args, "--out", f, "--force")...)
		if r.code != 0 || !strings.Contains(r.stderr, "wrote "+f) {
			t.Errorf("%v --out read-only --force: exit %d: %s", args, r.code, r.stderr)
		}
		fi, _ := os.Stat(f)
		if b, _ := os.ReadFile(f); string(b) == "keep\n" || fi == nil || fi.Mode().Perm() != 0o444 {
			t.Errorf("%v --force: %d bytes, %v", args, len(b), fi)
		}
	}
}

// TestOutRefusesDatabaseCompanions: the sessions database's -wal, -shm
// and -journal files are refused as the database is, existing or not, by
// run and by the sessions commands; the saved session is intact.
func TestOutRefusesDatabaseCompanions(t *testing.T) {
	xdg, dir := t.TempDir(), t.TempDir()
	db := savedSession(t, xdg, dir)
	for _, suffix := range []string{"-wal", "-shm", "-journal"} {
		out := db + suffix
		for _, args := range [][]string{
			outRun("--db", db, "--format", "csv", "--out", out),
			outRun("--db", db, "--format", "csv", "--data-each", filepath.Join("..", "testdata", "data", "binance_archive_FILUSDT-1m-2023-08_head*.csv.gz"), "--out", out),
			{"sessions", "export", "1", "--db", db, "--out", out},
			{"sessions", "report", "1", "--db", db, "--out", out},
			{"sessions", "bars", "1", "--db", db, "--combo", "hma=10,hma3=12", "--out", out},
		} {
			r := cli(t, xdg, args...)
			says := "--out " + out + " is the sessions database's"
			if r.code != 1 || !strings.Contains(r.stderr, says) || r.stdout != "" {
				t.Errorf("%v: exit %d, stderr %q; want exit 1 saying %q", args, r.code, r.stderr, says)
			}
		}
		if _, err := os.Stat(out); err == nil && suffix != "-wal" && suffix != "-shm" {
			t.Errorf("%s written", out)
		}
	}
	r := cli(t, xdg, "sessions", "export", "1", "--db", db, "--format", "json")
	if r.code != 0 || !strings.Contains(r.stdout, `"complete": true`) {
		t.Errorf("session 1 after the refusals: exit %d: %s", r.code, r.stderr)
	}
}

// cliTTY runs sweepbench in process with stdout a terminal (a pty), and
// returns what the terminal received (its \r\n made \n again).
func cliTTY(t *testing.T, xdg string, args ...string) result {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	defer ptmx.Close()
	read := make(chan []byte, 1)
	go func() {
		var b bytes.Buffer
		io.Copy(&b, ptmx) // until the terminal's end closes (EIO)
		read <- b.Bytes()
	}()
	t.Setenv("XDG_DATA_HOME", xdg)
	root := newRoot()
	var errb bytes.Buffer
	root.SetOut(tty)
	root.SetErr(&errb)
	root.SetArgs(args)
	r := result{}
	if err := root.ExecuteContext(context.Background()); err != nil {
		fmt.Fprintln(&errb, "sweepbench:", phrase(err))
		r.code = 1
		var ee *exitError
		if errors.As(err, &ee) {
			r.code = ee.code
		}
	}
	tty.Close()
	r.stdout = strings.ReplaceAll(string(<-read), "\r\n", "\n")
	r.stderr = errb.String()
	return r
}

// TestCSVToTerminalEscaped: CSV (and the other text formats) to a
// terminal pass the table's sanitiser: a data file whose name holds a
// window title and an erase-screen shows them escaped (\x1b]0;...\x07)
// in run, sessions show and sessions export; the same CSV to a pipe keeps
// the bytes (a machine format). Parquet to a terminal is still refused.
func TestCSVToTerminalEscaped(t *testing.T) {
	xdg, dir := t.TempDir(), t.TempDir()
	name := "ev\x1b]0;pwned\x07il\x1b[2J.csv"
	shown := `ev\x1b]0;pwned\x07il\x1b[2J.csv`
	raw := readGunzip(t, filepath.Join("..", "testdata", "data", "binance_archive_FILUSDT-1m-2023-08_head.csv.gz"))
	lines := strings.SplitAfter(string(raw), "\n")
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(strings.Join(lines[:400], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "s.db")
	grid := []string{"--hma", "10:20:10", "--hma3", "12:24:12", "--backend", "reference", "-q"}
	pipe := cli(t, xdg, append([]string{"run", "--data", p, "--db", db, "--format", "csv"}, grid...)...)
	if pipe.code != 0 || !strings.Contains(pipe.stdout, "/"+name+",") {
		t.Fatalf("csv to a pipe keeps the name's bytes: %+v", pipe)
	}
	for _, args := range [][]string{
		append([]string{"run", "--data", p, "--no-save", "--format", "csv"}, grid...),
		append([]string{"run", "--data", p, "--no-save", "--format", "jsonl"}, grid...),
		append([]string{"run", "--data", p, "--no-save", "--format", "json"}, grid...),
		{"sessions", "show", "1", "--db", db, "--format", "csv"},
		{"sessions", "export", "1", "--db", db, "--format", "csv"},
		{"sessions", "export", "1", "--db", db, "--format", "jsonl"},
	} {
		r := cliTTY(t, xdg, args...)
		if r.code != 0 {
			t.Errorf("%v to a terminal: exit %d: %s", args, r.code, r.stderr)
			continue
		}
		if i := strings.IndexAny(r.stdout, "\x1b\x07"); i >= 0 {
			t.Errorf("%v to a terminal: raw %q at byte %d", args, r.stdout[i], i)
		}
		if args[len(args)-1] == "csv" && (!strings.Contains(r.stdout, "/"+shown+",") || strings.Count(r.stdout, "\n") != strings.Count(pipe.stdout, "\n")) {
			t.Errorf("%v to a terminal: want the name shown as %s, one line a row:\n%s", args, shown, r.stdout)
		}
	}
	if r := cliTTY(t, xdg, "sessions", "export", "1", "--db", db, "--format", "parquet"); r.code != 1 || !strings.Contains(r.stderr, "--format parquet is binary") {
		t.Errorf("parquet to a terminal: exit %d: %s", r.code, r.stderr)
	}
}

// TestBenchOutAsEveryOut: bench's --out, --save-json and --cpuprofile are
// checked and written as every --out (they were os.Create'd): a read-only
// file is refused before the ladder runs and left as it was (--force
// replaces it), and a character device is written through, never
// replaced by a regular file.
func TestBenchOutAsEveryOut(t *testing.T) {
	xdg, dir := t.TempDir(), t.TempDir()
	bench := []string{"bench", "--rungs", "M2", "--repeat", "1", "--head", "3000", "--hma", "10:20:10", "--hma3", "12:24:12", "-q"}
	f := filepath.Join(dir, "ro")
	for _, flag := range []string{"--out", "--save-json", "--cpuprofile"} {
		os.Remove(f)
		os.WriteFile(f, []byte("keep\n"), 0o444)
		r := cli(t, xdg, append(bench, flag, f)...)
		if r.code != 1 || !strings.Contains(r.stderr, flag+" "+f+": permission denied") || r.stdout != "" {
			t.Errorf("bench %s read-only: exit %d, stdout %q: %s", flag, r.code, r.stdout, r.stderr)
		}
		if b, _ := os.ReadFile(f); string(b) != "keep\n" {
			t.Errorf("bench %s: the read-only file changed: %q", flag, b)
		}
		r = cli(t, xdg, append(bench, flag, f, "--force")...)
		if b, _ := os.ReadFile(f); r.code != 0 || string(b) == "keep\n" {
			t.Errorf("bench %s read-only --force: exit %d, %d bytes: %s", flag, r.code, len(b), r.stderr)
		}
	}
	if os.Geteuid() != 0 {
		t.Skip("devices: mknod needs root (run the tests as root for this part)")
	}
	null := filepath.Join(t.TempDir(), "null")
	if err := unix.Mknod(null, syscall.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
		t.Fatalf("mknod %s: %v", null, err)
	}
	for _, flag := range []string{"--out", "--save-json", "--cpuprofile"} {
		if r := cli(t, xdg, append(bench, flag, null)...); r.code != 0 {
			t.Errorf("bench %s null: exit %d: %s", flag, r.code, r.stderr)
		}
		if got := mode(t, null); got != fs.ModeDevice|fs.ModeCharDevice {
			t.Fatalf("bench %s: %s is now %v, want a character device", flag, null, got)
		}
	}
}
