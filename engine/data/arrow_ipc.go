package data

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Arrow's IPC reader trusts the lengths in a message's flatbuffer
// metadata: a schema field claiming billions of children makes it
// allocate them (a 1 kB file asked for 187 GB and killed the process, as
// fuzzing found), which no recover can catch. So the loaders frame the
// messages themselves (ipcMessages) and check every table, vector and
// string of each message's metadata against its buffer (verifyMessage)
// before Arrow's reader sees it. A Feather v2 file is read as the stream
// it holds (between its magic and its footer); the footer, which repeats
// the schema, is not read.

// ipcMessages is an ipc.MessageReader over an Arrow IPC stream that hands
// on only messages whose metadata verifies, with bodies no larger than
// what is left of the input and Limits.MaxBytes.
type ipcMessages struct {
	r         io.Reader
	remaining int64 // bytes left of the input
	max       int64 // Limits.MaxBytes
}

func (m *ipcMessages) Retain()  {}
func (m *ipcMessages) Release() {}

func (m *ipcMessages) read(n int64, what string) ([]byte, error) {
	if n < 0 || n > m.remaining {
		return nil, fmt.Errorf("%s of %d bytes runs past the end of the data", what, n)
	}
	if n > m.max {
		return nil, &LimitError{What: "decompressed size", Max: m.max, Env: EnvMaxBytes}
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(m.r, b); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	m.remaining -= n
	return b, nil
}

func (m *ipcMessages) Message() (*ipc.Message, error) {
	if m.remaining == 0 {
		return nil, io.EOF // a file's stream may end without the end-of-stream marker
	}
	hdr, err := m.read(4, "message header")
	if err != nil {
		return nil, err
	}
	n := binary.LittleEndian.Uint32(hdr)
	if n == 0xffffffff { // the continuation marker, then the length
		if hdr, err = m.read(4, "message length"); err != nil {
			return nil, err
		}
		n = binary.LittleEndian.Uint32(hdr)
	}
	if n == 0 {
		return nil, io.EOF // end of stream
	}
	meta, err := m.read(int64(n), "message metadata")
	if err != nil {
		return nil, err
	}
	bodyLen, err := verifyMessage(meta)
	if err != nil {
		return nil, err
	}
	body, err := m.read(bodyLen, "message body")
	if err != nil {
		return nil, err
	}
	return ipc.NewMessage(memory.NewBufferBytes(meta), memory.NewBufferBytes(body)), nil
}

// fbuf checks a flatbuffer: every offset, vtable, vector and string within
// the buffer, a bounded number of tables visited.
type fbuf struct {
	b      []byte
	budget int // tables left to visit
}

var errFlatbuffer = errors.New("malformed arrow metadata")

func (f *fbuf) u32(at int) (int, bool) {
	if at < 0 || at+4 > len(f.b) {
		return 0, false
	}
	return int(binary.LittleEndian.Uint32(f.b[at:])), true
}

func (f *fbuf) u16(at int) (int, bool) {
	if at < 0 || at+2 > len(f.b) {
		return 0, false
	}
	return int(binary.LittleEndian.Uint16(f.b[at:])), true
}

// table checks the table at pos and returns its field locator.
func (f *fbuf) table(pos int) (fbTable, bool) {
	if f.budget--; f.budget < 0 {
		return fbTable{}, false
	}
	so, ok := f.u32(pos)
	if !ok {
		return fbTable{}, false
	}
	vt := pos - int(int32(so))
	vsize, ok := f.u16(vt)
	if !ok || vsize < 4 || vsize%2 != 0 || vt+vsize > len(f.b) {
		return fbTable{}, false
	}
	tsize, _ := f.u16(vt + 2)
	if pos+tsize > len(f.b) {
		return fbTable{}, false
	}
	return fbTable{f: f, pos: pos, vt: vt, vsize: vsize, tsize: tsize}, true
}

// fbTable is a checked table.
type fbTable struct {
	f                     *fbuf
	pos, vt, vsize, tsize int
}

// field returns the position of field slot i, -1 when absent; false when
// it does not fit in the table.
func (t fbTable) field(i, size int) (int, bool) {
	vo := 4 + 2*i
	if vo >= t.vsize {
		return -1, true
	}
	off, _ := t.f.u16(t.vt + vo)
	if off == 0 {
		return -1, true
	}
	if off+size > t.tsize {
		return 0, false
	}
	return t.pos + off, true
}

// ref follows the offset in field slot i: -1 when absent.
func (t fbTable) ref(i int) (int, bool) {
	at, ok := t.field(i, 4)
	if !ok || at < 0 {
		return at, ok
	}
	rel, ok := t.f.u32(at)
	if !ok || rel == 0 {
		return 0, false
	}
	return at + rel, at+rel < len(t.f.b)
}

// sub checks the table in field slot i (absent is fine).
func (t fbTable) sub(i int, check func(fbTable) bool) bool {
	at, ok := t.ref(i)
	if !ok || at < 0 {
		return ok
	}
	st, ok := t.f.table(at)
	return ok && (check == nil || check(st))
}

// vector checks the vector in field slot i of elements elem bytes each
// (a vector of tables: elem 4, each checked by check) and returns its
// length.
func (t fbTable) vector(i, elem int, check func(fbTable) bool) (int, bool) {
	at, ok := t.ref(i)
	if !ok || at < 0 {
		return 0, ok
	}
	n, ok := t.f.u32(at)
	if !ok || n > (len(t.f.b)-at-4)/elem {
		return 0, false
	}
	if check != nil {
		for k := 0; k < n; k++ {
			e := at + 4 + 4*k
			rel, _ := t.f.u32(e)
			st, ok := t.f.table(e + rel)
			if rel == 0 || !ok || !check(st) {
				return 0, false
			}
		}
	}
	return n, true
}

// verifyMessage checks an Arrow IPC message's metadata (the Message table
// of Arrow's Message.fbs and what it holds: Schema, RecordBatch,
// DictionaryBatch) and returns the body length it declares.
func verifyMessage(meta []byte) (int64, error) {
	f := &fbuf{b: meta, budget: 1 << 16}
	root, ok := f.u32(0)
	if !ok {
		return 0, errFlatbuffer
	}
	msg, ok := f.table(root)
	if !ok {
		return 0, errFlatbuffer
	}
	// Message: version 0, header_type 1, header 2, bodyLength 3, custom_metadata 4.
	htPos, ok1 := msg.field(1, 1)
	blPos, ok2 := msg.field(3, 8)
	_, ok3 := msg.vector(4, 4, keyValue)
	if !ok1 || !ok2 || !ok3 {
		return 0, errFlatbuffer
	}
	var bodyLen int64
	if blPos >= 0 {
		bodyLen = int64(binary.LittleEndian.Uint64(meta[blPos:]))
	}
	headerType := byte(0)
	if htPos >= 0 {
		headerType = meta[htPos]
	}
	var check func(fbTable) bool
	switch headerType {
	case 1: // Schema
		check = schema
	case 2: // DictionaryBatch: id 0, data 1, isDelta 2
		check = func(t fbTable) bool { return t.sub(1, recordBatch) }
	case 3: // RecordBatch
		check = recordBatch
	}
	if !msg.sub(2, check) {
		return 0, errFlatbuffer
	}
	return bodyLen, nil
}

// keyValue: key 0, value 1 (strings).
func keyValue(t fbTable) bool {
	_, ok1 := t.vector(0, 1, nil)
	_, ok2 := t.vector(1, 1, nil)
	return ok1 && ok2
}

// schema: endianness 0, fields 1, custom_metadata 2, features 3 (int64).
func schema(t fbTable) bool {
	_, ok1 := t.vector(1, 4, fieldOf(0))
	_, ok2 := t.vector(2, 4, keyValue)
	_, ok3 := t.vector(3, 8, nil)
	return ok1 && ok2 && ok3
}

// fieldOf checks a Field at a nesting depth: name 0, nullable 1,
// type_type 2, type 3 (a type table: Timestamp's timezone and Union's
// typeIds are its vectors), dictionary 4 (indexType 1), children 5,
// custom_metadata 6.
func fieldOf(depth int) func(fbTable) bool {
	return func(t fbTable) bool {
		if depth > 64 {
			return false
		}
		_, ok := t.vector(0, 1, nil)
		typeType := byte(0)
		if at, okt := t.field(2, 1); !okt {
			return false
		} else if at >= 0 {
			typeType = t.f.b[at]
		}
		ok = ok && t.sub(3, func(ty fbTable) bool {
			switch typeType {
			case 10: // Timestamp: unit 0, timezone 1 (a string)
				_, ok := ty.vector(1, 1, nil)
				return ok
			case 14: // Union: mode 0, typeIds 1 (int32)
				_, ok := ty.vector(1, 4, nil)
				return ok
			}
			return true // the other types hold scalars only
		})
		ok = ok && t.sub(4, func(d fbTable) bool { return d.sub(1, nil) })
		if ok {
			_, ok = t.vector(5, 4, fieldOf(depth+1))
		}
		if ok {
			_, ok = t.vector(6, 4, keyValue)
		}
		return ok
	}
}

// recordBatch: length 0, nodes 1 (16-byte structs), buffers 2 (16-byte
// structs), compression 3, variadicBufferCounts 4 (int64).
func recordBatch(t fbTable) bool {
	_, ok1 := t.vector(1, 16, nil)
	_, ok2 := t.vector(2, 16, nil)
	ok3 := t.sub(3, nil)
	_, ok4 := t.vector(4, 8, nil)
	return ok1 && ok2 && ok3 && ok4
}
