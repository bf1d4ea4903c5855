package serve

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	gossh "golang.org/x/crypto/ssh"
)

// TestHostKey: created on first start (Ed25519, mode 0600, its directory
// 0700), the same key read back on the next, refused once others may read
// it.
func TestHostKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "host_ed25519")
	s1, created, err := HostKey(path)
	if err != nil || !created {
		t.Fatalf("first start: created %v, err %v", created, err)
	}
	if s1.PublicKey().Type() != gossh.KeyAlgoED25519 {
		t.Fatalf("key type %s, want ed25519", s1.PublicKey().Type())
	}
	if runtime.GOOS != "windows" {
		for p, want := range map[string]os.FileMode{path: 0o600, filepath.Dir(path): 0o700} {
			fi, err := os.Stat(p)
			if err != nil || fi.Mode().Perm() != want {
				t.Fatalf("%s: mode %v (err %v), want %#o", p, fi.Mode().Perm(), err, want)
			}
		}
	}
	s2, created, err := HostKey(path)
	if err != nil || created {
		t.Fatalf("second start: created %v, err %v", created, err)
	}
	if a, b := gossh.FingerprintSHA256(s1.PublicKey()), gossh.FingerprintSHA256(s2.PublicKey()); a != b {
		t.Fatalf("the key changed between starts: %s, then %s", a, b)
	}
	if runtime.GOOS == "windows" {
		return
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = HostKey(path)
	var he *HostKeyError
	if !errors.As(err, &he) || he.Op != "check" || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("mode 0644: got %v, want a HostKeyError (check) saying chmod 600", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("not a key"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err = HostKey(path)
	if !errors.As(err, &he) || he.Op != "parse" {
		t.Fatalf("garbage: got %v, want a HostKeyError (parse)", err)
	}
}
