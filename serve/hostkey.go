package serve

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	gossh "golang.org/x/crypto/ssh"
)

// HostKey reads the server's host key from path, or, when there is no
// file there, generates an Ed25519 key and writes it there in OpenSSH's
// format with mode 0600 (its directory 0700), so that clients see the same
// host key on every start. created says which. An existing key that
// others may read (any group or other permission bit, on Unix) is refused,
// as sshd refuses one: it is a secret.
func HostKey(path string) (signer gossh.Signer, created bool, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		if err := writeHostKey(path); err != nil {
			return nil, false, err
		}
		created = true
		b, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, false, &HostKeyError{Path: path, Op: "read", Err: err}
	}
	if runtime.GOOS != "windows" {
		fi, err := os.Stat(path)
		if err != nil {
			return nil, false, &HostKeyError{Path: path, Op: "check", Err: err}
		}
		if perm := fi.Mode().Perm(); perm&0o077 != 0 {
			return nil, false, &HostKeyError{Path: path, Op: "check",
				Err: fmt.Errorf("mode %#o lets others read the private key (chmod 600 %s)", perm, path)}
		}
	}
	signer, err = gossh.ParsePrivateKey(b)
	if err != nil {
		return nil, false, &HostKeyError{Path: path, Op: "parse", Err: err}
	}
	return signer, created, nil
}

// writeHostKey generates an Ed25519 key into path: written to a
// temporary file of mode 0600 beside it, then linked into place so that
// two servers starting at once cannot overwrite each other's key.
func writeHostKey(path string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return &HostKeyError{Path: path, Op: "create", Err: err}
	}
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return &HostKeyError{Path: path, Op: "create", Err: err}
	}
	block, err := gossh.MarshalPrivateKey(priv, "sweepbench serve host key")
	if err != nil {
		return &HostKeyError{Path: path, Op: "create", Err: err}
	}
	tmp, err := os.CreateTemp(dir, ".host-key-*")
	if err != nil {
		return &HostKeyError{Path: path, Op: "create", Err: err}
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil && runtime.GOOS != "windows" {
		tmp.Close()
		return &HostKeyError{Path: path, Op: "create", Err: err}
	}
	if _, err := tmp.Write(pem.EncodeToMemory(block)); err != nil {
		tmp.Close()
		return &HostKeyError{Path: path, Op: "create", Err: err}
	}
	if err := tmp.Close(); err != nil {
		return &HostKeyError{Path: path, Op: "create", Err: err}
	}
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, os.ErrExist) {
		return &HostKeyError{Path: path, Op: "create", Err: err}
	}
	return nil
}
