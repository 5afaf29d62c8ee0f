package pull

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// TestAgentKilled: the agent killed with SIGKILL leaves member3
// Ready Unknown once the grace period has passed; restarted, it brings
// member3 back to Ready and rewrites nothing it had applied.
func TestAgentKilled(t *testing.T) {
	p := pullMember(t)
	ns := framework.Namespace(t, "pull-restart")
	framework.Apply(t, fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: %[1]s}
data: {k: v}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: settings, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: settings}]
  placement: {clusterAffinity: {clusterNames: [member3]}}
`, ns))
	var before string
	framework.Eventually(t, time.Minute, func(ctx context.Context) string {
		cm, err := framework.MemberClient(t, "member3").CoreV1().ConfigMaps(ns).Get(ctx, "settings", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		before = cm.ResourceVersion
		return ""
	})
	p.Kill()
	waitReady(t, metav1.ConditionUnknown)
	if err := p.Restart(); err != nil {
		t.Fatal(err)
	}
	waitReady(t, metav1.ConditionTrue)
	// Give the restarted agent time to go over its Works.
	time.Sleep(5 * time.Second)
	cm, err := framework.MemberClient(t, "member3").CoreV1().ConfigMaps(ns).Get(t.Context(), "settings", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cm.ResourceVersion != before {
		t.Errorf("the restarted agent rewrote member3's ConfigMap (resourceVersion %s, was %s)", cm.ResourceVersion, before)
	}
}
