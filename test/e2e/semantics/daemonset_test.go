package semantics

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// TestDaemonSetStatus: a DaemonSet's status on the
// control plane sums the members' (desired, current, ready, updated,
// available, misscheduled).
func TestDaemonSetStatus(t *testing.T) {
	ns := framework.Namespace(t, "sem-ds")
	framework.Apply(t, fmt.Sprintf(`apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: %[1]s}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      tolerations: [{operator: Exists}]
      containers: [{name: agent, image: busybox}]
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: agent, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: DaemonSet, name: agent}]
  placement: {clusterAffinity: {clusterNames: [member1, member2]}}
`, ns))
	framework.Eventually(t, 120*time.Second, func(ctx context.Context) string {
		var want [6]int32
		for _, m := range []string{"member1", "member2"} {
			d, err := framework.MemberClient(t, m).AppsV1().DaemonSets(ns).Get(ctx, "agent", metav1.GetOptions{})
			if err != nil {
				return err.Error()
			}
			s := d.Status
			if s.DesiredNumberScheduled == 0 || s.NumberReady != s.DesiredNumberScheduled {
				return fmt.Sprintf("%s: %d of %d ready", m, s.NumberReady, s.DesiredNumberScheduled)
			}
			for i, v := range []int32{s.DesiredNumberScheduled, s.CurrentNumberScheduled, s.NumberReady, s.UpdatedNumberScheduled, s.NumberAvailable, s.NumberMisscheduled} {
				want[i] += v
			}
		}
		d, err := framework.HostClient(t).AppsV1().DaemonSets(ns).Get(ctx, "agent", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		s := d.Status
		got := [6]int32{s.DesiredNumberScheduled, s.CurrentNumberScheduled, s.NumberReady, s.UpdatedNumberScheduled, s.NumberAvailable, s.NumberMisscheduled}
		if got != want {
			return fmt.Sprintf("template status (desired, current, ready, updated, available, misscheduled) %v, members sum %v", got, want)
		}
		return ""
	})
}
