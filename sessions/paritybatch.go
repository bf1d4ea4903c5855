package sessions

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"sweepbench/engine"
)

// A parity report's row per combo is stored a batch at a time (schema
// v16): one row of parity_batches per maxBlobRows combos of the report,
// in index order, holding the rows as one blob, as result_batches holds
// results (resultbatch.go). Until v15 every combo was a row of
// parity_combos: 102,400 of them, each 14 values bound and inserted into a
// B-tree and read back for the report's digest, cost about half a second
// of CPU at the end of a 320 x 320 study, after its sweep, where nothing
// overlaps it (docs/PERFORMANCE.md, "Issue 29: saving beside the sweep").
//
// The blob, format version 1 (parityBatchVersion):
//
//	byte 0      the version, 1
//	uvarint     n, the rows (at least 1; parity_batches.rows)
//	n uvarints  the rows' grid indices, strictly ascending (from
//	            parity_batches.first_idx to last_idx): the first as it is,
//	            each next one as its distance from the one before less 1
//	7 columns   hma, hma3, trades_ref, trades_test, dn, flips,
//	            non_borderline: n zigzag varints each (binary.AppendVarint)
//	4 columns   rel_dn, dpnl_pp, rel_dpnl, max_flip_margin: n float64 bits
//	            each, 8 bytes little-endian (NaN, -0 and ±Inf bit for bit;
//	            parity_combos kept a NaN as NULL, read back as NaN)
//	n bytes     dn_limit_breached, 0 or 1
//
// and nothing after: parity_combos' columns, in its order but for the
// flag, which is last. A row's label (Name) is not kept: the study's grid
// names it (labeller), as it does a row of parity_combos.
const parityBatchVersion = 1

// parityInts and parityFloats are a row's integer and float columns in the
// blob's order.
var (
	parityInts = [...]func(*engine.ComboParity) *int{
		func(c *engine.ComboParity) *int { return &c.HMA },
		func(c *engine.ComboParity) *int { return &c.HMA3 },
		func(c *engine.ComboParity) *int { return &c.Trades64 },
		func(c *engine.ComboParity) *int { return &c.Trades32 },
		func(c *engine.ComboParity) *int { return &c.Dn },
		func(c *engine.ComboParity) *int { return &c.Flips },
		func(c *engine.ComboParity) *int { return &c.NonBorderline },
	}
	parityFloats = [...]func(*engine.ComboParity) *float64{
		func(c *engine.ComboParity) *float64 { return &c.RelDn },
		func(c *engine.ComboParity) *float64 { return &c.DPnLpp },
		func(c *engine.ComboParity) *float64 { return &c.RelDPnL },
		func(c *engine.ComboParity) *float64 { return &c.MaxFlipMargin },
	}
)

// minParityRowBytes is the least a row takes in a blob: its index, each
// integer at a byte, the floats and the flag.
const minParityRowBytes = 1 + len(parityInts) + 8*len(parityFloats) + 1

// appendParityBatch appends the blob of rows to dst. rows must be strictly
// ascending by index, at least one (parityInOrder).
func appendParityBatch(dst []byte, rows []engine.ComboParity) []byte {
	dst = slices.Grow(dst, 1+binary.MaxVarintLen64+len(rows)*(minParityRowBytes+16))
	dst = append(dst, parityBatchVersion)
	dst = binary.AppendUvarint(dst, uint64(len(rows)))
	prev := -1
	for i := range rows {
		dst = binary.AppendUvarint(dst, uint64(rows[i].Index-prev-1))
		prev = rows[i].Index
	}
	for _, f := range &parityInts {
		for i := range rows {
			dst = binary.AppendVarint(dst, int64(*f(&rows[i])))
		}
	}
	for _, f := range &parityFloats {
		for i := range rows {
			dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(*f(&rows[i])))
		}
	}
	for i := range rows {
		b := byte(0)
		if rows[i].DnLimitBreached {
			b = 1
		}
		dst = append(dst, b)
	}
	return dst
}

// parityInOrder returns a report's rows strictly ascending by index: cs
// itself when they are (Compare's grid order), else a sorted copy. A
// negative index or one listed twice is refused (parity_combos' primary
// key refused the second).
func parityInOrder(cs []engine.ComboParity) ([]engine.ComboParity, error) {
	byIdx := func(a, b engine.ComboParity) int { return a.Index - b.Index }
	if !slices.IsSortedFunc(cs, byIdx) {
		cs = slices.Clone(cs)
		slices.SortFunc(cs, byIdx)
	}
	for i := range cs {
		switch {
		case cs[i].Index < 0:
			return nil, fmt.Errorf("the parity report's combo index %d is negative", cs[i].Index)
		case i > 0 && cs[i].Index == cs[i-1].Index:
			return nil, fmt.Errorf("the parity report holds combo %d twice", cs[i].Index)
		}
	}
	return cs, nil
}

// decodeParityBatch appends to out the rows of blob, which parity_batches
// says holds rows combos from grid index first to last. A blob that is not
// what it says (truncated, damaged, of a newer format) is refused, with
// out unchanged, by an error saying how.
func decodeParityBatch(out []engine.ComboParity, blob []byte, first, last, rows int) ([]engine.ComboParity, error) {
	if len(blob) == 0 {
		return out, fmt.Errorf("it is empty")
	}
	if v := blob[0]; v != parityBatchVersion {
		return out, fmt.Errorf("its format version is %d, this sweepbench reads %d", v, parityBatchVersion)
	}
	b := blob[1:]
	n64, k := binary.Uvarint(b)
	if k <= 0 {
		return out, errBlobTruncated
	}
	b = b[k:]
	switch {
	case rows < 1:
		return out, fmt.Errorf("the table says it holds %d rows", rows)
	case n64 != uint64(rows):
		return out, fmt.Errorf("it holds %d rows, the table says %d", n64, rows)
	case len(b) < rows*minParityRowBytes:
		return out, errBlobTruncated
	}
	base := len(out)
	out = slices.Grow(out, rows)[:base+rows]
	rs := out[base:]
	fail := func(err error) ([]engine.ComboParity, error) {
		clear(rs)
		return out[:base], err
	}
	idx := uint64(0)
	for i := range rs {
		d, k := binary.Uvarint(b)
		if k <= 0 {
			return fail(errBlobTruncated)
		}
		b = b[k:]
		if i > 0 {
			d += idx + 1
			if d <= idx {
				return fail(fmt.Errorf("row %d's index overflows", i))
			}
		}
		if idx = d; idx > uint64(math.MaxInt) {
			return fail(fmt.Errorf("row %d's index %d does not fit an int here", i, idx))
		}
		rs[i] = engine.ComboParity{Index: int(idx)}
	}
	if a, z := rs[0].Index, rs[len(rs)-1].Index; a != first || z != last {
		return fail(fmt.Errorf("it holds combos %d to %d, the table says %d to %d", a, z, first, last))
	}
	for _, f := range &parityInts {
		for i := range rs {
			v, k := binary.Varint(b)
			if k <= 0 {
				return fail(errBlobTruncated)
			}
			b = b[k:]
			if int64(int(v)) != v {
				return fail(fmt.Errorf("combo %d's value %d does not fit an int here", rs[i].Index, v))
			}
			*f(&rs[i]) = int(v)
		}
	}
	for _, f := range &parityFloats {
		if len(b) < 8*len(rs) {
			return fail(errBlobTruncated)
		}
		for i := range rs {
			*f(&rs[i]) = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
		}
		b = b[8*len(rs):]
	}
	if len(b) < len(rs) {
		return fail(errBlobTruncated)
	}
	for i := range rs {
		switch b[i] {
		case 0:
		case 1:
			rs[i].DnLimitBreached = true
		default:
			return fail(fmt.Errorf("combo %d's dn_limit_breached is %d, not 0 or 1", rs[i].Index, b[i]))
		}
	}
	if b = b[len(rs):]; len(b) != 0 {
		return fail(errBlobTrailing)
	}
	return out, nil
}

// ParityBatchError refuses a saved parity report one of whose batches of
// rows (schema v16 on) cannot be read: its blob is truncated or damaged in
// the database, or of a format newer than this sweepbench reads. A report
// with a record digest is refused by it first (RecordError); this is what
// a report saved before record digests, read unverified, meets.
type ParityBatchError struct {
	ID    int64 // the session
	First int   // the batch: its first combo's grid index (parity_batches.first_idx)
	Rows  int   // the rows the batch says it holds
	Err   error // what is wrong with it
}

func (e *ParityBatchError) Error() string {
	return fmt.Sprintf("session %d: the saved batch of %d parity rows from combo %d cannot be read (%v): it was damaged in the database after it was saved, so the parity report is not used",
		e.ID, e.Rows, e.First, e.Err)
}

func (e *ParityBatchError) Unwrap() error { return e.Err }
