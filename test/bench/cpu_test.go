package bench

import (
	"bytes"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// clockTick is the unit of /proc/<pid>/stat's CPU times (USER_HZ, 100 on
// Linux for every architecture Go supports here).
const clockTick = 10 * time.Millisecond

// cpuTime is the CPU time (user and system) process pid has used.
func cpuTime(pid int) (time.Duration, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The fields after the command, which is in parentheses and may hold
	// anything: state is field 3, utime 14, stime 15.
	i := bytes.LastIndexByte(raw, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command", pid)
	}
	f := strings.Fields(string(raw[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	user, err1 := strconv.ParseInt(f[11], 10, 64)
	system, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: utime %q, stime %q", pid, f[11], f[12])
	}
	return time.Duration(user+system) * clockTick, nil
}

// cpuUse is the CPU time of the bed's processes by part: the
// machine's work, which a shared and noisy machine's wall clock hides.
type cpuUse map[string]time.Duration

// takeCPU reads the CPU time of every process of the bed: the host's
// components (flotilla-apiserver among them), the members' (their
// kube-apiservers apart), the shared etcd and the benchmark itself.
func takeCPU(t *testing.T) cpuUse {
	t.Helper()
	out := cpuUse{}
	add := func(part string, pid int) {
		if d, err := cpuTime(pid); err == nil {
			out[part] += d
		} else {
			t.Logf("CPU time of %s (pid %d): %v", part, pid, err)
		}
	}
	for _, p := range framework.Env.Host.Processes {
		add("host "+p.Component, p.PID)
	}
	for _, name := range benchMembers {
		for _, p := range framework.Member(t, name).Processes {
			part := "members' other components"
			if p.Component == "kube-apiserver" {
				part = "members' kube-apiservers"
			}
			add(part, p.PID)
		}
	}
	if e := framework.Env.Etcd; e != nil {
		add("etcd (host and members)", e.PID)
	}
	add("the benchmark's clients", os.Getpid())
	return out
}

// since is the CPU each part used from before to u, and the total.
func (u cpuUse) since(before cpuUse) (cpuUse, time.Duration) {
	out, total := cpuUse{}, time.Duration(0)
	for part, d := range u {
		out[part] = d - before[part]
		total += out[part]
	}
	return out, total
}

// String lists the parts, the largest first, in seconds.
func (u cpuUse) String() string {
	parts := make([]string, 0, len(u))
	for p := range u {
		parts = append(parts, p)
	}
	sort.Slice(parts, func(i, j int) bool { return u[parts[i]] > u[parts[j]] })
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %.1f s", p, u[p].Seconds())
	}
	return b.String()
}
