package semantics

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// replicaKind is a CRD whose replicas a ResourceInterpreterCustomization
// reads with kube.accuratePodRequirements (no built-in interpretation).
var replicaKind = framework.OpenCRD(schema.GroupVersionResource{Group: "sem.flotilla.io", Version: "v1", Resource: "replicators"}, "Replicator", "") + "---\n" + `apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata: {name: sem-replicator}
spec:
  target: {apiVersion: sem.flotilla.io/v1, kind: Replicator}
  customizations:
    replicaResource:
      luaScript: |
        local kube = require("kube")
        function GetReplicas(obj)
          return obj.spec.replicas, kube.accuratePodRequirements(obj.spec.template)
        end
`

// TestReplicaRequirementsCarryNamespace: with
// --resource-quota-estimate (Karmada's ResourceQuotaEstimate gate), the
// replica requirements of a binding carry the template's namespace and the
// pod template's priority class, for a built-in kind and for a kind a Lua
// customization interprets.
func TestReplicaRequirementsCarryNamespace(t *testing.T) {
	ns := framework.Namespace(t, "sem-rq-ns")
	framework.Apply(t, replicaKind)
	t.Cleanup(func() {
		_, _ = framework.Kubectl(t, "delete", "--ignore-not-found", "resourceinterpretercustomization/sem-replicator", "crd/replicators.sem.flotilla.io")
	})
	policy := fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: all, namespace: %s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}, {apiVersion: sem.flotilla.io/v1, kind: Replicator}]
  placement:
    clusterAffinity: {clusterNames: [member1, member2]}
    replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Weighted, weightPreference: {dynamicWeight: AvailableReplicas}}
`, ns)
	template := `{spec: {priorityClassName: batch-low, containers: [{name: c, image: nginx, resources: {requests: {cpu: 10m}}}]}}`
	framework.Apply(t, policy+"---\n"+fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: %[1]s}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template: {metadata: {labels: {app: web}}, spec: {priorityClassName: batch-low, containers: [{name: c, image: nginx, resources: {requests: {cpu: 10m}}}]}}
---
apiVersion: sem.flotilla.io/v1
kind: Replicator
metadata: {name: lua, namespace: %[1]s}
spec:
  replicas: 2
  template: %[2]s
`, ns, template))
	for _, name := range []string{"web-deployment", "lua-replicator"} {
		framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
			b, err := framework.Karmada(t).WorkV1alpha2().ResourceBindings(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err.Error()
			}
			rr := b.Spec.ReplicaRequirements
			if rr == nil {
				return name + " has no replica requirements yet"
			}
			want := workv1alpha2.ReplicaRequirements{Namespace: ns, PriorityClassName: "batch-low"}
			if rr.Namespace != want.Namespace || rr.PriorityClassName != want.PriorityClassName || rr.ResourceRequest.Cpu().MilliValue() != 10 {
				return fmt.Sprintf("%s requirements %+v, want namespace %s, priority class batch-low and 10m CPU", name, *rr, ns)
			}
			return ""
		})
	}
}
