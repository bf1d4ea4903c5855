package cuda

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ptxFS holds the generated PTX (cuda/ptx, see its README.md) and the
// SHA-256 of the kernel sources it was built from.
//
//go:embed ptx
var ptxFS embed.FS

// PTXDirEnv names a folder whose indicators.ptx and sweep.ptx replace the
// embedded ones (scripts/cuda-device.sh: compile with nvcc and test at once,
// without rebuilding the Go binary).
const PTXDirEnv = "SWEEPBENCH_PTX_DIR"

// Modules are the PTX modules this package loads, by file stem.
var moduleNames = []string{"indicators", "sweep"}

// loadPTX returns module name's PTX text, NUL-terminated for the driver,
// and where it came from.
func loadPTX(name string) ([]byte, string, error) {
	file := name + ".ptx"
	if dir := os.Getenv(PTXDirEnv); dir != "" {
		p := filepath.Join(dir, file)
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, "", fmt.Errorf("%s=%s: %w", PTXDirEnv, dir, err)
		}
		return append(b, 0), p, nil
	}
	b, err := ptxFS.ReadFile("ptx/" + file)
	if err != nil {
		return nil, "", fmt.Errorf("embedded PTX %s is missing: run scripts/cuda-build.sh on a machine with nvcc: %w", file, err)
	}
	return append(b, 0), "embedded ptx/" + file, nil
}

// embeddedSourcesHash is the hash recorded next to the embedded PTX.
func embeddedSourcesHash() (string, error) {
	b, err := ptxFS.ReadFile("ptx/SOURCES.sha256")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]), nil
}

// SourcesHash is the SHA-256 of the kernel sources in dirs (cuda/kernels,
// the .cu files, and reference/kernels, the shared header): every *.cu and
// *.h file of them in byte order of its name, each contributing its name, a
// newline and its bytes (scripts/cuda-build.sh computes the same with
// sha256sum). A name found in two folders is an error.
func SourcesHash(dirs ...fs.FS) (string, error) {
	files := map[string]fs.FS{}
	var names []string
	for _, dir := range dirs {
		entries, err := fs.ReadDir(dir, ".")
		if err != nil {
			return "", err
		}
		for _, e := range entries {
			n := e.Name()
			if e.IsDir() || !(strings.HasSuffix(n, ".cu") || strings.HasSuffix(n, ".h")) {
				continue
			}
			if _, dup := files[n]; dup {
				return "", fmt.Errorf("kernel source %s is in two folders", n)
			}
			files[n] = dir
			names = append(names, n)
		}
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		b, err := fs.ReadFile(files[n], n)
		if err != nil {
			return "", err
		}
		h.Write([]byte(n + "\n"))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
