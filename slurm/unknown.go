package slurm

import (
	"fmt"
	"strings"
)

// QueryError: Slurm could not be asked where the jobs stand. squeue
// failed (a transient error, slurmctld restarting or down, a timeout,
// squeue not installed), and sacct failed too (Sacct), is off, or lags
// behind; the tasks neither told are Unknown (Status.Unanswered).
type QueryError struct {
	Squeue error // squeue's failure
	Sacct  error // sacct's failure; nil when it answered
}

func (e *QueryError) Error() string {
	msg := "squeue failed: " + strings.TrimPrefix(firstLine(e.Squeue.Error()), "squeue: ")
	if e.Sacct != nil {
		msg += "; sacct failed too: " + strings.TrimPrefix(firstLine(e.Sacct.Error()), "sacct: ")
	}
	return msg
}

func (e *QueryError) Unwrap() []error {
	if e.Sacct == nil {
		return []error{e.Squeue}
	}
	return []error{e.Squeue, e.Sacct}
}

// UnknownError: Resubmit submitted nothing because states it would act
// on are unknown (Status.Refusal): Tasks, without a shard, may be running
// or pending; or, every task settled, the merge job Merge may be running.
// Resubmit with force submits them anyway.
type UnknownError struct {
	Query *QueryError
	Tasks []int  // the Unknown tasks
	Merge string // the merge job whose state is unknown, when Tasks is empty
}

func (e *UnknownError) Error() string {
	what := "the state of merge job " + e.Merge + " is unknown"
	switch {
	case len(e.Tasks) == 1:
		what = fmt.Sprintf("the state of task %d is unknown", e.Tasks[0])
	case len(e.Tasks) > 1:
		what = "the states of tasks " + TaskList(e.Tasks) + " are unknown"
	}
	return e.Query.Error() + "; " + what + ": nothing resubmitted"
}

func (e *UnknownError) Unwrap() error { return e.Query }

// TaskList is tasks as Slurm's --array takes them and the front ends say
// them: "1,4,5".
func TaskList(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ",")
}
