package sessions

import (
	"os"
	"strconv"
	"strings"
)

// process identifies the process writing a study, so that a later start
// can tell a live run from one whose process died (kill -9, a dropped SSH
// session, a reboot): same host, and the pid is gone or now belongs to a
// process that started at another time.
type process struct {
	Host  string
	PID   int
	Start string // boot id and start tick (Linux), "" where unknown
}

func currentProcess() process {
	host, _ := os.Hostname()
	return process{Host: host, PID: os.Getpid(), Start: processStart(os.Getpid())}
}

// liveness is what can be said about a study's writer from here.
type liveness int

const (
	alive   liveness = iota // this process, or a process with that pid and start
	dead                    // on this host, and no such process
	unknown                 // another host: cannot tell
)

func (s *Store) liveness(p process) liveness {
	if p.Host != s.self.Host {
		return unknown
	}
	if p.PID == s.self.PID && p.Start == s.self.Start {
		return alive
	}
	if p.PID <= 0 || !pidAlive(p.PID) {
		return dead
	}
	state, start := procStat(p.PID)
	switch {
	case state == 'Z' || state == 'X':
		return dead // killed, not yet reaped by its parent
	case p.Start != "" && start != "" && start != p.Start:
		return dead // the pid was reused
	}
	return alive
}

// processStart returns "BOOTID/STARTTICK" for pid from /proc (Linux), or
// "" where /proc is not there.
func processStart(pid int) string {
	_, start := procStat(pid)
	return start
}

// procStat reads pid's state letter and start token from /proc/PID/stat
// (Linux); 0 and "" where /proc is not there.
func procStat(pid int) (state byte, start string) {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, ""
	}
	// Fields counted from 1: 3 is the state, 22 the start time in clock
	// ticks after boot. The command name (2) is in parentheses and may hold
	// spaces, so count from the last ')'.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, ""
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 || len(f[0]) != 1 {
		return 0, ""
	}
	boot, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	return f[0][0], strings.TrimSpace(string(boot)) + "/" + f[19]
}
