// Package pull holds the e2e tests of Pull mode (issue 14, scenario S10):
// member3 is reached only by its flotilla-agent; member1 is a push member
// for comparison.
package pull

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

func TestMain(m *testing.M) {
	framework.Main(m, "pull", env.Options{
		Members: []env.MemberOptions{{Name: "member1"}, {Name: "member3"}},
		Flotilla: &env.FlotillaOptions{Args: []string{
			"--cluster-status-update-frequency=2s", "-v=2",
			// A killed agent shows within seconds.
			"--cluster-monitor-grace-period=10s",
		}},
	}, "member1")
}

var (
	agentOnce sync.Once
	agent     *env.Process
	// agentKubeconfig is the control-plane identity registration issued.
	agentKubeconfig string
)

// pullMember starts member3's agent once and waits until member3 is a
// Ready pull cluster.
func pullMember(t *testing.T) *env.Process {
	t.Helper()
	agentOnce.Do(func() {
		// Registered as a user does: bootstrap token, CSR, the issued identity.
		kubeconfig, err := framework.Env.Register(context.Background(), "member3")
		if err != nil {
			t.Fatal(err)
		}
		agentKubeconfig = kubeconfig
		p, err := framework.Env.StartAgent(context.Background(), "member3", kubeconfig, "--cluster-lease-duration=10s")
		if err != nil {
			t.Fatal(err)
		}
		agent = p
	})
	if agent == nil {
		t.Fatal("member3's agent did not start")
	}
	waitReady(t, metav1.ConditionTrue)
	return agent
}

// waitReady waits until member3's Ready condition has status want.
func waitReady(t *testing.T, want metav1.ConditionStatus) {
	t.Helper()
	framework.Eventually(t, 2*time.Minute, func(ctx context.Context) string {
		c, err := framework.Karmada(t).ClusterV1alpha1().Clusters().Get(ctx, "member3", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if c.Spec.SyncMode != clusterv1alpha1.Pull {
			return fmt.Sprintf("member3 syncMode %q, want Pull", c.Spec.SyncMode)
		}
		cond := meta.FindStatusCondition(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
		if cond == nil || cond.Status != want {
			return fmt.Sprintf("member3 Ready condition %+v, want %s", cond, want)
		}
		return ""
	})
}
