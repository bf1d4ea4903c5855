package data

import (
	"encoding/binary"
	"errors"
	"io"
)

// The Parquet reader (parquet-go) sizes its buffers from the file's own
// metadata: a footer length, Thrift list lengths, page sizes. A hostile
// file of a kilobyte asked it for 3 GB (fuzzing found it), and an
// allocation the runtime cannot make kills the process, past any
// recover. So before parquet-go reads anything the loader checks what it
// will trust: the footer's length against the file, every length inside
// the footer's Thrift against the footer's bytes, and the header of every
// page it will read against its column chunk (checkParquet, checkPages).

var errThrift = errors.New("malformed parquet metadata")

// thriftWalk checks one Thrift compact-protocol struct at the start of b:
// every list, set, map and binary length fits in the bytes left (each
// element takes at least one byte), nesting at most 64. It returns the
// struct's length and, of the top struct, the integer fields whose ids
// want lists (others are skipped).
type thriftWalk struct {
	b    []byte
	pos  int
	want map[int16]*int64 // top-level integer fields to read
}

func (w *thriftWalk) byte1() (byte, error) {
	if w.pos >= len(w.b) {
		return 0, errThrift
	}
	c := w.b[w.pos]
	w.pos++
	return c, nil
}

func (w *thriftWalk) uvarint() (uint64, error) {
	v, n := binary.Uvarint(w.b[min(w.pos, len(w.b)):])
	if n <= 0 {
		return 0, errThrift
	}
	w.pos += n
	return v, nil
}

func (w *thriftWalk) skip(n uint64) error {
	if n > uint64(len(w.b)-w.pos) {
		return errThrift
	}
	w.pos += int(n)
	return nil
}

// value skips one value of compact type t.
func (w *thriftWalk) value(t byte, depth int) (int64, error) {
	switch t {
	case 1, 2: // boolean true, false (in a field header; a list holds them as bytes)
		return 0, nil
	case 3: // byte
		c, err := w.byte1()
		return int64(c), err
	case 4, 5, 6: // i16, i32, i64: zigzag varints
		u, err := w.uvarint()
		return int64(u>>1) ^ -int64(u&1), err
	case 7: // double
		return 0, w.skip(8)
	case 8: // binary
		n, err := w.uvarint()
		if err != nil {
			return 0, err
		}
		return 0, w.skip(n)
	case 9, 10: // list, set
		h, err := w.byte1()
		if err != nil {
			return 0, err
		}
		n, et := uint64(h>>4), h&0x0f
		if n == 15 {
			if n, err = w.uvarint(); err != nil {
				return 0, err
			}
		}
		if n > uint64(len(w.b)-w.pos) {
			return 0, errThrift
		}
		for i := uint64(0); i < n; i++ {
			if et == 1 || et == 2 {
				et = 3 // booleans in a list are one byte each
			}
			if _, err := w.value(et, depth+1); err != nil {
				return 0, err
			}
		}
		return 0, nil
	case 11: // map
		n, err := w.uvarint()
		if err != nil || n == 0 {
			return 0, err
		}
		kv, err := w.byte1()
		if err != nil || n > uint64(len(w.b)-w.pos)/2 {
			return 0, errThrift
		}
		for i := uint64(0); i < n; i++ {
			if _, err := w.value(kv>>4, depth+1); err != nil {
				return 0, err
			}
			if _, err := w.value(kv&0x0f, depth+1); err != nil {
				return 0, err
			}
		}
		return 0, nil
	case 12: // struct
		return 0, w.structure(depth+1, nil)
	case 13: // uuid
		return 0, w.skip(16)
	}
	return 0, errThrift
}

// structure skips a struct, reading the wanted integer fields when want
// is not nil.
func (w *thriftWalk) structure(depth int, want map[int16]*int64) error {
	if depth > 64 {
		return errThrift
	}
	var id int16
	for {
		h, err := w.byte1()
		if err != nil {
			return err
		}
		t := h & 0x0f
		if t == 0 {
			return nil // stop
		}
		if d := h >> 4; d != 0 {
			id += int16(d)
		} else {
			u, err := w.uvarint()
			if err != nil {
				return err
			}
			id = int16(int64(u>>1) ^ -int64(u&1))
		}
		v, err := w.value(t, depth)
		if err != nil {
			return err
		}
		if p := want[id]; p != nil && t >= 3 && t <= 6 {
			*p = v
		}
	}
}

// checkParquet checks a Parquet file's footer before parquet-go reads it:
// its length within the file, its Thrift lengths within itself.
func checkParquet(r io.ReaderAt, size int64) error {
	if size < 12 {
		return errors.New("file too short for parquet")
	}
	var tail [8]byte
	if _, err := r.ReadAt(tail[:], size-8); err != nil {
		return err
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	if string(tail[4:]) != "PAR1" {
		return errors.New("no parquet footer (truncated, or encrypted)")
	}
	if n > size-12 {
		return errors.New("the footer's length runs past the start of the file")
	}
	footer := make([]byte, n)
	if _, err := r.ReadAt(footer, size-8-n); err != nil {
		return err
	}
	w := &thriftWalk{b: footer}
	if err := w.structure(0, nil); err != nil {
		return errors.New("malformed footer")
	}
	return nil
}

// pageRange is one column chunk's bytes: where its pages are, how many
// rows its row group holds.
type pageRange struct {
	start, end int64
	rows       int64
}

// checkPages reads the page headers of a column chunk before parquet-go
// does: each header's Thrift within bounds, each page within the chunk, its
// uncompressed size within maxBytes, its value count within the row
// group's rows (a flat column: one value a row) or, for a dictionary page,
// its size in bytes.
func checkPages(r io.ReaderAt, size int64, pr pageRange, maxBytes int64) error {
	if pr.start < 4 || pr.end > size-8 || pr.start > pr.end {
		return errors.New("a column chunk lies outside the file")
	}
	buf := make([]byte, 64<<10)
	for pos := pr.start; pos < pr.end; {
		n := min(int64(len(buf)), pr.end-pos)
		k, err := r.ReadAt(buf[:n], pos)
		if int64(k) < n {
			return err
		}
		var typ, uncompressed, compressed int64 = -1, -1, -1
		w := &thriftWalk{b: buf[:n]}
		if err := w.structure(0, map[int16]*int64{1: &typ, 2: &uncompressed, 3: &compressed}); err != nil {
			return errors.New("malformed page header")
		}
		values, err := pageValues(buf[:w.pos])
		if err != nil {
			return err
		}
		switch {
		case compressed < 0 || uncompressed < 0:
			return errors.New("a page header without its sizes")
		case pos+int64(w.pos)+compressed > pr.end:
			return errors.New("a page runs past its column chunk")
		case uncompressed > maxBytes:
			return &LimitError{What: "decompressed size", Max: maxBytes, Env: EnvMaxBytes}
		case typ == 2 && values > uncompressed: // dictionary page: a value takes a byte or more
			return errors.New("a dictionary page claims more values than bytes")
		case typ != 2 && values > pr.rows:
			return errors.New("a page claims more values than its row group has rows")
		}
		pos += int64(w.pos) + compressed
	}
	return nil
}

// pageValues reads num_values (field 1) of the page header's data page
// (field 5), dictionary page (7) or data page v2 (8) header.
func pageValues(hdr []byte) (int64, error) {
	w := &thriftWalk{b: hdr}
	var values int64
	var id int16
	for {
		h, err := w.byte1()
		if err != nil {
			return 0, errThrift
		}
		t := h & 0x0f
		if t == 0 {
			return values, nil
		}
		if d := h >> 4; d != 0 {
			id += int16(d)
		} else {
			u, err := w.uvarint()
			if err != nil {
				return 0, errThrift
			}
			id = int16(int64(u>>1) ^ -int64(u&1))
		}
		if t == 12 && (id == 5 || id == 7 || id == 8) {
			var v int64
			if err := w.structure(1, map[int16]*int64{1: &v}); err != nil {
				return 0, errThrift
			}
			values = max(values, v)
			continue
		}
		if _, err := w.value(t, 0); err != nil {
			return 0, errThrift
		}
	}
}
