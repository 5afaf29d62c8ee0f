package env

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Process is one component of the test bed running as a local process in its
// own process group, with its output in a log file.
type Process struct {
	// Cluster and Component name the process in errors and in the log path.
	Cluster   string   `json:"cluster"`
	Component string   `json:"component"`
	Binary    string   `json:"binary"`
	Args      []string `json:"args"`
	PID       int      `json:"pid"`
	LogFile   string   `json:"logFile"`

	cmd    *exec.Cmd
	detach bool
	exited chan struct{}
	err    error
}

// startProcess starts binary with args, writing its output to logFile. With
// detach false the process is killed by the kernel when this process dies
// (Pdeathsig), so a test binary that is killed leaves nothing behind; with
// detach true it outlives its starter, as `make up` needs.
func startProcess(cluster, component, binary string, args []string, logFile string, detach bool) (*Process, error) {
	p := &Process{Cluster: cluster, Component: component, Binary: binary, Args: args, LogFile: logFile, detach: detach}
	if err := p.start(); err != nil {
		return nil, err
	}
	return p, nil
}

// start launches the process described by p.
func (p *Process) start() error {
	if err := os.MkdirAll(filepath.Dir(p.LogFile), 0o755); err != nil {
		return err
	}
	log, err := os.OpenFile(p.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer func() { _ = log.Close() }() // the child holds its own descriptor
	fmt.Fprintf(log, "==> %s %s\n", time.Now().Format(time.RFC3339), strings.Join(append([]string{p.Binary}, p.Args...), " "))

	cmd := exec.Command(p.Binary, p.Args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if !p.detach {
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s/%s: starting %s: %w", p.Cluster, p.Component, p.Binary, err)
	}
	exited := make(chan struct{})
	p.PID, p.cmd, p.exited, p.err = cmd.Process.Pid, cmd, exited, nil
	go func() {
		err := cmd.Wait()
		p.err = err
		close(exited)
	}()
	return nil
}

// Exited reports whether a process started by this program has ended, and how.
func (p *Process) Exited() (bool, error) {
	if p.exited == nil {
		return !alive(p.PID, p.Binary), nil
	}
	select {
	case <-p.exited:
		return true, p.err
	default:
		return false, nil
	}
}

// Stop sends SIGTERM to the process group, waits up to grace for the process
// to end, then sends SIGKILL. Stopping a process that is gone is not an error.
// It reports whether the process ended by itself within grace.
func (p *Process) Stop(grace time.Duration) bool {
	if !p.owned() {
		return true
	}
	_ = syscall.Kill(-p.PID, syscall.SIGTERM)
	deadline := time.Now().Add(grace)
	ended := false
	for time.Now().Before(deadline) {
		if done, _ := p.Exited(); done {
			ended = true
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The group may hold children even after its leader ended.
	_ = syscall.Kill(-p.PID, syscall.SIGKILL)
	if p.exited != nil {
		<-p.exited
	}
	return ended
}

// Kill sends SIGKILL to the process group at once, as `kill -9` does, and
// waits for the process to end.
func (p *Process) Kill() {
	if !p.owned() {
		return
	}
	_ = syscall.Kill(-p.PID, syscall.SIGKILL)
	if p.exited != nil {
		<-p.exited
	}
}

// owned reports whether PID still names the process we started: after a
// reboot or a long time, the number may belong to somebody else.
func (p *Process) owned() bool {
	if p.PID <= 0 {
		return false
	}
	if p.exited != nil {
		done, _ := p.Exited()
		return !done
	}
	return alive(p.PID, p.Binary)
}

// alive reports whether pid runs binary (read from /proc, Linux only).
func alive(pid int, binary string) bool {
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || len(cmdline) == 0 {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err == nil {
		// A zombie has exited; its parent has not reaped it yet.
		if i := bytes.LastIndexByte(stat, ')'); i > 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
			return false
		}
	}
	argv0 := string(bytes.SplitN(cmdline, []byte{0}, 2)[0])
	return argv0 == binary || filepath.Base(argv0) == filepath.Base(binary)
}

// waitFor polls check until it succeeds, the process exits, or timeout passes.
// Its error names the component and its log file, with the log's last lines.
func (p *Process) waitFor(ctx context.Context, timeout time.Duration, what string, check func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		if done, err := p.Exited(); done {
			return fmt.Errorf("%s/%s exited before it was %s (%v); log %s:\n%s", p.Cluster, p.Component, what, err, p.LogFile, tail(p.LogFile, 15))
		}
		cctx, ccancel := context.WithTimeout(ctx, 2*time.Second)
		last = check(cctx)
		ccancel()
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("%s/%s was not %s after %s (last error: %v); log %s:\n%s", p.Cluster, p.Component, what, timeout, last, p.LogFile, tail(p.LogFile, 15))
			}
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// tail returns the last n lines of a file, indented, for error messages.
func tail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return "    (" + err.Error() + ")"
	}
	defer func() { _ = f.Close() }() // only read from
	const window = 16 << 10
	if st, err := f.Stat(); err == nil && st.Size() > window {
		_, _ = f.Seek(-window, io.SeekEnd)
	}
	data, _ := io.ReadAll(f)
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "    " + strings.Join(lines, "\n    ")
}

// Restart starts a stopped process again with the same binary, arguments
// and log file (ports stay the same).
func (p *Process) Restart() error {
	if p.owned() {
		return fmt.Errorf("%s/%s (pid %d) is still running", p.Cluster, p.Component, p.PID)
	}
	return p.start()
}

// StartProcess starts an extra process for a test (killed when the test
// binary dies), with its output in logFile.
func StartProcess(cluster, component, binary string, args []string, logFile string) (*Process, error) {
	return startProcess(cluster, component, binary, args, logFile, false)
}
