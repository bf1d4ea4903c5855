//go:build unix

package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"sweepbench/sessions"
)

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
