//go:build unix

package cli

import (
	"bytes"
	"compress/gzip"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// slowGzip writes a gzip of a CSV header and then 512 MiB of empty lines
// (64 members of 8 MiB, 0.5 MB on disk): a file that takes seconds to
// load (every byte is decompressed and scanned) and holds no bar, once
// SWEEPBENCH_MAX_BLANK_LINES lets it past the blank-line cap.
func slowGzip(t *testing.T) string {
	t.Helper()
	var member bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&member, gzip.BestCompression)
	zw.Write(bytes.Repeat([]byte("\n"), 8<<20))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	var file bytes.Buffer
	zw = gzip.NewWriter(&file)
	zw.Write([]byte("timestamp,open,high,low,close,volume\n"))
	zw.Close()
	for range 64 {
		file.Write(member.Bytes())
	}
	p := filepath.Join(t.TempDir(), "slow.csv.gz")
	if err := os.WriteFile(p, file.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestInterruptWhileLoading: Ctrl-C (SIGINT) or SIGTERM while `run` is
// still loading a file that takes seconds to read stops the load at once:
// the process exits with status 130 and one short line, within a couple
// of seconds of the signal, having computed nothing.
func TestInterruptWhileLoading(t *testing.T) {
	data := slowGzip(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(sweepbench(t), "run", "--data", data, "--backend", "reference", "--hma", "10:20:10", "--hma3", "12:24:12")
			// The blank-line cap would refuse this file at once: lift it,
			// so that the load takes seconds as it must here.
			cmd.Env = append(os.Environ(), "XDG_DATA_HOME="+t.TempDir(), "SWEEPBENCH_MAX_BLANK_LINES=1000000000")
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				t.Fatalf("the load ended (%v) before the signal, in under 300 ms: make the file larger\n%s", err, errb.String())
			case <-time.After(300 * time.Millisecond):
			}
			sent := time.Now()
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			var err error
			select {
			case err = <-done:
			case <-time.After(5 * time.Second):
				cmd.Process.Kill()
				<-done
				t.Fatalf("still loading 5 s after %v", sig)
			}
			took := time.Since(sent)
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			want := "sweepbench: interrupted while loading the data: nothing was computed\n"
			if code != 130 || errb.String() != want || out.Len() != 0 {
				t.Errorf("exit %d, stderr %q, stdout %q; want 130, %q and nothing", code, errb.String(), out.String(), want)
			}
			if took > 2*time.Second {
				t.Errorf("exited %v after %v", took, sig)
			}
			t.Logf("%v: exited %d, %v after the signal", sig, code, took.Round(time.Millisecond))
		})
	}
}
