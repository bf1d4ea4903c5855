// Command cmpreport compares two sweepbench JSON reports (run's, merge's)
// field by field: every value must be the same text (numbers as written:
// the same float64 bits, since both are written by the shortest
// round-trip formatting), except the fields of time and speed that two
// processes cannot share (created, prepare_s, elapsed_s, combos_per_s).
// It prints how many values it compared and the first differences, and
// exits 1 when there is one. scripts/slurm-test.sh uses it.
//
//	go run ./scripts/cmpreport single.json merged.json
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"sort"
)

var skip = map[string]bool{"created": true, "prepare_s": true, "elapsed_s": true, "combos_per_s": true}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: cmpreport A.json B.json")
		os.Exit(2)
	}
	a, b := load(os.Args[1]), load(os.Args[2])
	var diffs []string
	n := walk("", a, b, &diffs)
	for i, d := range diffs {
		if i == 20 {
			fmt.Printf("... and %d more\n", len(diffs)-20)
			break
		}
		fmt.Println(d)
	}
	if len(diffs) > 0 {
		fmt.Printf("cmpreport: %d of %d values differ\n", len(diffs), n)
		os.Exit(1)
	}
	fmt.Printf("cmpreport: %d values identical (%s and %s; times and speeds left out)\n", n, os.Args[1], os.Args[2])
}

func load(path string) any {
	raw, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", path, err)
		os.Exit(2)
	}
	return v
}

// walk compares x and y under path, appending differences; it returns the
// leaf values compared.
func walk(path string, x, y any, diffs *[]string) int {
	switch u := x.(type) {
	case map[string]any:
		v, ok := y.(map[string]any)
		if !ok {
			*diffs = append(*diffs, fmt.Sprintf("%s: object vs %T", path, y))
			return 1
		}
		keys := map[string]bool{}
		for k := range u {
			keys[k] = true
		}
		for k := range v {
			keys[k] = true
		}
		var ks []string
		for k := range keys {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		n := 0
		for _, k := range ks {
			if skip[k] {
				continue
			}
			p := path + "." + k
			xa, ina := u[k]
			yb, inb := v[k]
			if !ina || !inb {
				*diffs = append(*diffs, fmt.Sprintf("%s: only in one report", p))
				n++
				continue
			}
			n += walk(p, xa, yb, diffs)
		}
		return n
	case []any:
		v, ok := y.([]any)
		if !ok || len(u) != len(v) {
			*diffs = append(*diffs, fmt.Sprintf("%s: array of %d vs %v", path, len(u), describe(y)))
			return 1
		}
		n := 0
		for i := range u {
			n += walk(fmt.Sprintf("%s[%d]", path, i), u[i], v[i], diffs)
		}
		return n
	}
	if fmt.Sprint(x) != fmt.Sprint(y) {
		*diffs = append(*diffs, fmt.Sprintf("%s: %v vs %v", path, x, y))
	}
	return 1
}

func describe(y any) string {
	if v, ok := y.([]any); ok {
		return fmt.Sprintf("array of %d", len(v))
	}
	return fmt.Sprintf("%T", y)
}
