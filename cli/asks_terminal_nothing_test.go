//go:build unix

package cli

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/creack/pty"
)

// TestCLIAsksTheTerminalNothing: the command-line commands, their stdout,
// stderr and stdin on a terminal (a pty), print and ask nothing: no
// background colour query (OSC 11 ?), no foreground one (OSC 10 ?) and no
// cursor position report (CSI 6 n) reaches the terminal (found by a user:
// `sessions ls` and `run` wrote ESC ]11;? ESC \ ESC [6n into it, at start,
// before the command's own output). The terminal never answers here, as a
// pipe-fed or slow one would not.
func TestCLIAsksTheTerminalNothing(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "sessions.db")
	for _, c := range []struct {
		args []string
		want string // in what the command printed
	}{
		{[]string{"sessions", "ls", "--db", db}, "no sessions yet: "},
		{[]string{"run", "--data", "embedded:btcusdt-1m", "--head", "2000", "--hma", "10:20:10", "--hma3", "12:24:12",
			"--backend", "reference", "--db", db}, "saving as session 1 in "},
		{[]string{"sessions", "ls", "--db", db}, "embedded:btcusdt-1m"},
		{[]string{"--help"}, "sweepbench sweeps a Hull MA"},
	} {
		out := onPty(t, dir, c.args...)
		for _, q := range []string{"\x1b]11;?", "\x1b]10;?", "\x1b[6n"} {
			if i := strings.Index(out, q); i >= 0 {
				t.Errorf("%s: the terminal was asked %q (at byte %d of %q)", strings.Join(c.args, " "), q, i, out[:min(len(out), 200)])
			}
		}
		if !strings.Contains(out, c.want) {
			t.Errorf("%s: %q not in what it printed: %q", strings.Join(c.args, " "), c.want, out)
		}
	}
}

// onPty runs sweepbench with args, stdin, stdout and stderr on a new pty
// (its controlling terminal, the child in the foreground: a terminal a
// query could be written to), and returns all it wrote there.
func onPty(t *testing.T, xdg string, args ...string) string {
	t.Helper()
	cmd := exec.Command(sweepbench(t), args...)
	// A terminal colour queries would go to: TERM of one that answers
	// them, and no CI variable (termenv then takes no output as a tty).
	var env []string
	for _, e := range os.Environ() {
		if k, _, _ := strings.Cut(e, "="); k != "CI" && k != "TERM" && k != "NO_COLOR" && k != "COLORTERM" {
			env = append(env, e)
		}
	}
	cmd.Env = append(env, "TERM=xterm-256color", "XDG_DATA_HOME="+xdg)
	f, err := pty.StartWithAttrs(cmd, &pty.Winsize{Rows: 24, Cols: 100}, &syscall.SysProcAttr{Setsid: true, Setctty: true})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out bytes.Buffer
	_, err = io.Copy(&out, f)
	var pe *os.PathError
	if err != nil && !(errors.As(err, &pe) && errors.Is(pe.Err, syscall.EIO)) { // EIO: the child closed its end
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	return out.String()
}
