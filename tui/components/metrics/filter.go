package metrics

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"sweepbench/tui/common"
)

// term is one condition of a filter: column op value.
type term struct {
	col string
	op  string
	val float64
}

var termRE = regexp.MustCompile(`^([a-z_0-9]+)(%?)\s*(<=|>=|!=|==|=|<|>)\s*(\S+?)%?$`)

// parseFilter reads a filter: conditions such as "sharpe>1 hma=20
// flips>0", joined by spaces or commas, all of which must hold. A bare
// number n stands for "hma=n or hma3=n". Columns are hma, hma3 and cols.
func parseFilter(s string, cols []string) ([]term, error) {
	var out []term
	// Allow spaces around operators by gluing them first.
	s = regexp.MustCompile(`\s*(<=|>=|!=|==|=|<|>)\s*`).ReplaceAllString(strings.TrimSpace(s), "$1")
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' }) {
		if v, err := strconv.Atoi(f); err == nil {
			out = append(out, term{"*", "=", float64(v)})
			continue
		}
		m := termRE.FindStringSubmatch(strings.ToLower(f))
		if m == nil {
			return nil, fmt.Errorf("filter %q: want column op value, e.g. sharpe>1 or hma=20", f)
		}
		// The compact layout's short titles (trades, return%, maxdd%)
		// name their columns too.
		for _, c := range compactColumns {
			if m[1] == strings.TrimSuffix(c.title, "%") {
				m[1] = c.name
			}
		}
		// A column is named as the table's header shows it
		// (max_drawdown%) or without its % (max_drawdown).
		known := m[1] == "hma" || m[1] == "hma3" || slices.Contains(cols, m[1])
		if !known || m[2] == "%" && !common.IsPercent(m[1]) {
			names := []string{"hma", "hma3"}
			for _, c := range cols {
				names = append(names, common.Header(c))
			}
			return nil, fmt.Errorf("filter %q: unknown column %q; columns: %s", f, m[1]+m[2], strings.Join(names, ", "))
		}
		v, err := strconv.ParseFloat(m[4], 64)
		if err != nil {
			return nil, fmt.Errorf("filter %q: %q is not a number", f, m[4])
		}
		out = append(out, term{m[1], m[3], v})
	}
	return out, nil
}

func (t term) holds(v float64) bool {
	switch t.op {
	case "<":
		return v < t.val
	case "<=":
		return v <= t.val
	case ">":
		return v > t.val
	case ">=":
		return v >= t.val
	case "!=":
		return v != t.val && !(math.IsNaN(v) && math.IsNaN(t.val))
	}
	return v == t.val || (math.IsNaN(v) && math.IsNaN(t.val))
}
