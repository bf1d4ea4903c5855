package sessions

import (
	"sort"

	"sweepbench/engine"
)

// spans is a set of grid indices as sorted, disjoint, non-adjacent
// half-open ranges [lo, hi): the combos of a run saved so far, which a
// sweep's chunks fill a range at a time, so that the set stays a few
// ranges long however many combos it holds.
type spans [][2]int

// add adds [lo, hi) to the set, or reports false, leaving the set as it
// was, when any of it is in the set already.
func (s *spans) add(lo, hi int) bool {
	v := *s
	// v[i] is the first range that ends at or after lo.
	i := sort.Search(len(v), func(i int) bool { return v[i][1] >= lo })
	j := i
	if j < len(v) && v[j][1] == lo {
		j++ // v[i] ends where [lo, hi) starts
	}
	if j < len(v) && v[j][0] < hi {
		return false
	}
	joinsLeft, joinsRight := j > i, j < len(v) && v[j][0] == hi
	switch {
	case joinsLeft && joinsRight:
		v[i][1] = v[j][1]
		v = append(v[:j], v[j+1:]...)
	case joinsLeft:
		v[i][1] = hi
	case joinsRight:
		v[j][0] = lo
	default:
		v = append(v, [2]int{})
		copy(v[j+1:], v[j:])
		v[j] = [2]int{lo, hi}
	}
	*s = v
	return true
}

// addRows adds the indices of rows, which are in strictly ascending index
// order, a run of consecutive ones at a time. When one is in the set
// already it stops and returns it, with ok false (the set then holds some
// of rows).
func (s *spans) addRows(rows []engine.ComboResult) (dup int, ok bool) {
	for lo := 0; lo < len(rows); {
		hi := lo + 1
		for hi < len(rows) && rows[hi].Index == rows[hi-1].Index+1 {
			hi++
		}
		if !s.add(rows[lo].Index, rows[hi-1].Index+1) {
			for _, r := range rows[lo:hi] {
				if s.has(r.Index) {
					return r.Index, false
				}
			}
		}
		lo = hi
	}
	return 0, true
}

// has reports whether index i is in the set.
func (s spans) has(i int) bool {
	k := sort.Search(len(s), func(k int) bool { return s[k][1] > i })
	return k < len(s) && s[k][0] <= i
}
