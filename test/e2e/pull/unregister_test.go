package pull

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

// TestUnregister: flotillactl unregister removes member3's Cluster
// from the control plane and the agent's credentials from member3. The
// agent runs meanwhile: deleting the Cluster deletes its Works, and the
// agent removes what they propagated to member3 (as unjoin does for push
// members); then it is stopped, and member3 is registered again with a new
// agent for the tests that follow.
func TestUnregister(t *testing.T) {
	pullMember(t)
	t.Cleanup(func() {
		forgetPullMember()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		// Registration refuses a member whose karmada-system namespace,
		// which unregister deletes, is still terminating.
		m3 := framework.MemberClient(t, "member3")
		if err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
			_, err := m3.CoreV1().Namespaces().Get(ctx, "karmada-system", metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		}); err != nil {
			t.Errorf("member3's karmada-system namespace is still there after unregister: %v", err)
			return
		}
		if _, err := startPullMember(ctx); err != nil {
			t.Errorf("registering member3 again: %v", err)
			return
		}
		var last string
		if err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
			last = member3Is(ctx, t, metav1.ConditionTrue)
			return last == "", nil
		}); err != nil {
			t.Errorf("member3 registered again: %s", last)
		}
	})
	out, err := exec.CommandContext(t.Context(), filepath.Join(framework.Env.Options.BinDir, "flotillactl"), "unregister", "member3",
		"--kubeconfig="+framework.Member(t, "member3").Kubeconfig, "--control-plane-kubeconfig="+framework.Env.Host.Kubeconfig).CombinedOutput()
	if err != nil {
		t.Fatalf("flotillactl unregister: %v\n%s", err, out)
	}
	framework.Eventually(t, 2*time.Minute, func(ctx context.Context) string {
		if _, err := framework.Karmada(t).ClusterV1alpha1().Clusters().Get(ctx, "member3", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return "member3's Cluster still there: " + errString(err)
		}
		secrets, err := framework.MemberClient(t, "member3").CoreV1().Secrets("karmada-system").List(ctx, metav1.ListOptions{})
		if err != nil {
			return err.Error()
		}
		for _, s := range secrets.Items {
			if s.Name == "karmada-agent-config" {
				return "the agent's credentials are still in member3"
			}
		}
		return ""
	})
}

func errString(err error) string {
	if err == nil {
		return "no error"
	}
	return err.Error()
}
