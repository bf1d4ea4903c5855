package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"sweepbench/engine/robust"
	"sweepbench/engine/text"
	"sweepbench/slurm"
)

func newSlurmCmd() *cobra.Command {
	var (
		p              slurm.Plan
		dir            string
		submit, hold   bool
		binary         string
		gpus, cpus, nn int
	)
	cmd := &cobra.Command{
		Use:   "slurm --shards N [flags] -- <run flags>",
		Short: "Write (and submit) a Slurm array of shards and the merge job that depends on it",
		Long: `slurm writes into --out DIR (shared storage every node sees) an sbatch
array script whose task K runs "sweepbench run <run flags> --shard K/N"
into DIR, and a merge job, submitted with --dependency=afterok on the
array, that runs "sweepbench merge DIR" into DIR/merged.json and a session.
With --submit it submits both (sbatch --parsable). Data files are read by
path on every node (relative paths from the folder slurm is run in) and
checked by SHA-256 at merge time.

  sweepbench slurm status DIR      each task's state and the shards present
  sweepbench slurm resubmit DIR    submit again the tasks that failed or never ran
                                   (not while their states are unknown: --force)`,
		Example: `  sweepbench slurm --shards 64 --gpus-per-task 1 --partition gpu --time 1:00:00 --out /shared/sweep1 --submit -- \
      --data @symbols.txt --hma 10:400 --hma3 10:400 --blocks 16
  sweepbench slurm --shards 16 --out /shared/sweep2 --submit -- \
      --data @symbols.txt --strategy cross --fast ema:5:100 --slow sma:20:400:5 --fast-below-slow --blocks 16
  sweepbench slurm status /shared/sweep1
  sweepbench slurm resubmit /shared/sweep1`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.ArgsLenAtDash() != 0 && len(args) > 0 {
				return fmt.Errorf("unexpected %q: the run flags go after --, e.g. sweepbench slurm --shards 4 -- --hma 10:100:10", args[0])
			}
			if nn < 1 {
				return fmt.Errorf("--shards %d: want the number of array tasks, at least 1", nn)
			}
			if err := checkRunArgs(args); err != nil {
				return err
			}
			var err error
			if p.Dir, err = filepath.Abs(dir); err != nil {
				return err
			}
			if p.Chdir, err = os.Getwd(); err != nil {
				return err
			}
			if binary == "" {
				if binary, err = os.Executable(); err != nil {
					return fmt.Errorf("the sweepbench binary: %w (give --binary PATH)", err)
				}
			}
			if p.Binary, err = filepath.Abs(binary); err != nil {
				return err
			}
			if db, _ := cmd.Flags().GetString("db"); db != "" {
				if p.DB, err = filepath.Abs(db); err != nil {
					return err
				}
			}
			p.Shards, p.GPUsPerTask, p.CPUsPerTask, p.RunArgs = nn, gpus, cpus, args
			st, err := p.Write()
			if err != nil {
				return fmt.Errorf("--out %s: %w", dir, err)
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "wrote %s and %s\n", filepath.Join(p.Dir, slurm.ArrayScript), filepath.Join(p.Dir, slurm.MergeScript))
			if !submit {
				fmt.Fprintf(w, "submit with: sweepbench slurm resubmit %s (or sbatch them yourself: the merge with --dependency=afterok:ARRAY_ID)\n", p.Dir)
				return nil
			}
			if err := st.Submit(cmd.Context(), slurm.Exec{}, nil, hold); err != nil {
				return err
			}
			fmt.Fprintf(w, "submitted array job %s (%d tasks) and merge job %s (afterok:%s)\n", st.ArrayJobs[0], nn, st.MergeJob, st.ArrayJobs[0])
			if hold {
				fmt.Fprintf(w, "held: scontrol release %s starts it\n", st.ArrayJobs[0])
			}
			fmt.Fprintf(w, "follow it with: sweepbench slurm status %s\n", p.Dir)
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVar(&nn, "shards", 0, "array tasks: the study is cut into this many shards, balanced by bar-steps")
	f.IntVar(&gpus, "gpus-per-task", 0, "GPUs each task asks for (sbatch --gpus-per-task; 0 = none)")
	f.IntVar(&cpus, "cpus-per-task", 0, "CPUs each task asks for (0 = Slurm's default)")
	f.StringVar(&p.Partition, "partition", "", "Slurm partition (default: the cluster's default)")
	f.StringVar(&p.Time, "time", "", "time limit of each task and of the merge (sbatch --time, e.g. 1:00:00)")
	f.StringVar(&dir, "out", "sweepbench-slurm", "the job folder, on storage every node shares: scripts, logs, shards, merged.json")
	f.BoolVar(&submit, "submit", false, "submit the array and the merge (sbatch --parsable)")
	f.BoolVar(&hold, "hold", false, "with --submit: submit the array held (scontrol release ID starts it)")
	f.StringVar(&binary, "binary", "", "the sweepbench binary the nodes run (default: this one)")
	cmd.AddCommand(newSlurmStatusCmd(), newSlurmResubmitCmd())
	return cmd
}

// checkRunArgs parses the run flags as run would, so that a typo is
// refused before anything is submitted; the flags slurm sets itself are
// refused.
func checkRunArgs(args []string) error {
	for _, a := range args {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "--") {
			switch name {
			case "shard", "shard-dir", "out", "format", "no-save", "save", "db":
				return fmt.Errorf("--%s after --: slurm sets it (each task writes its shard into --out DIR; the merge writes DIR/merged.json and the session)", name)
			}
		}
	}
	run := newRunCmd()
	run.SetArgs(args)
	if err := run.ParseFlags(args); err != nil {
		return fmt.Errorf("the run flags: %w", err)
	}
	if rest := run.Flags().Args(); len(rest) > 0 {
		return fmt.Errorf("the run flags: unexpected %q", rest[0])
	}
	// The study's own checks (ranges, fee, objective...), as run does.
	var sf studyFlags
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	fs.ParseErrorsAllowlist.UnknownFlags = true
	sf.register(fs)
	sf.registerRobust(fs)
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("the run flags: %w", err)
	}
	if _, err := sf.spec.Parse(); err != nil {
		return err
	}
	_, err := robust.OptionsFor(sf.spec)
	return err
}

func newSlurmStatusCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "status DIR",
		Short: "Each task's state (squeue, sacct) and the shards present in a job folder",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := loadJobDir(args[0])
			if err != nil {
				return err
			}
			s, err := st.Status(cmd.Context(), slurm.Exec{})
			if err != nil {
				return err
			}
			return writeSlurmStatus(cmd.OutOrStdout(), s)
		},
	}
}

// loadJobDir reads job folder dir (slurm.Load), saying what to give when
// it does not exist.
func loadJobDir(dir string) (*slurm.State, error) {
	st, err := slurm.Load(dir)
	if nf := (*slurm.NoFolderError)(nil); errors.As(err, &nf) {
		return nil, fmt.Errorf("%s: the folder does not exist: give the folder sweepbench slurm --out DIR wrote", nf.Dir)
	}
	return st, err
}

func writeSlurmStatus(w io.Writer, s *slurm.Status) error {
	tw := tabwriter.NewWriter(newSanitized(w), 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tJOB\tSTATE\tSHARD")
	for _, t := range s.Tasks {
		state := t.State
		switch {
		case state != "":
		case t.Unknown:
			state = "unknown"
		default:
			state = "-"
		}
		shard := "missing"
		if t.Done() {
			shard = filepath.Base(t.Shard)
		} else if t.Active() {
			shard = "(computing)"
		}
		job := t.Job
		if job == "" {
			job = "-"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", t.Index, job, state, shard)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	c := s.Counts()
	merge := "merge job " + s.MergeJob + ": " + s.Merge
	switch {
	case s.MergeJob == "" && s.Complete():
		merge = "merge job: not submitted (every shard is there and merged: nothing to resubmit)"
	case s.MergeJob == "" && c.Done == len(s.Tasks):
		merge = "merge job: not submitted (every shard is there: sweepbench merge DIR merges them here, or sweepbench slurm resubmit DIR submits the merge job)"
	case s.MergeJob == "" && len(s.ArrayJobs) == 0:
		merge = "merge job: not submitted (sweepbench slurm resubmit DIR submits the array and the merge)"
	case s.MergeJob == "":
		merge = "merge job: not submitted"
	case s.MergeUnknown():
		merge = "merge job " + s.MergeJob + ": unknown"
	case s.Merge == "":
		merge = "merge job " + s.MergeJob + ": not known to squeue or sacct"
	}
	fmt.Fprintf(w, "%d of %d shards present, %d computing; %s; merged.json %s\n", c.Done, len(s.Tasks), c.Active(), merge,
		map[bool]string{true: "written", false: "not yet"}[s.Merged])
	if redo := c.Failed + c.Missing; redo > 0 {
		if s.Refusal() == nil {
			fmt.Fprintf(w, "%s failed or never ran: sweepbench slurm resubmit DIR submits them again\n", text.Plural(redo, "task"))
		} else {
			fmt.Fprintf(w, "%s failed or never ran\n", text.Plural(redo, "task"))
		}
	}
	if s.Unanswered != nil {
		switch unknown := s.Unknown(); {
		case len(unknown) > 0:
			fmt.Fprintf(w, "unknown: %s; %s %s may be running or pending: resubmit submits nothing until squeue answers (--force submits them anyway)\n",
				s.Unanswered, map[bool]string{true: "task", false: "tasks"}[len(unknown) == 1], slurm.TaskList(unknown))
		case s.Refusal() != nil:
			fmt.Fprintf(w, "unknown: %s; the merge job may be running: resubmit submits nothing until squeue answers (--force submits the merge again)\n", s.Unanswered)
		default:
			fmt.Fprintf(w, "note: %s; the states shown are sacct's\n", s.Unanswered)
		}
	}
	if s.Saved != nil && len(s.Saved.Sessions) > 0 {
		fmt.Fprintf(w, "saved as %s in %s\n", sessionList(s.Saved.Sessions), s.Saved.DB)
	}
	if s.Note != "" {
		fmt.Fprintf(w, "note: %s\n", s.Note)
	}
	return nil
}

func newSlurmResubmitCmd() *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "resubmit DIR",
		Short: "Submit again the tasks of a job folder that failed or never ran, and a merge that waits for them",
		Long: `resubmit submits again the tasks of job folder DIR that have no shard and
that Slurm neither runs nor holds (failed, cancelled, timed out, never
ran), and a merge job that waits for them. When squeue fails (slurmctld
down or restarting, a timeout) and sacct cannot tell either, the tasks'
states are unknown: they may be running or pending, and resubmit submits
nothing (exit status 1) unless --force.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := loadJobDir(args[0])
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			first := len(st.ArrayJobs) == 0 // written without --submit: its first submission
			res, err := st.Resubmit(cmd.Context(), slurm.Exec{}, force)
			var ue *slurm.UnknownError
			if errors.As(err, &ue) {
				what := "they may be running or pending: resubmitting them would run them twice, into the same shards; " +
					"run it again once squeue answers, or sweepbench slurm resubmit --force %s when you know they are not running"
				if len(ue.Tasks) == 0 {
					what = "it may be running: submitting it again would merge twice; " +
						"run it again once squeue answers, or sweepbench slurm resubmit --force %s when you know it is not running"
				}
				return fmt.Errorf("%w (%s)", err, fmt.Sprintf(what, args[0]))
			}
			if err != nil {
				return fmt.Errorf("resubmit %s: %w", args[0], err)
			}
			fmt.Fprintln(w, resubmitted(args[0], first, st.Plan.Shards, res))
			return nil
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "resubmit even the tasks whose state is unknown (squeue failed): only when you know they are not running")
	return cmd
}

// resubmitted says what Resubmit submitted in folder dir (first: its
// first submission, the folder written without --submit): its Summary,
// with where to look when nothing was submitted.
func resubmitted(dir string, first bool, shards int, res slurm.Resubmitted) string {
	line := res.Summary(dir, first, shards)
	if !res.Submitted() && !res.Complete {
		line += " (sweepbench slurm status " + dir + ")"
	}
	return line
}
