package data

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// EnvCacheDir names the environment variable that moves the parsed-dataset
// cache to another folder, or turns it off with the value "off".
const EnvCacheDir = "SWEEPBENCH_CACHE_DIR"

// CacheDir returns the folder of the parsed-dataset cache: the value of
// SWEEPBENCH_CACHE_DIR, else os.UserCacheDir()/sweepbench/datasets
// (~/.cache/sweepbench/datasets on Linux); "" when the cache is off
// (SWEEPBENCH_CACHE_DIR=off, or no user cache folder is known).
//
// LoadFile keeps every file it parses there, in the parsed form
// (parsed.go), under a key of what the parse depended on: the SHA-256 of
// the file's bytes as stored, loaderVersion, the path as given and every
// Option that changes what is read (cacheKey). A load whose key matches an
// entry reads the entry instead of parsing (the file is still read once
// to hash it); an entry that is stale, damaged or truncated is a miss,
// parsed again and replaced. The cache never fails a load: a folder that
// cannot be written only costs the next load its parse. Folders and
// globs are cached file by file. Entries are written 0600 in a folder
// created 0700, each to a temporary file renamed into place; nothing
// removes them but the user (rm -r the folder any time).
//
// SetCacheDir puts it elsewhere for the whole process.
func CacheDir() string {
	cacheDirSet.Lock()
	set, dir := cacheDirSet.set, cacheDirSet.dir
	cacheDirSet.Unlock()
	if set {
		return dir
	}
	switch v := os.Getenv(EnvCacheDir); {
	case strings.EqualFold(strings.TrimSpace(v), "off"):
		return ""
	case v != "":
		return v
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "sweepbench", "datasets")
}

// cacheDirSet is SetCacheDir's choice, when one was made.
var cacheDirSet struct {
	sync.Mutex
	set bool
	dir string
}

// SetCacheDir makes dir the folder of the parsed-dataset cache of every
// load of this process ("" turns the cache off), whatever
// SWEEPBENCH_CACHE_DIR and the user's cache folder say: a server that
// writes nothing outside its data folder keeps it there (serve). restore
// puts back the choice it replaced.
func SetCacheDir(dir string) (restore func()) {
	cacheDirSet.Lock()
	defer cacheDirSet.Unlock()
	set, old := cacheDirSet.set, cacheDirSet.dir
	cacheDirSet.set, cacheDirSet.dir = true, dir
	return func() {
		cacheDirSet.Lock()
		defer cacheDirSet.Unlock()
		cacheDirSet.set, cacheDirSet.dir = set, old
	}
}

// cacheKey is what a parse depends on besides the code (loaderVersion).
type cacheKey struct {
	source string // hex SHA-256 of the bytes as stored: Info.SHA256 of one file
	// name is the file as named to the loader (the path as given, with any
	// "#member", or "embedded:NAME"): Info.Name, and the path LEAN's
	// conventions (security type, market, date) are read from.
	name string
	abs  string  // the absolute path of name, "" for embedded data: "a.csv" of two folders gets two slots
	opt  Options // Limits resolved
	zone string  // zoneRules of the zones local times may be read in
}

// newCacheKey returns the key of a load of name, whose bytes hash to
// source, with opt (Limits resolved).
func newCacheKey(source, name, abs string, opt Options) cacheKey {
	return cacheKey{source: source, name: name, abs: abs, opt: opt, zone: zoneRulesOf(opt.Location)}
}

// slot is the file name of the key's entry: everything but the source's
// hash and the zones' rules, so that an entry of a file that changed is
// replaced, not kept beside the new one.
func (k cacheKey) slot() string {
	w := k.appendSlot()
	sum := sha256.Sum256(w.b)
	return hex.EncodeToString(sum[:]) + ".bars"
}

// appendSlot encodes the fields of the slot.
func (k cacheKey) appendSlot() metaWriter {
	var w metaWriter
	w.str("sweepbench parsed dataset")
	w.str(k.name)
	w.str(k.abs)
	w.str(k.opt.Layout)
	w.str(k.opt.TimeColumn)
	w.str(k.opt.LEANAsset)
	loc := ""
	if k.opt.Location != nil {
		loc = "zone " + k.opt.Location.String()
	}
	w.str(loc)
	// Limits decide whether a parse succeeds: a file refused under
	// today's limits must not load from an entry parsed under larger ones.
	// MaxFiles bounds folders, which are cached file by file.
	w.int(k.opt.Limits.MaxBytes)
	w.int(int64(k.opt.Limits.MaxLine))
	w.int(int64(k.opt.Limits.MaxFields))
	w.int(int64(k.opt.Limits.MaxBlankLines))
	return w
}

// digest is the key an entry is stored under (the header's key): the
// slot's fields, the loader version, the source's hash and the zones'
// rules.
func (k cacheKey) digest() [32]byte {
	w := k.appendSlot()
	w.int(loaderVersion)
	w.str(k.source)
	w.str(k.zone)
	return sha256.Sum256(w.b)
}

// The zone a loader reads local times in, unless Options.Location says
// otherwise, whose rules come from the system's (or Go's) tz database:
// UTC and LEAN fxcm's UTC-05 are fixed in the code.
const defaultRulesZone = "America/New_York" // LEAN equity and option files, market usa

var defaultZoneRules = sync.OnceValue(func() string {
	loc, err := time.LoadLocation(defaultRulesZone)
	if err != nil {
		return defaultRulesZone + ": " + err.Error()
	}
	return zoneRules(loc)
})

// zoneRulesOf returns zoneRules of loc, or of the loaders' default zone
// when loc is nil. The last zone's rules are kept: the files of a folder
// share one Location.
func zoneRulesOf(loc *time.Location) string {
	if loc == nil {
		return defaultZoneRules()
	}
	lastZone.Lock()
	defer lastZone.Unlock()
	if lastZone.loc != loc {
		lastZone.loc, lastZone.rules = loc, zoneRules(loc)
	}
	return lastZone.rules
}

var lastZone struct {
	sync.Mutex
	loc   *time.Location
	rules string
}

// zoneRules returns a hex SHA-256 of loc's name and every change of its
// UTC offset from 1800 to 2200 (instant, abbreviation, offset in
// seconds), so that a tz database update that moves a local time misses
// the cache. About 300 steps for New York: under a millisecond.
func zoneRules(loc *time.Location) string {
	h := sha256.New()
	io.WriteString(h, loc.String())
	t, end := time.Date(1800, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < 10000 && t.Before(end); i++ {
		lt := t.In(loc)
		name, offset := lt.Zone()
		io.WriteString(h, "\n"+strconv.FormatInt(t.Unix(), 10)+" "+name+" "+strconv.Itoa(offset))
		_, next := lt.ZoneBounds()
		if !next.After(t) {
			break // the zone goes on forever
		}
		t = next
	}
	return hex.EncodeToString(h.Sum(nil))
}

// loadCached returns the entry of k in the cache folder dir, or parses
// (parse) and stores the result under k with the source's hash the
// parse itself computed (Info.SHA256: the bytes may have changed since
// they were hashed for the lookup). dir "" parses.
func loadCached(dir string, k cacheKey, parse func() (*Dataset, error)) (*Dataset, error) {
	if dir == "" {
		return parse()
	}
	path := filepath.Join(dir, k.slot())
	if d := readEntry(path, k.digest()); d != nil && d.Info.SHA256 == k.source {
		return d, nil // Info.SHA256 is the hash of the bytes read now
	}
	d, err := parse()
	if err != nil {
		return nil, err
	}
	k.source = d.Info.SHA256
	writeEntry(dir, path, encodeParsed(d, k.digest()))
	return d, nil
}

// readEntry reads the entry at path when it holds key; nil for a miss (no
// entry, another key, damaged, truncated, unreadable).
func readEntry(path string, key [32]byte) *Dataset {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	return readParsed(f, fi.Size(), key)
}

// writeEntry writes b to path atomically: a temporary file in dir (0600)
// renamed into place, dir created 0700. Failures are ignored (the caller
// has its Dataset); no temporary file is left behind by one.
func writeEntry(dir, path string, b []byte) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return
	}
	f, err := os.CreateTemp(dir, ".tmp-*.bars")
	if err != nil {
		return
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
}

// hashFile returns the hex SHA-256 of the regular file at p. A file
// larger than maxBytes is not hashed (errTooLarge): its parse stops at
// maxBytes and says so.
func hashFile(p string, maxBytes int64) (string, error) {
	f, size, err := openRegular(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if size > maxBytes {
		return "", errTooLarge
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return sumOf(h), nil
}

var errTooLarge = errors.New("larger than Limits.MaxBytes")
