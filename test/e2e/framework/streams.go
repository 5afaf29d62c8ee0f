package framework

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
func CheckLogsFollow(t *testing.T, kubeconfig, pod string, member *env.Cluster) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(Env.Options.BinDir, "kubectl"), "--kubeconfig="+kubeconfig, "--cache-dir="+t.TempDir(), "logs", "-f", pod)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() || !strings.Contains(lines.Text(), "kwok pod log") {
		t.Fatalf("first line %q", lines.Text())
	}
	marker := fmt.Sprintf("followed-%d", time.Now().UnixNano())
	f, err := os.OpenFile(member.PodLogFile(), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(f, env.CRILogLine(marker))
	f.Close()
	for lines.Scan() {
		if strings.Contains(lines.Text(), marker) {
			return
		}
	}
	t.Fatalf("the appended line never streamed through logs -f: %v", lines.Err())
}
