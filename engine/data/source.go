package data

import (
	"archive/zip"
	"bufio"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// LoadFile reads the file at path, decompresses it when it is gzip or zip
// (found by the magic bytes, whatever the name), detects the layout unless
// opt.Layout forces one, parses and validates it as it streams.
//
// A zip must hold one file, or path names the member: "month.zip#BTCUSDT-1m-2024-01.csv".
// A folder or a glob pattern (* ? [) loads every file it holds as one
// dataset (see loadMany). Only regular files are read: a device, a FIFO
// or a socket is refused by name. Input problems come back as *Error.
func LoadFile(path string, opt Options) (*Dataset, error) {
	return LoadFileContext(context.Background(), path, opt)
}

// LoadFileContext is LoadFile under ctx: every read of the file and of its
// decompressed text checks ctx, so a huge or slow file stops loading
// within a read of ctx being done, with an *Error wrapping ctx's error
// (errors.Is(err, context.Canceled)).
func LoadFileContext(ctx context.Context, path string, opt Options) (*Dataset, error) {
	lim, err := opt.Limits.resolve()
	if err != nil {
		return nil, &Error{File: path, Reason: err.Error()}
	}
	opt.Limits, opt.ctx = lim, ctx
	if many, err := isMany(path); err != nil {
		return nil, err
	} else if many {
		return loadMany(path, opt)
	}
	d, err := loadOne(path, opt)
	if err != nil {
		return nil, err
	}
	d.Info.Path = path
	return d, nil
}

// splitMember separates a "#member" suffix naming a zip member. A path
// that exists as written keeps its '#'.
func splitMember(p string) (file, member string) {
	i := strings.LastIndexByte(p, '#')
	if i < 0 {
		return p, ""
	}
	if _, err := os.Stat(p); err == nil {
		return p, ""
	}
	return p[:i], p[i+1:]
}

// openRegular opens a regular file for reading and returns its size. Any
// other kind of file is refused before it is opened: reading /dev/zero
// would never end, a FIFO has no end either, and opening a device may do
// something (rewind a tape). The open does not wait (O_NONBLOCK on unix,
// cleared once the file is known to be regular), and the opened
// descriptor is checked again: a file swapped for a FIFO between the check
// and the open is refused at once rather than waiting for a writer.
func openRegular(p string) (*os.File, int64, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return nil, 0, statError(p, err)
	}
	if e := notRegular(p, fi); e != nil {
		return nil, 0, e
	}
	if beforeOpen != nil {
		beforeOpen(p)
	}
	f, err := openNoWait(p)
	if err != nil {
		return nil, 0, statError(p, err)
	}
	if fi, err = f.Stat(); err == nil {
		if e := notRegular(p, fi); e != nil {
			f.Close()
			return nil, 0, e
		}
		err = setBlocking(f)
	}
	if err != nil {
		f.Close()
		return nil, 0, statError(p, err)
	}
	return f, fi.Size(), nil
}

// beforeOpen, when set (by tests), runs between openRegular's check of
// the path and its open: where another process may swap the file.
var beforeOpen func(path string)

func statError(p string, err error) *Error {
	var de *Error
	if errors.As(err, &de) { // an interrupted load
		return de
	}
	reason := err.Error()
	var pe *fs.PathError
	if errors.As(err, &pe) {
		reason = pe.Err.Error()
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		reason = "no such file"
	case errors.Is(err, fs.ErrPermission):
		reason = "permission denied: the file cannot be read by this user"
	}
	return &Error{File: p, Reason: reason, Err: err}
}

// notRegular refuses anything but a regular file (a folder is loadMany's).
func notRegular(p string, fi fs.FileInfo) *Error {
	m := fi.Mode()
	if m.IsRegular() {
		return nil
	}
	kind := "not a regular file"
	switch {
	case m.IsDir():
		kind = "a folder"
	case m&fs.ModeNamedPipe != 0:
		kind = "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		kind = "a socket"
	case m&fs.ModeCharDevice != 0:
		kind = "a character device"
	case m&fs.ModeDevice != 0:
		kind = "a device"
	}
	return &Error{File: p, Reason: kind + ", not a regular file: only files are read (save the data to a file first)"}
}

// loadOne loads one file (a zip's member when it is a zip) through the
// parsed-dataset cache (CacheDir): the file is hashed, and parsed only when
// the cache holds no entry for its hash, p and opt.
func loadOne(p string, opt Options) (*Dataset, error) {
	dir := CacheDir()
	if dir == "" {
		return parseOne(p, opt)
	}
	file, _ := splitMember(p)
	sum, err := hashFile(file, opt.Limits.MaxBytes)
	if err != nil {
		return parseOne(p, opt) // which says what is wrong with the file
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		abs = p
	}
	return loadCached(dir, newCacheKey(sum, p, abs, opt), func() (*Dataset, error) { return parseOne(p, opt) })
}

// parseOne parses one file (a zip's member when it is a zip).
func parseOne(p string, opt Options) (*Dataset, error) {
	file, member := splitMember(p)
	osf, size, err := openRegular(file)
	if err != nil {
		return nil, err
	}
	defer osf.Close()
	f := withContext(opt.ctx, osf, file)
	var magic [8]byte
	n, _ := io.ReadFull(f, magic[:])
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, statError(file, err)
	}
	if kind := columnar(magic[:n]); kind != "" && member == "" {
		h := sha256.New()
		if _, err := io.Copy(h, f); err != nil {
			return nil, statError(file, err)
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil, statError(file, err)
		}
		d, err := loadColumnar(f, size, kind, origin{name: p, path: file}, opt)
		if err != nil {
			return nil, err
		}
		d.Info.SHA256 = sumOf(h)
		return d, nil
	}
	if isZip(magic[:n]) {
		h := sha256.New()
		if _, err := io.Copy(h, f); err != nil {
			return nil, statError(file, err)
		}
		d, err := loadZip(f, size, sumOf(h), origin{name: file, path: file, member: member}, opt)
		if err != nil {
			return nil, err
		}
		d.Info.Name = p
		return d, nil
	}
	if member != "" {
		return nil, &Error{File: file, Reason: "not a zip, yet a member (" + quote(member) + ") was named after '#'"}
	}
	h := sha256.New()
	br := bufio.NewReader(io.TeeReader(f, h))
	d, err := parseStream(br, origin{name: p, path: file}, opt, size)
	if err != nil {
		return nil, err
	}
	if _, err := io.Copy(io.Discard, br); err != nil { // the rest of the bytes, for the hash
		return nil, statError(file, err)
	}
	d.Info.SHA256 = sumOf(h)
	return d, nil
}

// loadZip loads the one file of a zip, or org.member. Messages name it
// "path.zip#member"; the hash is the zip's (sum).
func loadZip(ra io.ReaderAt, size int64, sum string, org origin, opt Options) (*Dataset, error) {
	zr, err := zip.NewReader(ra, size)
	if err != nil {
		return nil, &Error{File: org.path, Reason: "zip: " + err.Error(), Err: err}
	}
	var files []*zip.File
	for _, zf := range zr.File {
		if !zf.FileInfo().IsDir() {
			files = append(files, zf)
		}
	}
	var pick *zip.File
	switch {
	case org.member != "":
		for _, zf := range files {
			if zf.Name == org.member {
				pick = zf
			}
		}
		if pick == nil { // by base name, when that is unique
			for _, zf := range files {
				if path.Base(zf.Name) == org.member {
					if pick != nil {
						pick = nil
						break
					}
					pick = zf
				}
			}
		}
		if pick == nil {
			return nil, &Error{File: org.path, Reason: "no member " + quote(org.member) + " in the zip; it holds " + memberList(files)}
		}
	case len(files) == 0:
		return nil, &Error{File: org.path, Reason: "empty zip: no file in it"}
	case len(files) > 1:
		return nil, &Error{File: org.path, Reason: "the zip holds " + strconv.Itoa(len(files)) + " files: " + memberList(files) +
			"; name one after '#', e.g. " + org.path + "#" + files[0].Name}
	default:
		pick = files[0]
	}
	org.member = pick.Name
	org.name = org.path + "#" + pick.Name
	rc, err := pick.Open()
	if err != nil {
		return nil, &Error{File: org.name, Reason: "zip: " + err.Error(), Err: err}
	}
	defer rc.Close()
	zipped := &named{r: rc, name: org.name, what: "zip"}
	d, err := parseStream(zipped, org, opt, int64(pick.UncompressedSize64))
	if err != nil {
		return nil, err
	}
	// Read the member to its end: its checksum is verified there.
	if _, err := io.Copy(io.Discard, zipped); err != nil {
		return nil, err
	}
	d.Info.SHA256 = sum
	return d, nil
}

// memberList names a zip's members for a message: the first ten, and how
// many more.
func memberList(files []*zip.File) string {
	var names []string
	for i, zf := range files {
		if i == 10 {
			names = append(names, "and "+strconv.Itoa(len(files)-10)+" more")
			break
		}
		names = append(names, clipName(zf.Name))
	}
	return strings.Join(names, ", ")
}

// named wraps a reader's failures (a damaged zip member) as *Error naming
// the file and what failed.
type named struct {
	r          io.Reader
	name, what string
}

func (n *named) Read(p []byte) (int, error) {
	k, err := n.r.Read(p)
	if err != nil && err != io.EOF {
		var de *Error
		if !errors.As(err, &de) {
			err = &Error{File: n.name, Reason: n.what + ": " + err.Error(), Err: err}
		}
	}
	return k, err
}
