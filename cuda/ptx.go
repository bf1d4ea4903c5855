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
var moduleNames = []string{"indicators", "sweep", "parity", "robust"}

// Cubins: beside each PTX module, machine code assembled from that very
// PTX by ptxas for the architectures below (scripts/cuda-build.sh), so a
// start on them skips the driver's JIT (seconds on a fresh machine); any
// other GPU JIT-compiles the PTX. CUBINS.sha256 records, per cubin, the
// SHA-256 of the PTX it was assembled from (TestCubinsFresh).
var cubinArchs = []int{80, 90}

// cubinFor is the embedded cubin architecture that runs on a device of
// compute capability major.minor, 0 when none does: a cubin for sm_XY runs
// on X.Z for Z >= Y (CUDA's binary compatibility within a major version:
// sm_80 on 8.0, 8.6, 8.9; sm_90 on 9.x), never on another major version.
func cubinFor(major, minor int) int {
	best := 0
	for _, a := range cubinArchs {
		if a/10 == major && a%10 <= minor && a > best {
			best = a
		}
	}
	return best
}

// loadImage returns module name's image for the driver (a cubin for the
// device's architecture when one is embedded, else the PTX text,
// NUL-terminated) and where it came from. SWEEPBENCH_PTX_DIR, when set,
// always gives that folder's PTX.
func loadImage(name string, major, minor int) ([]byte, string, error) {
	file := name + ".ptx"
	if dir := os.Getenv(PTXDirEnv); dir != "" {
		p := filepath.Join(dir, file)
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, "", fmt.Errorf("%s=%s: %w", PTXDirEnv, dir, err)
		}
		return append(b, 0), p + " (PTX, JIT)", nil
	}
	if a := cubinFor(major, minor); a != 0 {
		cubin := fmt.Sprintf("%s.sm_%d.cubin", name, a)
		if b, err := ptxFS.ReadFile("ptx/" + cubin); err == nil {
			return b, "embedded ptx/" + cubin, nil
		}
	}
	b, err := ptxFS.ReadFile("ptx/" + file)
	if err != nil {
		return nil, "", fmt.Errorf("embedded PTX %s is missing: run scripts/cuda-build.sh on a machine with nvcc: %w", file, err)
	}
	return append(b, 0), "embedded ptx/" + file + " (JIT)", nil
}

// KernelImage says what a device of compute capability cc ("9.0") loads:
// "cubin sm_90" (no JIT) or "PTX (JIT)"; `sweepbench devices` shows it.
func KernelImage(cc string) string {
	var major, minor int
	if _, err := fmt.Sscanf(cc, "%d.%d", &major, &minor); err != nil {
		return "PTX (JIT)"
	}
	if os.Getenv(PTXDirEnv) == "" {
		if a := cubinFor(major, minor); a != 0 {
			return fmt.Sprintf("cubin sm_%d", a)
		}
	}
	return "PTX (JIT)"
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
