package cli

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"sweepbench/serve"
	"sweepbench/sessions"
	"sweepbench/tui"
)

func newServeCmd() *cobra.Command {
	var (
		cfg     serve.Config
		sf      studyFlags
		listen  string
		verbose bool
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the workbench over SSH to the keys of an authorized_keys file",
		Long: `serve makes this machine the workbench: ` + "`ssh -p 2222 HOST`" + ` opens the TUI,
nothing installed on the client. Public keys only, from --authorized-keys
(read again when it changes); a key's user is its comment up to "@"
(alice for "ssh-ed25519 AAAA... alice@laptop"). Each user has their own
sessions database under --data-dir; studies from every connection go
through one queue on this machine's backends, fair across users, each
user's place and ETA on their run screen. A study stops when its client
disconnects, unless the user pressed K on the run screen: then it computes
on and is in their sessions when they come back. Shell commands, exec,
port and agent forwarding and SFTP are refused and logged. Users read
datasets from the --data-root folders only (and the embedded ones). Logs go to
stderr (the journal under systemd), a line per connection. The study flags
of ` + "`run`" + ` prefill every connection's form.`,
		Example: `  sweepbench serve --listen :2222 --authorized-keys /etc/sweepbench/authorized_keys --data-dir /var/lib/sweepbench
  ssh -p 2222 gpu-box             # from a client: the workbench`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Flags = tui.Flags{Spec: sf.spec, DataGiven: cmd.Flags().Changed("data")}
			return runServe(cmd, cfg, listen, verbose)
		},
	}
	f := cmd.Flags()
	// The study flags of run prefill every connection's form (--data loads
	// that dataset at once).
	sf.register(f)
	sf.registerRobust(f)
	f.StringVar(&listen, "listen", ":2222", "address to listen on (host:port; :0 picks a free port, logged)")
	f.StringVar(&cfg.AuthorizedKeys, "authorized-keys", "", "OpenSSH authorized_keys file of the keys allowed in (required)")
	f.StringVar(&cfg.HostKey, "host-key", "", "host key file, created (Ed25519, mode 0600) when missing (default DATA-DIR/host_ed25519)")
	f.StringVar(&cfg.DataDir, "data-dir", "", "where each user's sessions database lives, users/NAME/sessions.db (default $XDG_DATA_HOME/sweepbench/serve)")
	f.IntVar(&cfg.MaxSessions, "max-sessions", 16, "most workbench sessions open at once (0: no limit)")
	f.DurationVar(&cfg.IdleTimeout, "idle-timeout", 30*time.Minute, "close a connection idle that long (0: never; a computing study is not idle)")
	f.DurationVar(&cfg.LoginGraceTime, "login-grace-time", serve.DefaultLoginGraceTime, "close a connection not authenticated that long after it opened (sshd's LoginGraceTime)")
	f.IntVar(&cfg.MaxStartups, "max-startups", serve.DefaultMaxStartups, "most connections not yet authenticated at once; one more is closed (sshd's MaxStartups)")
	f.StringArrayVar(&cfg.DataRoots, "data-root", nil, "a folder users may read datasets from (repeat for more; none: the embedded datasets only)")
	f.BoolVar(&cfg.TeamView, "team-view", false, "let each user read the others' sessions, read only: ssh OTHERUSER@HOST")
	f.IntVar(&cfg.Limits.Concurrent, "concurrent", 1, "studies computing at once (1: one GPU, one study at a time)")
	f.IntVar(&cfg.Limits.PerUser, "user-studies", 2, "studies one user may have computing or waiting at once (0: no limit)")
	f.IntVar(&cfg.Limits.MaxCombos, "max-combos", 1_000_000, "most combos x precisions in one study (0: no limit)")
	f.BoolVar(&verbose, "verbose", false, "log debug lines too")
	_ = cmd.MarkFlagRequired("authorized-keys")
	return cmd
}

func runServe(cmd *cobra.Command, cfg serve.Config, listen string, verbose bool) error {
	level := slog.LevelInfo
	if verbose {
		level = slog.LevelDebug
	}
	cfg.Log = slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: level}))
	if cfg.DataDir == "" {
		p, err := sessions.DefaultPath()
		if err != nil {
			return fmt.Errorf("--data-dir: %w", err)
		}
		cfg.DataDir = filepath.Join(filepath.Dir(p), "serve")
	}
	cfg.Registry = backends()
	cfg.Version = version
	srv, err := serve.New(cfg)
	if err != nil {
		return serveError(err)
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("--listen %s: %w", listen, err)
	}
	return srv.Serve(cmd.Context(), ln)
}

// serveError words serve's typed errors as the flags that set them.
func serveError(err error) error {
	var (
		ke *serve.KeysError
		he *serve.HostKeyError
		ce *serve.ConfigError
	)
	switch {
	case errors.As(err, &ke):
		return fmt.Errorf("--authorized-keys: %w", err)
	case errors.As(err, &he):
		return fmt.Errorf("--host-key: %w", err)
	case errors.As(err, &ce):
		flag := map[string]string{"DataDir": "--data-dir", "MaxSessions": "--max-sessions", "IdleTimeout": "--idle-timeout",
			"LoginGraceTime": "--login-grace-time", "MaxStartups": "--max-startups",
			"DataRoots": "--data-root", "Flags.Data": "--data",
			"Limits": "--concurrent, --user-studies, --max-combos"}[ce.Field]
		if flag != "" {
			return fmt.Errorf("%s %q: %w", flag, ce.Value, ce.Err)
		}
	}
	return err
}
