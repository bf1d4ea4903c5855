//go:build unix

package cli

// End-to-end tests of the CLI on real database files. Most run the
// commands in process (cobra, as the binary would); the ones that need a
// process of their own (kill -9, another user) run the sweepbench binary,
// built from the module's main package (sweepbench(t)).

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"sweepbench/engine"
	"sweepbench/engine/data/datatest"
	"sweepbench/sessions"
)

func TestMain(m *testing.M) {
	// The parsed-dataset cache of every load, in process or not, in a
	// temporary folder rather than the user's.
	code := datatest.RunWithTempCache(m)
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

var (
	binOnce sync.Once
	binDir  string
	binPath string
	binErr  error
)

// sweepbench returns the sweepbench binary, built once from the module's
// main package (main.go: its blank import of earlyinit included), in a
// directory every user can read: the read-only case runs it as another
// user.
func sweepbench(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		if binDir, binErr = os.MkdirTemp("", "sweepbench-cli"); binErr != nil {
			return
		}
		os.Chmod(binDir, 0o755)
		binPath = filepath.Join(binDir, "sweepbench")
		build := exec.Command("go", "build", "-o", binPath, "sweepbench")
		if out, err := build.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build sweepbench: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

type result struct {
	stdout, stderr string
	code           int
}

// cli runs sweepbench in process with XDG_DATA_HOME in a temporary
// directory, so that no test touches the user's default database; the
// error is printed and mapped to an exit code as main does.
func cli(t *testing.T, xdg string, args ...string) result {
	t.Helper()
	t.Setenv("XDG_DATA_HOME", xdg)
	root := newRoot()
	var out, errb bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errb)
	root.SetArgs(args)
	r := result{code: 0}
	if err := root.ExecuteContext(context.Background()); err != nil {
		fmt.Fprintln(&errb, "sweepbench:", phrase(err))
		r.code = 1
		var ee *exitError
		if errors.As(err, &ee) {
			r.code = ee.code
		}
	}
	r.stdout, r.stderr = out.String(), errb.String()
	return r
}

// cliProcess runs sweepbench as a process of its own (attr: as another
// user), for what needs one.
func cliProcess(t *testing.T, xdg string, attr *syscall.SysProcAttr, args ...string) result {
	t.Helper()
	cmd := exec.Command(sweepbench(t), args...)
	cmd.Env = append(os.Environ(), "XDG_DATA_HOME="+xdg)
	cmd.SysProcAttr = attr
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{out.String(), errb.String(), 0}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return r
}

// openStore opens (creating) the sessions database at path.
func openTestStore(t *testing.T, path string) *sessions.Store {
	t.Helper()
	s, err := sessions.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// A grid that takes a couple of seconds on two cores.
var killArgs = []string{"run", "--data", "embedded:btcusdt-1m", "--head", "20000", "--hma", "10:240:5", "--hma3", "12:300:12",
	"--backend", "reference", "--format", "csv", "-q", "--blocks", "8"}

// TestKillAndResume kills `sweepbench run` with SIGKILL once its first
// batch is committed, checks that the next start shows the session
// interrupted, resumes it, and compares the result with an uninterrupted
// run of the same sweep: the CSV of every metric byte for byte, and the
// parity report.
func TestKillAndResume(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a sweep of a few seconds, killed and resumed")
	}
	bin := sweepbench(t)
	dir := t.TempDir()
	killed, fresh := filepath.Join(dir, "killed.db"), filepath.Join(dir, "fresh.db")

	cmd := exec.Command(bin, append(killArgs, "--db", killed)...)
	cmd.Env = append(os.Environ(), "XDG_DATA_HOME="+dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	st := openTestStore(t, killed)
	bg := context.Background()
	var id int64
	for deadline := time.Now().Add(60 * time.Second); id == 0; time.Sleep(10 * time.Millisecond) {
		select {
		case err := <-exited:
			t.Fatalf("the run exited (%v) before a batch was seen: make the grid larger", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("no batch committed within a minute")
		}
		if list, err := st.List(bg, sessions.ListOptions{}); err == nil && len(list) == 1 {
			if done, _ := list[0].Done(); done > 0 {
				id = list[0].ID
			}
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited

	ss, err := st.Get(bg, id)
	if err != nil {
		t.Fatal(err)
	}
	done, total := ss.Done()
	if ss.Status != sessions.StatusInterrupted || done == 0 || done >= total {
		t.Fatalf("after kill -9: %s with %d of %d combos saved, want interrupted part way", ss.Status, done, total)
	}
	if r := cli(t, dir, "sessions", "ls", "--db", killed); r.code != 0 || !strings.Contains(r.stdout, "interrupted") {
		t.Errorf("ls: %+v", r)
	}
	if r := cli(t, dir, "sessions", "show", strconv.FormatInt(id, 10), "--db", killed); r.code != 0 ||
		!strings.Contains(r.stdout, "sessions resume "+strconv.FormatInt(id, 10)) {
		t.Errorf("show of an interrupted session does not say how to resume:\n%s%s", r.stdout, r.stderr)
	}

	resumed := cli(t, dir, "sessions", "resume", strconv.FormatInt(id, 10), "--db", killed, "--format", "csv")
	if resumed.code != 0 {
		t.Fatalf("resume: %+v", resumed)
	}
	// The study asked for blocks: the resume says why it has no robustness.
	if !strings.Contains(resumed.stderr, "robustness: not computed for a resumed study") {
		t.Errorf("resume of a --blocks study does not say why it has no robustness section:\n%s", resumed.stderr)
	}
	// Only the missing combos were computed.
	lane := regexp.MustCompile(`(fp64|fp32): ([\d,]+) combos were saved, ([\d,]+) computed now`)
	m := lane.FindAllStringSubmatch(resumed.stderr, -1)
	if len(m) != 2 {
		t.Fatalf("resume said:\n%s", resumed.stderr)
	}
	saved := 0
	for _, l := range m {
		s, c := atoi(l[2]), atoi(l[3])
		if s+c != total/2 {
			t.Errorf("%s: %d saved + %d computed != %d", l[1], s, c, total/2)
		}
		saved += s
	}
	if saved != done {
		t.Errorf("resume found %d combos saved, the store had %d", saved, done)
	}

	want := cli(t, dir, append(killArgs, "--db", fresh)...)
	if want.code != 0 {
		t.Fatalf("uninterrupted run: %+v", want)
	}
	if resumed.stdout != want.stdout {
		t.Error("the resumed session's CSV differs from the uninterrupted run's")
	}
	exportCSV := cli(t, dir, "sessions", "export", strconv.FormatInt(id, 10), "--db", killed, "--format", "csv")
	if exportCSV.stdout != want.stdout {
		t.Error("export --format csv differs from the uninterrupted run's CSV")
	}

	parity := func(db string, id int64) any {
		r := cli(t, dir, "sessions", "export", strconv.FormatInt(id, 10), "--db", db, "--format", "json")
		var v map[string]any
		if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
			t.Fatalf("export json: %v\n%s", err, r.stderr)
		}
		if v["parity"] == nil {
			t.Fatal("no parity in the export")
		}
		return v["parity"]
	}
	if a, b := parity(killed, id), parity(fresh, 1); !reflect.DeepEqual(a, b) {
		t.Errorf("parity after resume differs from the uninterrupted run's:\n%v\n%v", a, b)
	}
}

func atoi(s string) int {
	n, _ := strconv.Atoi(strings.ReplaceAll(s, ",", ""))
	return n
}

// TestBrokenDatabase: with a database that cannot be used (corrupted,
// read-only, a directory), `run` warns, naming the file, and prints the
// results anyway; ls fails with an error naming the file.
func TestBrokenDatabase(t *testing.T) {
	xdg := t.TempDir()
	args := []string{"run", "--data", "embedded:btcusdt-1m", "--head", "3000", "--hma", "10:30:10", "--hma3", "12:36:12",
		"--backend", "reference", "--format", "csv"}
	want := cli(t, xdg, append(args, "--no-save")...)
	if want.code != 0 || strings.Count(want.stdout, "\n") != 1+2*9 {
		t.Fatalf("run --no-save: %+v", want)
	}
	if _, err := os.Stat(filepath.Join(xdg, "sweepbench")); !os.IsNotExist(err) {
		t.Errorf("--no-save created the default database directory (%v)", err)
	}

	// A world-readable directory, so that the read-only case can run as an
	// unprivileged user when the tests run as root.
	dir, err := os.MkdirTemp("", "sessions-broken")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)

	corrupted := filepath.Join(dir, "corrupted.db")
	os.WriteFile(corrupted, bytes.Repeat([]byte("this is not a sqlite database\n"), 200), 0o644)

	roDir := filepath.Join(dir, "ro")
	os.Mkdir(roDir, 0o755)
	readOnly := filepath.Join(roDir, "sessions.db")
	s, err := sessions.Open(readOnly)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	os.Chmod(readOnly, 0o444)
	os.Chmod(roDir, 0o555)
	defer os.Chmod(roDir, 0o755)
	var asUser *syscall.SysProcAttr
	if os.Geteuid() == 0 {
		asUser = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}

	directory := filepath.Join(dir, "adir")
	os.Mkdir(directory, 0o755)

	for _, c := range []struct {
		name, db string
		attr     *syscall.SysProcAttr
		says     string
	}{
		{"corrupted", corrupted, nil, "not a database"},
		{"read-only", readOnly, asUser, "not writable"},
		{"directory", directory, nil, "is a directory"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := cliProcess(t, xdg, c.attr, append(args, "--db", c.db)...)
			if r.code != 0 || r.stdout != want.stdout {
				t.Errorf("exit %d; stdout differs from the unsaved run: %v\nstderr: %s", r.code, r.stdout != want.stdout, r.stderr)
			}
			if !strings.Contains(r.stderr, "warning") || !strings.Contains(r.stderr, c.db) || !strings.Contains(r.stderr, c.says) {
				t.Errorf("stderr does not warn naming %s (%q):\n%s", c.db, c.says, r.stderr)
			}
			// ls reads a read-only file as it is; it names any other broken file.
			ls := cliProcess(t, xdg, c.attr, "sessions", "ls", "--db", c.db)
			if c.name == "read-only" {
				if ls.code != 0 {
					t.Errorf("ls of a read-only file: exit %d, stderr %s", ls.code, ls.stderr)
				}
			} else if ls.code == 0 || !strings.Contains(ls.stderr, c.db) {
				t.Errorf("ls: exit %d, stderr %s", ls.code, ls.stderr)
			}
		})
	}
}

// TestResumeRefusesChangedFile: a session on a CSV file resumes while the
// file is unchanged, and is refused, with an error that says so, once the
// file's bytes changed.
func TestResumeRefusesChangedFile(t *testing.T) {
	dir := t.TempDir()
	csvPath, db := filepath.Join(dir, "bars.csv"), filepath.Join(dir, "sessions.db")
	spec := engine.DefaultSpec()
	spec.Data, spec.Head = "embedded:btcusdt-1m", 3000
	ds, err := spec.Load()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("open_time,open,high,low,close,volume\n")
	for i := 0; i < ds.Bars.Len(); i++ {
		fmt.Fprintf(&b, "%d,%g,%g,%g,%g,%g\n", ds.Bars.Time[i]/1e6, ds.Bars.Open[i], ds.Bars.High[i], ds.Bars.Low[i], ds.Bars.Close[i], ds.Bars.Volume[i])
	}
	if err := os.WriteFile(csvPath, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	spec = engine.DefaultSpec()
	spec.Data, spec.HMA, spec.HMA3, spec.Backend = csvPath, "10:30:10", "12:36:12", "reference"
	fileData, err := spec.Load()
	if err != nil {
		t.Fatal(err)
	}
	s := openTestStore(t, db)
	bg := context.Background()
	var ids []string
	for range 2 {
		st, err := spec.Study(fileData, backends())
		if err != nil {
			t.Fatal(err)
		}
		w, err := s.Begin(bg, st)
		if err != nil {
			t.Fatal(err)
		}
		w.Save(engine.FP64, []engine.ComboResult{{Index: 0, Combo: st.Grid.At(0)}})
		if err := w.Finish(nil, context.Canceled); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, strconv.FormatInt(w.ID(), 10))
	}

	if r := cli(t, dir, "sessions", "resume", ids[0], "--db", db, "-q"); r.code != 0 || !strings.Contains(r.stdout, "complete") {
		t.Fatalf("resume of an unchanged file: %+v", r)
	}
	changed := strings.Replace(b.String(), "\n", "\n", 1)
	changed = changed[:len(changed)-2] + "9\n" // the last volume
	if err := os.WriteFile(csvPath, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	r := cli(t, dir, "sessions", "resume", ids[1], "--db", db)
	if r.code == 0 || !strings.Contains(r.stderr, "changed since the session was saved") || !strings.Contains(r.stderr, "sha256") {
		t.Errorf("resume of a changed file: %+v", r)
	}
}

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

// TestSessionsKeepHowDataWasRead: a session of a LEAN file read as equity
// shows the same data line (scale, zone, the bars/year rule) from the
// database; a session on a folder of files resumes while the files are
// unchanged and is refused once a file is added (the manifest's hash).
// TestDamagedBatchShown: `sessions show` and `export` of a session one of
// whose stored batches was damaged (cut short in the file) fail, naming
// the session, the run and the batch, and say what to do; `ls` still
// lists the session.
func TestDamagedBatchShown(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "sessions.db")
	if r := cli(t, dir, "run", "--db", db, "-q", "--data", "embedded:btcusdt-1m", "--head", "2000",
		"--hma", "10:50:10", "--hma3", "12:48:12", "--backend", "reference", "--precision", "fp64"); r.code != 0 {
		t.Fatalf("run: %+v", r)
	}
	raw, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var first int
	if err := raw.QueryRow(`SELECT min(first_idx) FROM result_batches`).Scan(&first); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`UPDATE result_batches SET data = substr(data, 1, length(data) - 8) WHERE first_idx = ?`, first); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"show", "1"}, {"export", "1", "--format", "csv"}} {
		r := cli(t, dir, append(append([]string{"sessions"}, args...), "--db", db)...)
		want := "session 1, run 1:fp64: the saved batch of"
		if r.code == 0 || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, fmt.Sprintf("from combo %d cannot be read (it ends early)", first)) ||
			!strings.Contains(r.stderr, "sweepbench sessions rm 1") {
			t.Errorf("%v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
	if r := cli(t, dir, "sessions", "ls", "--db", db); r.code != 0 || !strings.Contains(r.stdout, "complete") {
		t.Errorf("ls: %+v", r)
	}
}

func TestSessionsKeepHowDataWasRead(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "sessions.db")
	run := cli(t, dir, "run", "--db", db, "-q", "--data", "../testdata/data/lean_spy_hour_head.csv.gz", "--lean-asset", "equity",
		"--hma", "10:20:10", "--hma3", "12:24:12", "--backend", "reference")
	if run.code != 0 {
		t.Fatalf("run: %+v", run)
	}
	dataLine := strings.SplitN(run.stdout, "\n", 3)
	show := cli(t, dir, "sessions", "show", "1", "--db", db)
	if show.code != 0 || !strings.Contains(show.stdout, dataLine[0]+"\n"+dataLine[1]+"\n") ||
		!strings.Contains(dataLine[0], "LEAN equity/usa (as given): prices / 10,000, local times in America/New_York") ||
		!strings.Contains(dataLine[1], "observed over 1.1 years: a session calendar") {
		t.Errorf("show:\n%s\nrun:\n%s", show.stdout, run.stdout)
	}

	folder := filepath.Join(dir, "months")
	os.Mkdir(folder, 0o755)
	spec := engine.DefaultSpec()
	spec.Data, spec.Head = "embedded:btcusdt-1m", 2000
	ds, err := spec.Load()
	if err != nil {
		t.Fatal(err)
	}
	for part, lo := range []int{0, 1000} {
		var b strings.Builder
		for i := lo; i < lo+1000; i++ {
			fmt.Fprintf(&b, "%d,%g,%g,%g,%g,%g,%d,0,1,0,0,0\n", ds.Bars.Time[i]/1e6, ds.Bars.Open[i], ds.Bars.High[i], ds.Bars.Low[i],
				ds.Bars.Close[i], ds.Bars.Volume[i], ds.Bars.Time[i]/1e6+59999)
		}
		os.WriteFile(filepath.Join(folder, fmt.Sprintf("BTCUSDT-1m-part%d.csv", part)), []byte(b.String()), 0o644)
	}
	spec = engine.DefaultSpec()
	spec.Data, spec.HMA, spec.HMA3, spec.Backend = folder, "10:30:10", "12:36:12", "reference"
	st, err := spec.Build(backends())
	if err != nil {
		t.Fatal(err)
	}
	if st.Dataset.Info.Files != 2 || st.Dataset.Bars.Len() != 2000 || st.Dataset.Bars.Close[1999] != ds.Bars.Close[1999] {
		t.Fatalf("folder: %+v", st.Dataset.Info)
	}
	s := openTestStore(t, db)
	var ids []string
	for range 2 {
		w, err := s.Begin(context.Background(), st)
		if err != nil {
			t.Fatal(err)
		}
		w.Save(engine.FP64, []engine.ComboResult{{Index: 0, Combo: st.Grid.At(0)}})
		if err := w.Finish(nil, context.Canceled); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, strconv.FormatInt(w.ID(), 10))
	}
	if r := cli(t, dir, "sessions", "resume", ids[0], "--db", db, "-q"); r.code != 0 || !strings.Contains(r.stdout, "2 files") {
		t.Fatalf("resume of an unchanged folder: %+v", r)
	}
	os.WriteFile(filepath.Join(folder, "BTCUSDT-1m-part2.csv"), []byte(fmt.Sprintf("%d,1,1,1,1,1,%d,0,1,0,0,0\n",
		ds.Bars.Time[1999]/1e6+60000, ds.Bars.Time[1999]/1e6+119999)), 0o644)
	if r := cli(t, dir, "sessions", "resume", ids[1], "--db", db); r.code == 0 || !strings.Contains(r.stderr, "changed since the session was saved") {
		t.Errorf("resume after a file was added: %+v", r)
	}
}
