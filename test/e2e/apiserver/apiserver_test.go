// Package apiserver is the e2e suite of flotilla-apiserver's own operation:
// storage in an external etcd, leader election of the embedded
// controllers between replicas, and its Prometheus metrics (with member1
// joined, so that the propagation pipeline has work to observe).
package apiserver

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

func TestMain(m *testing.M) {
	framework.Main(m, "apiserver", env.Options{
		Members:  []env.MemberOptions{{Name: "member1"}},
		Flotilla: &env.FlotillaOptions{Args: []string{"--cluster-status-update-frequency=2s"}},
	}, "member1")
}

// A second replica stores in the environment's etcd (--etcd-servers), serves,
// waits for the controllers' lease while the first replica holds it, and
// takes the lease over when the first replica dies.
func TestExternalEtcdReplicaTakesOverLease(t *testing.T) {
	ctx := t.Context()
	e := framework.Env
	host, err := e.Host.Client()
	if err != nil {
		t.Fatal(err)
	}
	holder := func() string {
		l, err := host.CoordinationV1().Leases("karmada-system").Get(ctx, "flotilla-controllers", metav1.GetOptions{})
		if err != nil || l.Spec.HolderIdentity == nil {
			return ""
		}
		return *l.Spec.HolderIdentity
	}
	var first string
	if err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		first = holder()
		return first != "", nil
	}); err != nil {
		t.Fatal("the first replica never took the controllers' lease")
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if err := ln.Close(); err != nil { // the replica listens there next
		t.Fatal(err)
	}
	dir := t.TempDir()
	log := filepath.Join(e.Options.LogDir, "host", "flotilla-apiserver-2.log")
	p, err := env.StartProcess("host", "flotilla-apiserver-2", filepath.Join(e.Options.BinDir, env.FlotillaComponent), []string{
		"--kubeconfig=" + e.Host.Kubeconfig, "--etcd-servers=" + e.EtcdURL, "--etcd-prefix=/flotilla-replica-2",
		"--cert-dir=" + dir, "--bind-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", port), "--register-apiservices=false",
		"--metrics-bind-address=0",
	}, log)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(0)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // loopback probe
	if err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		resp, err := client.Get(fmt.Sprintf("https://127.0.0.1:%d/readyz", port))
		if err != nil {
			return false, nil
		}
		_ = resp.Body.Close() // nothing read: only the status counts
		return resp.StatusCode == http.StatusOK, nil
	}); err != nil {
		data, _ := os.ReadFile(log)
		t.Fatalf("the external-etcd replica never became ready:\n%s", data)
	}
	time.Sleep(3 * time.Second)
	if h := holder(); h != first {
		t.Fatalf("lease holder changed to %q while the first replica runs", h)
	}
	if data, _ := os.ReadFile(log); !strings.Contains(string(data), "Attempting to acquire leader lease") {
		t.Errorf("the second replica is not waiting for the lease")
	}

	// The first replica dies: the second takes the controllers over.
	e.Host.Process(env.FlotillaComponent).Stop(0)
	defer func() { _ = e.Host.Process(env.FlotillaComponent).Restart() }()
	var now string
	if err := wait.PollUntilContextTimeout(ctx, time.Second, time.Minute, true, func(context.Context) (bool, error) {
		now = holder()
		return now != "" && now != first, nil
	}); err != nil {
		t.Fatalf("the second replica did not take the lease over (holder %q)", now)
	}
}
