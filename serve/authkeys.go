package serve

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"sync"

	gossh "golang.org/x/crypto/ssh"
)

// AuthorizedKeys is an OpenSSH authorized_keys file: the public keys
// allowed in, each with the user it belongs to. It is read again whenever
// the file changes (size, modification time or the file itself), so a key
// added or removed takes effect at the next connection without a restart.
//
// A key's user is the first word of its comment up to any "@" ("alice" for
// "ssh-ed25519 AAAA... alice@laptop"): one user may have several keys. A
// key without a usable comment is its own user, "key-" and 12 hex digits of
// its SHA-256. Options that would narrow where a key may come from or
// when (from=, expiry-time=, cert-authority, principals=) are not enforced
// here, so a key carrying one is left out (fail closed) and the line logged.
type AuthorizedKeys struct {
	path string
	log  *slog.Logger

	mu    sync.Mutex
	stat  os.FileInfo
	keys  map[string]string // gossh.PublicKey.Marshal() -> user
	users map[string]bool
}

// userName is what a user may be called: the name of a directory under
// the data dir, safe as a path element on every OS.
var userName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// unsupportedOptions are authorized_keys options that restrict a key in a
// way this server does not implement: a key with one is not accepted.
var unsupportedOptions = []string{"from=", "expiry-time=", "cert-authority", "principals="}

// LoadAuthorizedKeys reads path. At start every line must parse (the
// operator is there to fix it): an error names the line. A key with an
// option serve does not enforce is left out, at start as on a re-read, and
// log (nil: the default logger) hears of it, and on every re-read of the
// lines that do not parse.
func LoadAuthorizedKeys(path string, log *slog.Logger) (*AuthorizedKeys, error) {
	if log == nil {
		log = slog.Default()
	}
	a := &AuthorizedKeys{path: path, log: log}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, &KeysError{Path: path, Err: err}
	}
	keys, users, bad, skipped, err := readAuthorizedKeys(path)
	if err != nil {
		return nil, err
	}
	if len(bad) > 0 {
		return nil, bad[0]
	}
	logLeftOut(log, skipped)
	if len(keys) == 0 {
		return nil, &KeysError{Path: path, Err: errors.New("no keys: nobody could connect")}
	}
	a.stat, a.keys, a.users = fi, keys, users
	return a, nil
}

// Lookup returns the user key belongs to, reading the file again first
// when it changed. A file that has gone or cannot be read lets nobody in
// until it is back; a bad line is left out (and logged), the others count.
func (a *AuthorizedKeys) Lookup(key gossh.PublicKey) (user string, ok bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.refresh()
	user, ok = a.keys[string(key.Marshal())]
	return user, ok
}

// HasUser reports whether some key belongs to user.
func (a *AuthorizedKeys) HasUser(user string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.refresh()
	return a.users[user]
}

// refresh reads the file again when it changed; a.mu is held.
func (a *AuthorizedKeys) refresh() {
	fi, err := os.Stat(a.path)
	if err != nil {
		if a.stat != nil || a.keys != nil {
			a.log.Warn("authorized keys unreadable: nobody can connect until it is back", "path", a.path, "err", err)
		}
		a.stat, a.keys, a.users = nil, nil, nil
		return
	}
	if a.stat != nil && os.SameFile(fi, a.stat) && fi.Size() == a.stat.Size() && fi.ModTime().Equal(a.stat.ModTime()) {
		return
	}
	keys, users, bad, skipped, err := readAuthorizedKeys(a.path)
	if err != nil {
		a.log.Warn("authorized keys unreadable: nobody can connect until it is back", "path", a.path, "err", err)
		a.stat, a.keys, a.users = nil, nil, nil
		return
	}
	logLeftOut(a.log, append(bad, skipped...))
	a.stat, a.keys, a.users = fi, keys, users
	a.log.Info("authorized keys read", "path", a.path, "keys", len(keys), "users", len(users))
}

// logLeftOut logs each line left out.
func logLeftOut(log *slog.Logger, lines []*KeysError) {
	for _, b := range lines {
		log.Warn("authorized keys: line left out", "path", b.Path, "line", b.Line, "err", b.Err)
	}
}

// readAuthorizedKeys parses the file: the keys by their wire form, the
// users, the lines that do not parse (bad) and the keys left out for an
// option serve does not enforce (skipped), each a *KeysError.
func readAuthorizedKeys(path string) (keys map[string]string, users map[string]bool, bad, skipped []*KeysError, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, nil, nil, &KeysError{Path: path, Err: err}
	}
	keys, users = map[string]string{}, map[string]bool{}
	for i, line := range bytes.Split(b, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		key, comment, options, _, err := gossh.ParseAuthorizedKey(line)
		if err != nil {
			bad = append(bad, &KeysError{Path: path, Line: i + 1, Err: err})
			continue
		}
		if opt := unsupported(options); opt != "" {
			skipped = append(skipped, &KeysError{Path: path, Line: i + 1,
				Err: fmt.Errorf("option %s is not enforced by sweepbench serve: the key is left out", opt)})
			continue
		}
		user := KeyUser(key, comment)
		keys[string(key.Marshal())] = user
		users[user] = true
	}
	return keys, users, bad, skipped, nil
}

func unsupported(options []string) string {
	for _, o := range options {
		for _, u := range unsupportedOptions {
			if strings.HasPrefix(strings.ToLower(o), u) {
				return strings.TrimSuffix(u, "=")
			}
		}
	}
	return ""
}

// KeyUser is the user a key with comment belongs to: the comment's first
// word up to any "@" when that is a valid name (letters, digits, . _ -, at
// most 64, not starting with . _ -), else "key-" and the first 12 hex
// digits of the key's SHA-256.
func KeyUser(key gossh.PublicKey, comment string) string {
	if f := strings.Fields(comment); len(f) > 0 {
		name, _, _ := strings.Cut(f[0], "@")
		if userName.MatchString(name) {
			return name
		}
	}
	sum := sha256.Sum256(key.Marshal())
	return "key-" + hex.EncodeToString(sum[:6])
}
