package sessions

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"

	"sweepbench/engine"
)

// A run's digest is what its saved rows must still hash to when they are
// read back: a byte of a metric changed in the file (a failing disk, an
// edit through SQL) would otherwise be shown, exported, compared and
// resumed from as if it were computed.
//
// The digest is order-independent: the sum of the SHA-256 of every row,
// taken as four little-endian uint64 words added word by word modulo 2^64
// (an additive multiset hash). Rows are committed in completion order, a
// few batches at a time, and a resume adds rows to a run years later; a
// sum is updated per batch in the batch's own transaction, so the digest
// in the file always matches the rows committed with it, through a kill
// -9, an interrupted run and its resume, with no read-back at the end. A
// hash of the rows in grid order could only be computed once every row is
// saved (a full read of the run at Finish, on the critical path), and an
// interrupted run, the one a resume reads, would have none.
//
// The sum guards against accidents (a flipped byte, an edited or deleted
// row), not against someone who rewrites the rows and the digest together.
type digest [sha256.Size]byte

// rowBytes is the size of a row's canonical encoding: index, hma, hma3 as
// int64, then every metric of engine.MetricNames in order as the bits of
// its float64 value (a count as a float64), all little-endian, with every
// NaN as canonicalNaN. These are the bytes the digests of schema v3 to v7
// were taken over, when the store kept a NaN as NULL and read it back as
// one NaN: batches (resultbatch.go) keep a NaN's bits, and the digest
// still takes every NaN as one, so that a run saved before v8 verifies
// after its rows moved into batches.
//
// A row whose SPEC Part 2 metrics (the columns past v1Columns) are all
// NaN, not computed, is hashed over Part 1's 14 metrics alone (rowBytes
// less 80): the bytes every digest saved before Part 2 was taken over, so
// that those runs verify as they are, their rows read from version 1
// blobs with Part 2's metrics NaN (metricValues). A row with any of them
// computed is hashed over all 24: a changed value, or one set to NaN,
// still changes the row's hash.
var rowBytes = 8 * (3 + len(engine.MetricNames))

const canonicalNaN = 0x7ff8000000000000

// add adds to d the hash of one row: its grid index and lengths, and its
// metric values ms in engine.MetricNames order. buf is scratch space.
func (d *digest) add(buf []byte, idx, hma, hma3 int, ms []float64) {
	buf = binary.LittleEndian.AppendUint64(buf[:0], uint64(int64(idx)))
	buf = binary.LittleEndian.AppendUint64(buf, uint64(int64(hma)))
	buf = binary.LittleEndian.AppendUint64(buf, uint64(int64(hma3)))
	for _, v := range ms {
		bits := math.Float64bits(v)
		if math.IsNaN(v) {
			bits = canonicalNaN
		}
		buf = binary.LittleEndian.AppendUint64(buf, bits)
	}
	sum := sha256.Sum256(buf)
	d.plus((*digest)(&sum))
}

// plus adds to d the rows e is the digest of.
func (d *digest) plus(e *digest) {
	for i := 0; i < len(d); i += 8 {
		binary.LittleEndian.PutUint64(d[i:], binary.LittleEndian.Uint64(d[i:])+binary.LittleEndian.Uint64(e[i:]))
	}
}

// metricValues fills ms (len(engine.MetricNames)) with the metrics of r
// in engine.MetricNames order (a count as a float64) and returns what
// the digest takes of them: ms, or ms[:v1Columns] when every Part 2
// metric is NaN (rowBytes).
func metricValues(ms []float64, r *engine.ComboResult) []float64 {
	part2 := false
	for i, c := range &resultColumns {
		if c.float != nil {
			ms[i] = *c.float(&r.Metrics)
		} else {
			ms[i] = float64(*c.count(&r.Metrics))
		}
		if i >= v1Columns && !math.IsNaN(ms[i]) {
			part2 = true
		}
	}
	if !part2 {
		return ms[:v1Columns]
	}
	return ms
}

// DigestError refuses a saved run whose rows no longer hash to the digest
// saved with them: the results were changed or damaged in the database
// after they were saved, and reading them would pass wrong numbers off as
// computed ones. Show, export, diff and resume refuse the run; a run saved
// before digests existed (schema version 2 and older, below the file's
// epoch: recorddigest.go) is read unverified, and one saved since without
// a digest is refused (Missing).
type DigestError struct {
	ID        int64            // the session
	Precision engine.Precision // its run
	Rows      int              // the rows read
	// Missing: the run has no digest, though its session was saved after
	// the file began digesting runs (it was removed in the database).
	Missing bool
}

func (e *DigestError) Error() string {
	if e.Missing {
		return fmt.Sprintf("session %d, run %d:%s: the digest of its saved results is missing, though the session was saved after this database began digesting results: it was removed from the database, so they are not used",
			e.ID, e.ID, e.Precision)
	}
	return fmt.Sprintf("session %d, run %d:%s: its %d saved results do not match the digest saved with them: they were changed or damaged in the database after they were saved, so they are not used",
		e.ID, e.ID, e.Precision, e.Rows)
}
