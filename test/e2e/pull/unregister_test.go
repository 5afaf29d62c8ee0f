package pull

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// TestUnregister (S10), last: flotillactl unregister removes member3's
// Cluster from the control plane and the agent's credentials from member3.
// The agent runs meanwhile: deleting the Cluster deletes its Works, and the
// agent removes what they propagated to member3 (as unjoin does for push
// members); then it is stopped.
func TestUnregister(t *testing.T) {
	p := pullMember(t)
	defer p.Stop(5 * time.Second)
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
