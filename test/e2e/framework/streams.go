package framework

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/flotilla-io/flotilla/test/env"
)

// CheckWatchStreams watches ConfigMaps of the default namespace through
// watcher (a client of some proxy), creates one with member (a direct
// client of the member behind it) and fails t unless its event arrives
// within 30 s.
func CheckWatchStreams(t *testing.T, watcher, member kubernetes.Interface) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	w, err := watcher.CoreV1().ConfigMaps("default").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	name := fmt.Sprintf("watched-%d", time.Now().UnixNano())
	if _, err := member.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("watch closed before the event arrived")
			}
			if cm, isCM := ev.Object.(*corev1.ConfigMap); isCM && cm.Name == name {
				return
			}
		case <-ctx.Done():
			t.Fatal("no event for the new ConfigMap through the proxy")
		}
	}
}

// CheckLogsFollow runs `kubectl logs -f pod` with kubeconfig (a proxy's),
// appends a line to the member's kwok pod log and fails t unless kubectl
// streams it.
//
// A stream that ends before the line arrives is tried once more, with a new
// line appended after it starts (kwok's follower or a tunnel stream may
// end once); a follow that never streams still fails.
func CheckLogsFollow(t *testing.T, kubeconfig, pod string, member *env.Cluster) {
	t.Helper()
	var last error
	for attempt := 1; attempt <= 2; attempt++ {
		streamed, err := followOnce(t, kubeconfig, pod, member)
		if streamed {
			return
		}
		last = err
		t.Logf("logs -f attempt %d: the stream ended before the appended line (%v)", attempt, err)
	}
	t.Fatalf("the appended line never streamed through logs -f: %v (%s)", last, inotifyUse())
}

// inotifyUse says how many inotify instances this machine's processes hold
// against the per-user limit: kwok follows a log with one, and ends the
// follow at once when none is left.
func inotifyUse() string {
	limit, err := os.ReadFile("/proc/sys/fs/inotify/max_user_instances")
	if err != nil {
		return "inotify limit unknown: " + err.Error()
	}
	fds, _ := filepath.Glob("/proc/[0-9]*/fd/*") // a process gone meanwhile is not counted
	n := 0
	for _, fd := range fds {
		if target, err := os.Readlink(fd); err == nil && target == "anon_inode:inotify" {
			n++
		}
	}
	return fmt.Sprintf("%d inotify instances in use, limit %s", n, strings.TrimSpace(string(limit)))
}

// followOnce starts `kubectl logs -f`, appends a line to the pod's log once
// the stream has begun, and tells whether the line streamed.
func followOnce(t *testing.T, kubeconfig, pod string, member *env.Cluster) (bool, error) {
	t.Helper()
	lines, stop := streamKubectl(t, kubeconfig, "logs", "-f", pod)
	defer stop()
	if !lines.Scan() || !strings.Contains(lines.Text(), "kwok pod log") {
		t.Fatalf("first line %q", lines.Text())
	}
	marker := fmt.Sprintf("followed-%d", time.Now().UnixNano())
	f, err := os.OpenFile(member.PodLogFile(), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = fmt.Fprint(f, env.CRILogLine(marker))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatalf("appending to the pod log: %v", err)
	}
	for lines.Scan() {
		if strings.Contains(lines.Text(), marker) {
			return true, nil
		}
	}
	return false, lines.Err()
}

// CheckPortForward listens on the member's kwok port-forward target, runs
// `kubectl port-forward pod :80` with kubeconfig (a proxy's) and fails t
// unless a connection to the forwarded port reads what the listener says.
func CheckPortForward(t *testing.T, kubeconfig, pod string, member *env.Cluster) {
	t.Helper()
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", member.Ports.PortForwardTarget))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }() // best effort: the check is done
	greeting := fmt.Sprintf("hello-from-%s\n", pod)
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = io.WriteString(conn, greeting)
			_ = conn.Close() // the client fails the check if the greeting was lost
		}
	}()
	lines, stop := streamKubectl(t, kubeconfig, "port-forward", "pod/"+pod, ":80")
	defer stop()
	re := regexp.MustCompile(`Forwarding from 127\.0\.0\.1:(\d+) -> 80`)
	var local string
	for lines.Scan() {
		if m := re.FindStringSubmatch(lines.Text()); m != nil {
			local = m[1]
			break
		}
	}
	if local == "" {
		t.Fatal("kubectl port-forward did not start forwarding")
	}
	conn, err := net.DialTimeout("tcp", "127.0.0.1:"+local, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }() // best effort: only read from
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	got, _ := bufio.NewReader(conn).ReadString('\n')
	if got != greeting {
		t.Fatalf("read %q through the forwarded port, want %q", got, greeting)
	}
}

// streamKubectl starts kubectl with kubeconfig and args for at most 30 s and
// returns its standard output line by line, and stop, which kills it.
func streamKubectl(t *testing.T, kubeconfig string, args ...string) (*bufio.Scanner, func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	cmd := exec.CommandContext(ctx, filepath.Join(Env.Options.BinDir, "kubectl"), append([]string{"--kubeconfig=" + kubeconfig, "--cache-dir=" + t.TempDir()}, args...)...)
	return StreamCommand(t, cmd, cancel)
}

// StreamCommand starts cmd (made with the context cancel ends) and returns
// its standard output line by line, and stop, which kills it.
func StreamCommand(t *testing.T, cmd *exec.Cmd, cancel context.CancelFunc) (*bufio.Scanner, func()) {
	t.Helper()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	return bufio.NewScanner(stdout), func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		cancel()
	}
}
