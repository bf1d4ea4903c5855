// Package serve is `sweepbench serve`: the workbench (package tui) served
// over SSH with charmbracelet/wish, one program per connection sized to
// its terminal and drawn in its colour profile, as soft-serve serves git.
//
// It owns access (public keys from an authorized_keys file, re-read when
// it changes; every other kind of request refused and logged), the host
// key, each key user's sessions database under the data directory, and
// the one queue every connection's studies go through on the server's
// backends (Queue: fair across users, per-user limits). Studies are built
// and run by the workbench through engine and sessions as everywhere
// else; serve never builds one of its own. It must not import a backend
// (main wires the registry) nor the root package.
package serve
