package env

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestProcessStopKillsTheWholeGroup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	// The shell ignores SIGTERM and starts a child: Stop must still end both.
	p, err := startProcess("c", "shell", "/bin/sh", []string{"-c", "trap '' TERM; sleep 300 & echo $! > " + pidFile + "; wait"}, filepath.Join(dir, "shell.log"), false)
	if err != nil {
		t.Fatal(err)
	}
	var child int
	deadline := time.Now().Add(5 * time.Second)
	for child == 0 && time.Now().Before(deadline) {
		if data, err := os.ReadFile(pidFile); err == nil && strings.TrimSpace(string(data)) != "" {
			child = atoi(t, strings.TrimSpace(string(data)))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if child == 0 {
		t.Fatal("child never started")
	}
	if !alive(child, "sleep") {
		t.Fatal("child sleep is not alive before Stop")
	}
	p.Stop(200 * time.Millisecond)
	if done, _ := p.Exited(); !done {
		t.Error("shell still running after Stop")
	}
	deadline = time.Now().Add(2 * time.Second)
	for alive(child, "sleep") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if alive(child, "sleep") {
		t.Errorf("child %d of the process group survived Stop", child)
	}
	p.Stop(0) // twice is harmless
}

func TestWaitForNamesComponentAndLog(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	log := filepath.Join(dir, "broken.log")
	p, err := startProcess("member9", "broken", "/bin/sh", []string{"-c", "echo listen tcp 127.0.0.1:1: bind: address already in use; exit 3"}, log, false)
	if err != nil {
		t.Fatal(err)
	}
	err = p.waitFor(context.Background(), 10*time.Second, "ready", func(context.Context) error { return context.DeadlineExceeded })
	if err == nil {
		t.Fatal("waitFor succeeded for a process that exited")
	}
	for _, want := range []string{"member9/broken", log, "address already in use", "exit status 3"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}

	sleeper, err := startProcess("member9", "slow", "/bin/sleep", []string{"30"}, filepath.Join(dir, "slow.log"), false)
	if err != nil {
		t.Fatal(err)
	}
	defer sleeper.Stop(0)
	err = sleeper.waitFor(context.Background(), 300*time.Millisecond, "ready", func(context.Context) error { return os.ErrNotExist })
	if err == nil || !strings.Contains(err.Error(), "member9/slow was not ready after 300ms") || !strings.Contains(err.Error(), os.ErrNotExist.Error()) {
		t.Errorf("timeout error %v does not say what was not ready, for how long and why", err)
	}
}

func TestRetryOnPortClash(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	attempts := 0
	_, err := retryOnPortClash(func() (*Process, error) {
		attempts++
		script := "echo bind: address already in use; exit 1"
		if attempts == 2 {
			script = "sleep 30"
		}
		p, err := startProcess("c", "x", "/bin/sh", []string{"-c", script}, filepath.Join(dir, "x.log"), false)
		if err != nil {
			return nil, err
		}
		if attempts == 2 {
			defer p.Stop(0)
			return p, nil
		}
		return p, p.waitFor(context.Background(), 5*time.Second, "ready", func(context.Context) error { return os.ErrNotExist })
	})
	if err != nil || attempts != 2 {
		t.Errorf("got %v after %d attempts; want success on the second", err, attempts)
	}

	attempts = 0
	_, err = retryOnPortClash(func() (*Process, error) {
		attempts++
		p, err := startProcess("c", "y", "/bin/sh", []string{"-c", "echo some other failure; exit 1"}, filepath.Join(dir, "y.log"), false)
		if err != nil {
			return nil, err
		}
		return p, p.waitFor(context.Background(), 5*time.Second, "ready", func(context.Context) error { return os.ErrNotExist })
	})
	if err == nil || attempts != 1 {
		t.Errorf("got %v after %d attempts; want the failure at once, without retry", err, attempts)
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n := 0
	for _, r := range s {
		if r < '0' || r > '9' {
			t.Fatalf("not a pid: %q", s)
		}
		n = n*10 + int(r-'0')
	}
	return n
}
