package semantics

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// TestEvents: the events a Karmada user waits for appear on the objects Karmada
// records them on, with Karmada's message forms (docs/compatibility.md,
// Events).
func TestEvents(t *testing.T) {
	ns := framework.Namespace(t, "sem-events")
	framework.Apply(t, fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata: {name: web-config, namespace: %[1]s}
data: {mode: prod}
---
%[2]s---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: %[1]s}
spec:
  propagateDeps: true
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement:
    clusterAffinity: {clusterNames: [member1, member2]}
    replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Weighted,
      weightPreference: {staticWeightList: [{targetCluster: {clusterNames: [member1]}, weight: 1}, {targetCluster: {clusterNames: [member2]}, weight: 1}]}}
---
apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: web-labels, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  overrideRules:
  - targetCluster: {clusterNames: [member1]}
    overriders: {labelsOverrider: [{operator: add, value: {tier: gold}}]}
`, ns, nginx(ns, "web", 2, `      volumes:
      - name: config
        configMap: {name: web-config}
`)))
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		if s := deploymentIn(ctx, t, "member1", ns, "web"); s != "" {
			return s
		}
		return deploymentIn(ctx, t, "member2", ns, "web")
	})
	// On the template.
	for _, e := range []struct{ reason, msg string }{
		{"ApplyPolicySucceed", "Apply policy(" + ns + "/web) succeed"},
		{"GetReplicasSucceed", "Get replicas of resource template successfully."},
		{"GetDependenciesSucceed", "Get dependencies([ConfigMap/" + ns + "/web-config]) succeed."},
		{"ApplyOverridePolicySucceed", "Apply override policy(" + ns + "/web-labels) for cluster(member1) succeed."},
		{"ScheduleBindingSucceed", ""},
		{"SyncWorkSucceed", ""},
		{"SyncSucceed", "Successfully applied resource(" + ns + "/web) to cluster member1"},
		{"AggregateStatusSucceed", ""},
	} {
		waitEvent(t, ns, "Deployment", "web", e.reason, e.msg)
	}
	// The override targets member1 only.
	noEventWith(t, ns, "Deployment", "web", "ApplyOverridePolicySucceed", "cluster(member2)")
	// On the binding.
	for _, e := range []struct{ reason, msg string }{
		{"ScheduleBindingSucceed", ""},
		{"SyncWorkSucceed", ""},
		{"SyncScheduleResultToDependenciesSucceed", "Sync schedule results to dependencies succeed."},
		{"AggregateStatusSucceed", ""},
	} {
		waitEvent(t, ns, "ResourceBinding", "web-deployment", e.reason, e.msg)
	}
	// On the Works, in the execution namespaces.
	for _, m := range []string{"member1", "member2"} {
		es := "karmada-es-" + m
		waitEvent(t, es, "Work", "", "ReflectStatusSucceed", "Reflect status for object(Deployment/"+ns+"/web) succeed.")
		waitEvent(t, es, "Work", "", "InterpretHealthSucceed", "Interpret health of object(Deployment/"+ns+"/web) as healthy.")
		waitEvent(t, es, "Work", "", "SyncSucceed", "to cluster("+m+")")
		// On the Cluster (recorded when the environment registered it).
		waitEvent(t, "default", "Cluster", m, "CreateExecutionSpaceSucceed", "Created execution space("+es+") for cluster("+m+").")
	}
}

// noEventWith checks that no event of reason on the object has msg.
func noEventWith(t *testing.T, ns, kind, name, reason, msg string) {
	t.Helper()
	for _, m := range eventsOf(t, ns, kind, name, reason) {
		if strings.Contains(m, msg) {
			t.Errorf("unexpected %s event on %s %s/%s: %s", reason, kind, ns, name, m)
		}
	}
}
