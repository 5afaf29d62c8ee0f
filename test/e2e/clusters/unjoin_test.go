package clusters

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// TestUnjoin: unjoin removes the cluster and everything Flotilla created
// for it, on the control plane and in the member. member2 is then joined
// again as a user joins it: join waits for Ready, reporting progress on
// stderr.
func TestUnjoin(t *testing.T) {
	t.Cleanup(func() { framework.Rejoin(t, "member2") })
	ctx := t.Context()
	e := framework.Env
	m := framework.Member(t, "member2")
	out, err := exec.CommandContext(ctx, filepath.Join(e.Options.BinDir, "flotillactl"), "unjoin", "member2",
		"--kubeconfig="+e.Host.Kubeconfig, "--cluster-kubeconfig="+m.Kubeconfig).CombinedOutput()
	if err != nil {
		t.Fatalf("flotillactl unjoin: %v\n%s", err, out)
	}
	if _, err := karmada(t).ClusterV1alpha1().Clusters().Get(ctx, "member2", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("cluster member2 still exists: %v", err)
	}
	host, err := e.Host.Client()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"member2", "member2-impersonator"} {
		if _, err := host.CoreV1().Secrets("karmada-cluster").Get(ctx, s, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("control-plane secret %s still exists: %v", s, err)
		}
	}
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := host.CoreV1().Namespaces().Get(ctx, "karmada-es-member2", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Errorf("execution namespace karmada-es-member2 was not removed")
	}
	member, err := m.Client()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := member.RbacV1().ClusterRoles().Get(ctx, "karmada-controller-manager:karmada-member2", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("member ClusterRole of join still exists: %v", err)
	}
	if _, err := member.RbacV1().ClusterRoles().Get(ctx, "karmada-impersonator", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("member impersonation ClusterRole of unified auth still exists: %v", err)
	}
	if _, err := member.CoreV1().ServiceAccounts("karmada-cluster").Get(ctx, "karmada-member2", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("member ServiceAccount of join still exists: %v", err)
	}

	// Join again without --wait: karmadactl's line on stdout, then the wait
	// for Ready on stderr. join refuses while the member's karmada-cluster
	// namespace, which unjoin deleted, is still terminating: try again.
	var stdout, stderr bytes.Buffer
	err = wait.PollUntilContextTimeout(ctx, 2*time.Second, time.Minute, true, func(ctx context.Context) (bool, error) {
		stdout.Reset()
		stderr.Reset()
		cmd := exec.CommandContext(ctx, filepath.Join(e.Options.BinDir, "flotillactl"), "join", "member2",
			"--kubeconfig="+e.Host.Kubeconfig, "--cluster-kubeconfig="+m.Kubeconfig)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		return cmd.Run() == nil, nil
	})
	if err != nil {
		t.Fatalf("flotillactl join member2 again: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	if stdout.String() == "" || !strings.HasSuffix(stdout.String(), "cluster(member2) is joined successfully\n") {
		t.Errorf("join's stdout does not end with karmadactl's line:\n%s", stdout.String())
	}
	for _, want := range []string{"waiting up to 1m0s for cluster(member2) to be Ready", "cluster(member2) is Ready after "} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("join's stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	c, err := karmada(t).ClusterV1alpha1().Clusters().Get(ctx, "member2", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady) {
		t.Errorf("join returned before cluster member2 was Ready: %v", c.Status.Conditions)
	}
}
