package data

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"io"
	"math"
	"time"
)

// loaderVersion names what a parse produces: bump it whenever a loader
// reads any file differently, Info gains, loses or recomputes a field, or
// the parsed form below changes. It is stored in every parsed file and is
// part of the cache key, so a new version misses every old entry (and the
// embedded sets' pre-parsed forms until `go generate ./engine/data` runs).
const loaderVersion = 2

// The parsed form of a Dataset: what the cache stores and what the
// embedded sets ship in (embedded/*.bars). Integers are little-endian.
//
//	offset  size   field
//	0       8      magic "SWBBARS\n"
//	8       4      loaderVersion (uint32)
//	12      4      meta length m, bytes (uint32)
//	16      8      bar count n (uint64)
//	24      32     key: cacheKey.digest, the SHA-256 of what the parse depended on
//	56      4      CRC-32C (Castagnoli) of bytes [0, 56) and [64, end)
//	60      4      zero
//	64      m      meta: Info, and the rows of the first and last bars (appendMeta)
//	64+m    p      zero padding to a multiple of 8 bytes (p < 8)
//	64+m+p  8n x 6 the columns Time (int64 Unix ns), Open, High, Low, Close,
//	               Volume (IEEE 754 float64 bits), n values each
//
// The CRC detects a damaged or truncated file (every burst of up to 32
// bits, any other damage but for one chance in 2^32), not a forged one:
// whoever can write the cache folder (0700) can also change the data it
// was parsed from. CRC-32C runs in hardware on amd64 and arm64 (0.4 ms for
// the 8.4 MB of the FIL set here, SHA-256 5 ms).
const (
	parsedMagic     = "SWBBARS\n"
	parsedHeaderLen = 64
	parsedCRCAt     = 56
	parsedColumns   = 6
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// encodeParsed returns d in the parsed form, stored under key.
func encodeParsed(d *Dataset, key [32]byte) []byte {
	meta := appendMeta(nil, d)
	n := d.Bars.Len()
	pad := (8 - len(meta)%8) % 8
	b := make([]byte, parsedHeaderLen, parsedHeaderLen+len(meta)+pad+parsedColumns*8*n)
	copy(b, parsedMagic)
	binary.LittleEndian.PutUint32(b[8:], loaderVersion)
	binary.LittleEndian.PutUint32(b[12:], uint32(len(meta)))
	binary.LittleEndian.PutUint64(b[16:], uint64(n))
	copy(b[24:56], key[:])
	b = append(b, meta...)
	b = append(b, make([]byte, pad)...)
	for _, v := range d.Bars.Time {
		b = binary.LittleEndian.AppendUint64(b, uint64(v))
	}
	for _, col := range [][]float64{d.Bars.Open, d.Bars.High, d.Bars.Low, d.Bars.Close, d.Bars.Volume} {
		for _, v := range col {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
		}
	}
	crc := crc32.Update(crc32.Update(0, castagnoli, b[:parsedCRCAt]), castagnoli, b[parsedHeaderLen:])
	binary.LittleEndian.PutUint32(b[parsedCRCAt:], crc)
	return b
}

// readParsed reads the parsed form from r, which holds size bytes, and
// returns its Dataset when the form is whole (its length and CRC agree),
// of this loaderVersion and stored under key; nil otherwise. It never
// allocates more than size bytes' worth of bars.
func readParsed(r io.Reader, size int64, key [32]byte) *Dataset {
	var h [parsedHeaderLen]byte
	if size < parsedHeaderLen {
		return nil
	}
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return nil
	}
	if string(h[:8]) != parsedMagic || binary.LittleEndian.Uint32(h[8:]) != loaderVersion ||
		!bytes.Equal(h[24:56], key[:]) || binary.LittleEndian.Uint32(h[60:]) != 0 {
		return nil
	}
	m := int64(binary.LittleEndian.Uint32(h[12:]))
	n64 := binary.LittleEndian.Uint64(h[16:])
	pad := (8 - m%8) % 8
	body := size - parsedHeaderLen - m - pad
	if body < 0 || n64 > uint64(body)/(parsedColumns*8) || int64(n64)*parsedColumns*8 != body {
		return nil
	}
	n := int(n64)
	crc := crc32.Update(0, castagnoli, h[:parsedCRCAt])
	meta := make([]byte, m+pad)
	if _, err := io.ReadFull(r, meta); err != nil {
		return nil
	}
	crc = crc32.Update(crc, castagnoli, meta)
	d, ok := decodeMeta(meta[:m])
	if !ok || d.Info.Bars != n {
		return nil
	}
	b := &d.Bars
	b.Time = make([]int64, n)
	b.Open, b.High, b.Low = make([]float64, n), make([]float64, n), make([]float64, n)
	b.Close, b.Volume = make([]float64, n), make([]float64, n)
	buf := make([]byte, min(8*n, 64<<10))
	// read fills the next k values of a column from r, k*8 <= len(buf).
	read := func(k int) []byte {
		chunk := buf[:8*k]
		if _, err := io.ReadFull(r, chunk); err != nil {
			return nil
		}
		crc = crc32.Update(crc, castagnoli, chunk)
		return chunk
	}
	step := len(buf) / 8
	for i := 0; i < n; i += step {
		k := min(step, n-i)
		chunk := read(k)
		if chunk == nil {
			return nil
		}
		dst := b.Time[i : i+k]
		for j := range dst {
			dst[j] = int64(binary.LittleEndian.Uint64(chunk[8*j:]))
		}
	}
	for _, col := range [][]float64{b.Open, b.High, b.Low, b.Close, b.Volume} {
		for i := 0; i < n; i += step {
			k := min(step, n-i)
			chunk := read(k)
			if chunk == nil {
				return nil
			}
			dst := col[i : i+k]
			for j := range dst {
				dst[j] = math.Float64frombits(binary.LittleEndian.Uint64(chunk[8*j:]))
			}
		}
	}
	if crc != binary.LittleEndian.Uint32(h[parsedCRCAt:]) {
		return nil
	}
	return d
}

// appendMeta appends d's Info and the places of its first and last bars
// to b: strings as a uvarint length and their bytes, counts and durations
// as varints, floats as their IEEE 754 bits, times as Unix nanoseconds
// after a flag (0 for the zero Time). The order is the fields' order in
// Info; TestParsedCoversInfo fails when a field is added and not here.
func appendMeta(b []byte, d *Dataset) []byte {
	w := metaWriter{b}
	in := &d.Info
	w.str(in.Name)
	w.str(in.Path)
	w.str(in.Layout)
	w.str(in.SHA256)
	w.int(int64(in.Files))
	w.int(int64(in.Bars))
	w.time(in.First)
	w.time(in.Last)
	w.int(int64(in.Gaps))
	w.int(int64(in.LargestGap))
	w.int(int64(in.MedianSpacing))
	w.int(int64(in.DroppedNaN))
	w.int(int64(len(in.DroppedAt)))
	for _, s := range in.DroppedAt {
		w.str(s)
	}
	w.f64(in.MinPrice)
	w.f64(in.MaxPrice)
	w.str(in.Timeframe)
	w.int(int64(in.SourceBars))
	w.f64(in.PriceScale)
	w.str(in.Times)
	w.str(in.TimeZone)
	w.str(in.Convention)
	w.str(in.Calendar)
	w.str(in.CalendarWhy)
	for _, at := range []where{d.firstAt, d.lastAt} {
		w.int(int64(at.line))
		w.int(int64(at.record))
		w.int(int64(at.row))
	}
	return w.b
}

// decodeMeta reads what appendMeta wrote; ok is false unless b holds
// exactly that.
func decodeMeta(b []byte) (d *Dataset, ok bool) {
	r := metaReader{b: b}
	d = &Dataset{}
	in := &d.Info
	in.Name = r.str()
	in.Path = r.str()
	in.Layout = r.str()
	in.SHA256 = r.str()
	in.Files = r.count()
	in.Bars = r.count()
	in.First = r.time()
	in.Last = r.time()
	in.Gaps = r.count()
	in.LargestGap = time.Duration(r.int())
	in.MedianSpacing = time.Duration(r.int())
	in.DroppedNaN = r.count()
	if k := r.count(); k > 0 && k <= len(b) {
		in.DroppedAt = make([]string, k)
		for i := range in.DroppedAt {
			in.DroppedAt[i] = r.str()
		}
	} else if k != 0 {
		return nil, false
	}
	in.MinPrice = r.f64()
	in.MaxPrice = r.f64()
	in.Timeframe = r.str()
	in.SourceBars = r.count()
	in.PriceScale = r.f64()
	in.Times = r.str()
	in.TimeZone = r.str()
	in.Convention = r.str()
	in.Calendar = r.str()
	in.CalendarWhy = r.str()
	for _, at := range []*where{&d.firstAt, &d.lastAt} {
		at.line, at.record, at.row = r.count(), r.count(), r.count()
	}
	if r.bad || len(r.b) != 0 {
		return nil, false
	}
	return d, true
}

type metaWriter struct{ b []byte }

func (w *metaWriter) str(s string) {
	w.b = binary.AppendUvarint(w.b, uint64(len(s)))
	w.b = append(w.b, s...)
}

func (w *metaWriter) int(v int64)   { w.b = binary.AppendVarint(w.b, v) }
func (w *metaWriter) f64(v float64) { w.b = binary.LittleEndian.AppendUint64(w.b, math.Float64bits(v)) }
func (w *metaWriter) time(t time.Time) {
	if t.IsZero() {
		w.int(0)
		return
	}
	w.int(1)
	w.int(t.UnixNano())
}

// metaReader reads a metaWriter's values; bad records the first misfit
// (the values read after it are zero).
type metaReader struct {
	b   []byte
	bad bool
}

func (r *metaReader) int() int64 {
	v, k := binary.Varint(r.b)
	if k <= 0 {
		r.bad = true
		return 0
	}
	r.b = r.b[k:]
	return v
}

// count reads a non-negative int.
func (r *metaReader) count() int {
	v := r.int()
	if v < 0 || v > math.MaxInt {
		r.bad = true
		return 0
	}
	return int(v)
}

func (r *metaReader) str() string {
	v, k := binary.Uvarint(r.b)
	if k <= 0 || v > uint64(len(r.b)-k) {
		r.bad = true
		return ""
	}
	s := string(r.b[k : k+int(v)])
	r.b = r.b[k+int(v):]
	return s
}

func (r *metaReader) f64() float64 {
	if len(r.b) < 8 {
		r.bad = true
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(r.b))
	r.b = r.b[8:]
	return v
}

func (r *metaReader) time() time.Time {
	switch r.int() {
	case 0:
		return time.Time{}
	case 1:
		return time.Unix(0, r.int()).UTC()
	}
	r.bad = true
	return time.Time{}
}
