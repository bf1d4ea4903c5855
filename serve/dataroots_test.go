package serve

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestDataRoots: embedded datasets always; a file, a zip member, a glob or
// a folder under a root; nothing outside, whether named directly, through
// "..", a glob's matches or a symbolic link; without roots, only the
// embedded datasets.
func TestDataRoots(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "market")
	outside := filepath.Join(base, "private")
	for _, d := range []string{root, filepath.Join(root, "btc"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(root, "btc", "a.csv"), filepath.Join(root, "btc", "b.csv"), filepath.Join(outside, "host_ed25519")} {
		if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	links := runtime.GOOS != "windows"
	if links {
		if err := os.Symlink(filepath.Join(outside, "host_ed25519"), filepath.Join(root, "key.csv")); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(filepath.Join(root, "mixed"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(outside, "host_ed25519"), filepath.Join(root, "mixed", "c.csv")); err != nil {
			t.Fatal(err)
		}
	}
	r, err := NewDataRoots([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		spec  string
		ok    bool
		links bool
	}{
		{"embedded:btcusdt-1m", true, false},
		{filepath.Join(root, "btc", "a.csv"), true, false},
		{filepath.Join(root, "btc", "a.zip") + "#member.csv", true, false},
		{filepath.Join(root, "btc", "*.csv"), true, false},
		{filepath.Join(root, "btc"), true, false},
		{filepath.Join(root, "btc", "missing.csv"), true, false}, // the loader says it is missing
		{filepath.Join(outside, "host_ed25519"), false, false},
		{filepath.Join(root, "..", "private", "host_ed25519"), false, false},
		{filepath.Join(root, "btc", "..", "..", "private", "*"), false, false},
		{filepath.Join(base, "*", "host_ed25519"), false, false},
		{outside, false, false},
		{"", false, false},
		{filepath.Join(root, "key.csv"), false, true},
		{filepath.Join(root, "*.csv"), false, true},
		{filepath.Join(root, "mixed"), false, true},
	} {
		if c.links && !links {
			continue
		}
		err := r.Allow(c.spec)
		var de *DataError
		if c.ok && err != nil || !c.ok && (!errors.As(err, &de) || de.Spec != c.spec) {
			t.Errorf("Allow(%q) = %v, want allowed %v", c.spec, err, c.ok)
		}
	}
	var none DataRoots
	if none.Allow("embedded:filusdt-1m") != nil || none.Allow(filepath.Join(root, "btc", "a.csv")) == nil {
		t.Error("without roots: want the embedded datasets only")
	}
	if _, err := NewDataRoots([]string{filepath.Join(root, "btc", "a.csv")}); err == nil {
		t.Error("a file as a data root: accepted")
	}
}
