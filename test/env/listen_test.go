package env

import (
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
)

func TestListensOn(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	port := l.Addr().(*net.TCPAddr).Port

	self := &Process{Cluster: "test", Component: "self", PID: os.Getpid()}
	if err := self.listensOn(port); err != nil {
		t.Errorf("the test process listens on %d: %v", port, err)
	}

	other := exec.Command("sleep", "30")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = other.Process.Kill(); _ = other.Wait() }()
	stranger := &Process{Cluster: "test", Component: "sleep", PID: other.Process.Pid}
	if err := stranger.listensOn(port); err == nil || !strings.Contains(err.Error(), "held by another process") {
		t.Errorf("a process without the socket passed for port %d: %v", port, err)
	}

	free, err := freePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	if err := self.listensOn(free[0]); err == nil || !strings.Contains(err.Error(), "nothing listens") {
		t.Errorf("a free port passed: %v", err)
	}
}

func TestURLPort(t *testing.T) {
	if got := urlPort("http://127.0.0.1:23790"); got != 23790 {
		t.Errorf("urlPort = %d", got)
	}
}
