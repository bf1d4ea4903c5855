//go:build unix

package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// fifoDeadline bounds every wait of these tests (for a line on stderr, a
// full pipe, the process's exit): generous, it is never the measure.
const fifoDeadline = 60 * time.Second

// lockedBuffer is a bytes.Buffer a process writes while the test reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// fifoProcess is sweepbench running as a process of its own (signals are
// the process's), its stderr readable as it goes.
type fifoProcess struct {
	cmd    *exec.Cmd
	stdout lockedBuffer
	stderr lockedBuffer
	done   chan error
}

func startFIFOProcess(t *testing.T, xdg string, args ...string) *fifoProcess {
	t.Helper()
	p := &fifoProcess{cmd: exec.Command(sweepbench(t), args...), done: make(chan error, 1)}
	p.cmd.Env = append(os.Environ(), "XDG_DATA_HOME="+xdg)
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// until polls cond until it holds, failing the test (with what stderr
// says) past fifoDeadline or when the process exits first.
func (p *fifoProcess) until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(fifoDeadline)
	for !cond() {
		select {
		case err := <-p.done:
			p.done <- err
			t.Fatalf("exited (%v) before %s:\n%s", err, what, p.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(end) {
			t.Fatalf("not %s after %v:\n%s", what, fifoDeadline, p.stderr.String())
		}
	}
}

// stop sends sig and returns the exit status, failing the test when the
// process is still there fifoDeadline later.
func (p *fifoProcess) stop(t *testing.T, sig syscall.Signal) int {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.done:
		p.done <- err
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(fifoDeadline):
		t.Fatalf("still running %v after %v:\n%s", fifoDeadline, sig, p.stderr.String())
	}
	return -1
}

// TestOutFIFOWithoutReaderStops: `run --out FIFO` with no reader on the
// FIFO says once that it waits for one, and SIGTERM or SIGINT (Ctrl-C)
// stops the wait: exit 130, saying the report was not written and how to
// get it, the sessions export command of the saved session (which, with a
// reader there, writes the very CSV the run would have), or, with
// --no-save, that it is lost. Nothing replaces the FIFO.
func TestOutFIFOWithoutReaderStops(t *testing.T) {
	xdg := t.TempDir()
	want := cli(t, xdg, outRun("--no-save", "-q", "--format", "csv")...)
	if want.code != 0 || !strings.HasPrefix(want.stdout, "precision,") {
		t.Fatalf("csv to stdout: %+v", want)
	}
	for _, c := range []struct {
		sig  syscall.Signal
		save bool
	}{{syscall.SIGTERM, true}, {syscall.SIGINT, false}} {
		t.Run(c.sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			fifo := filepath.Join(dir, "fifo")
			if err := syscall.Mkfifo(fifo, 0o644); err != nil {
				t.Fatal(err)
			}
			db := filepath.Join(dir, "s.db")
			args := outRun("--format", "csv", "--out", fifo, "--db", db)
			if !c.save {
				args = append(args, "--no-save")
			}
			p := startFIFOProcess(t, xdg, args...)
			waiting := "waiting for a reader on FIFO " + fifo + " (Ctrl-C stops)\n"
			p.until(t, "waiting for a reader", func() bool { return strings.Contains(p.stderr.String(), waiting) })
			code := p.stop(t, c.sig)
			stderr := p.stderr.String()
			if strings.Count(stderr, waiting) != 1 {
				t.Errorf("the wait is said %d times, want once:\n%s", strings.Count(stderr, waiting), stderr)
			}
			lost := "sweepbench: interrupted while waiting for a reader on FIFO " + fifo + ": the report was not written"
			if code != 130 || !strings.Contains(stderr, lost) || p.stdout.String() != "" {
				t.Fatalf("exit %d, stdout %q, stderr:\n%s\nwant 130, nothing and %q", code, p.stdout.String(), stderr, lost)
			}
			if m := mode(t, fifo); m != os.ModeNamedPipe {
				t.Errorf("the FIFO is now %v", m)
			}
			if !c.save {
				if !strings.Contains(stderr, "nor saved: the results are lost") {
					t.Errorf("--no-save: does not say the results are lost:\n%s", stderr)
				}
				return
			}
			again := "sweepbench sessions export 1 --db " + db + " --format csv --out " + fifo
			if !strings.Contains(stderr, "the saved session holds it: `"+again+"` writes it again") {
				t.Fatalf("does not name %q:\n%s", again, stderr)
			}
			// The command named, with a reader there this time (the test
			// holds both ends: the report fits the pipe's buffer).
			rd, err := unix.Open(fifo, unix.O_RDWR|unix.O_NONBLOCK, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(rd)
			if r := cli(t, xdg, strings.Fields(again)[1:]...); r.code != 0 {
				t.Fatalf("%s: exit %d: %s", again, r.code, r.stderr)
			}
			if got := drain(rd); got != want.stdout {
				t.Errorf("%s wrote %q, want the run's CSV %q", again, got, want.stdout)
			}
		})
	}
}

// drain reads what the non-blocking fd rd holds now.
func drain(rd int) string {
	var got []byte
	buf := make([]byte, 64<<10)
	for {
		n, err := unix.Read(rd, buf)
		if err != nil || n <= 0 {
			return string(got)
		}
		got = append(got, buf[:n]...)
	}
}
