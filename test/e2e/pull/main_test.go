// Package pull holds the e2e tests of Pull mode:
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
	// agentMu guards agent and agentKubeconfig: member3's registration and
	// agent, made by the first test that needs them and again after a test
	// unregistered member3.
	agentMu sync.Mutex
	agent   *env.Process
	// agentKubeconfig is the control-plane identity registration issued.
	agentKubeconfig string
)

// pullMember makes sure member3 is registered and its agent runs, and
// waits until member3 is a Ready pull cluster.
func pullMember(t *testing.T) *env.Process {
	t.Helper()
	p, err := startPullMember(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	waitReady(t, metav1.ConditionTrue)
	return p
}

// startPullMember registers member3 as a user does (bootstrap token, CSR,
// the issued identity) and starts its agent, unless that is done; an agent
// that was killed is started again.
func startPullMember(ctx context.Context) (*env.Process, error) {
	agentMu.Lock()
	defer agentMu.Unlock()
	if agent != nil {
		if exited, _ := agent.Exited(); exited {
			if err := agent.Restart(); err != nil {
				return nil, err
			}
		}
		return agent, nil
	}
	kubeconfig, err := framework.Env.Register(ctx, "member3")
	if err != nil {
		return nil, err
	}
	p, err := framework.Env.StartAgent(ctx, "member3", kubeconfig, "--cluster-lease-duration=10s")
	if err != nil {
		return nil, err
	}
	agent, agentKubeconfig = p, kubeconfig
	return agent, nil
}

// forgetPullMember stops member3's agent and forgets its registration:
// the next startPullMember registers member3 again.
func forgetPullMember() {
	agentMu.Lock()
	defer agentMu.Unlock()
	if agent != nil {
		agent.Stop(5 * time.Second)
	}
	agent = nil
}

// waitReady waits until member3's Ready condition has status want.
func waitReady(t *testing.T, want metav1.ConditionStatus) {
	t.Helper()
	framework.Eventually(t, 2*time.Minute, func(ctx context.Context) string { return member3Is(ctx, t, want) })
}

// member3Is says how member3 differs from a pull cluster whose Ready
// condition has status want, or "".
func member3Is(ctx context.Context, t *testing.T, want metav1.ConditionStatus) string {
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
}
