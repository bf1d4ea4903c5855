package data

import (
	"os"
	"strings"
)

// isMany reports whether p names a folder or a glob pattern rather than
// one file. A path that exists as a file is a file, whatever its
// characters.
func isMany(p string) (bool, error) {
	file, _ := splitMember(p)
	fi, err := os.Stat(file)
	if err == nil {
		return fi.IsDir(), nil
	}
	return strings.ContainsAny(p, "*?["), nil
}

func loadMany(p string, opt Options) (*Dataset, error) {
	return nil, &Error{File: p, Reason: "folders and globs are not read yet"}
}
