package clusters

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// S1: unjoin removes the cluster and everything Flotilla created for it, on
// the control plane and in the member. member2 is joined again afterwards.
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
}
