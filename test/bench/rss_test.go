package bench

import (
	"fmt"
	"strings"
	"testing"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

// vmHWM is the peak resident memory of process pid (bytes), from
// /proc/<pid>/status: what the kernel measured, not a sample.
func vmHWM(pid int) (int64, error) { return procStatus(pid, "VmHWM") }

// procStatus is env.ProcStatus.
func procStatus(pid int, field string) (int64, error) { return env.ProcStatus(pid, field) }

// controlPlanePeakRSS sums the peak RSS of the control plane's processes
// since they started: every process of the host cluster (kube-apiserver,
// kube-controller-manager, each flotilla-apiserver with its embedded
// etcd) and the shared etcd, which also stores the members' objects (so
// the sum is an upper bound). A sum of peaks is at least the peak of the
// sum.
func controlPlanePeakRSS(t *testing.T) (total int64, detail string) {
	t.Helper()
	e := framework.Env
	procs := append([]*envProcess{}, hostProcesses()...)
	if e.Etcd != nil {
		procs = append(procs, &envProcess{name: "etcd (shared with the members)", pid: e.Etcd.PID})
	}
	var parts []string
	for _, p := range procs {
		b, err := vmHWM(p.pid)
		if err != nil {
			t.Errorf("peak RSS of %s: %v", p.name, err)
			continue
		}
		total += b
		anon, errA := procStatus(p.pid, "RssAnon")
		file, errF := procStatus(p.pid, "RssFile")
		if errA != nil || errF != nil {
			parts = append(parts, fmt.Sprintf("%s %.0f MiB", p.name, float64(b)/(1<<20)))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %.0f MiB (now: %.0f MiB anonymous, %.0f MiB file-backed)", p.name, float64(b)/(1<<20), float64(anon)/(1<<20), float64(file)/(1<<20)))
	}
	return total, strings.Join(parts, ", ")
}

type envProcess struct {
	name string
	pid  int
}

func hostProcesses() []*envProcess {
	var out []*envProcess
	for _, p := range framework.Env.Host.Processes {
		out = append(out, &envProcess{name: p.Component, pid: p.PID})
	}
	return out
}
