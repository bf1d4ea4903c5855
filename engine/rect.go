package engine

// Rect is s over one rectangle of its grid, HMA rows [r0, r1) by HMA3
// columns [c0, c1) (indices of s.Grid's ranges), with no note: a study of
// its own whose combos are computed bit for bit as s computes them (the
// whole study's size picks each backend's method: Job.StudyCombos). Its
// combo local is s's combo s.Grid.Index(r0+local/n3, c0+local%n3), n3 the
// rectangle's HMA3 columns. Package shard runs a slice of a study as such
// rectangles.
func (s *Study) Rect(r0, r1, c0, c1 int) *Study {
	sub := *s
	sub.Grid = Grid{HMA: subRange(s.Grid.HMA, r0, r1), HMA3: subRange(s.Grid.HMA3, c0, c1)}
	sub.Note, sub.wholeCombos = "", s.computedCombos()
	return &sub
}

// subRange is sub, the range of r's values [i, j).
func subRange(r Range, i, j int) Range { return sub(r, i, j) }

// NewReport starts s's report: its dataset, parameters, grid, note and the
// precisions it asked for, no run yet (package shard joins its parts
// into it).
func NewReport(s *Study) *Report { return newReport(s) }

// BackendFor is the backend that runs precision p of s: its own, or its
// Fallback when the backend does not support p (PrecisionSupport); a
// *FieldError on FieldBackend when neither can.
func (s *Study) BackendFor(p Precision) (Backend, error) { return s.backendFor(p) }
