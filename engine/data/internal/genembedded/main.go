// Command genembedded writes the parsed form of every embedded dataset
// beside its source (engine/data/embedded/*.bars.zst), so that the binary
// ships them pre-parsed. It runs from engine/data through `go generate`:
//
//	CGO_ENABLED=0 go generate ./engine/data
//
// Run it after changing a loader, Info, the parsed form or an embedded
// source (and bumping loaderVersion); TestEmbeddedParsedCurrent fails
// until it has run. A file whose bytes did not change is not rewritten.
package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"sweepbench/engine/data"
)

func main() {
	for _, e := range data.Embedded() {
		file, form, err := data.EmbeddedParsed(e.Name)
		if err != nil {
			fail(err)
		}
		if old, err := os.ReadFile(file); err == nil && bytes.Equal(old, form) {
			fmt.Printf("%s: unchanged\n", file)
			continue
		}
		tmp := filepath.Join(filepath.Dir(file), "."+filepath.Base(file)+".tmp")
		if err := os.WriteFile(tmp, form, 0o644); err != nil {
			fail(err)
		}
		if err := os.Rename(tmp, file); err != nil {
			os.Remove(tmp)
			fail(err)
		}
		fmt.Printf("%s: %d bytes\n", file, len(form))
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "genembedded:", err)
	os.Exit(1)
}
