package inventory

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	multiclusterv1alpha1 "github.com/flotilla-io/flotilla/apis/multicluster/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/inventory"
	"github.com/flotilla-io/flotilla/names"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// placeWeb applies, in ns, the Deployment web and a PropagationPolicy
// putting it on clusters (duplicated).
func placeWeb(t *testing.T, ns string, clusters ...string) {
	t.Helper()
	framework.Apply(t, fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: %[1]s}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement:
    clusterAffinity: {clusterNames: [%[2]s]}
    replicaScheduling: {replicaSchedulingType: Duplicated}
`, ns, strings.Join(clusters, ", ")))
}

// decisionClusters lists the clusters of a decision's slices, in order,
// and checks each names the profile in the inventory namespace.
func decisionClusters(d *unstructured.Unstructured) ([]string, error) {
	list, _, _ := unstructured.NestedSlice(d.Object, "decisions")
	out := []string{}
	for _, x := range list {
		ref, _, _ := unstructured.NestedStringMap(x.(map[string]any), "clusterProfileRef")
		if ref["namespace"] != names.InventoryNamespace {
			return nil, fmt.Errorf("decision %v: not a profile of the inventory namespace", x)
		}
		out = append(out, ref["name"])
	}
	return out, nil
}

// waitDecisions waits until slice 0 of the decision of the binding named
// binding in ns (the inventory namespace for a ClusterResourceBinding,
// ns "") lists exactly clusters, labelled with the binding's permanent id
// as its decision key.
func waitDecisions(t *testing.T, ns, binding string, clusters ...string) {
	t.Helper()
	dc := hostDynamic(t, nil)
	k := framework.Karmada(t)
	where, idLabel := ns, workv1alpha2.ResourceBindingPermanentIDLabel
	if ns == "" {
		where, idLabel = names.InventoryNamespace, workv1alpha2.ClusterResourceBindingPermanentIDLabel
	}
	framework.Eventually(t, time.Minute, func(ctx context.Context) string {
		var id string
		var spec []string
		if ns == "" {
			crb, err := k.WorkV1alpha2().ClusterResourceBindings().Get(ctx, binding, metav1.GetOptions{})
			if err != nil {
				return err.Error()
			}
			id = crb.Labels[idLabel]
			for _, c := range crb.Spec.Clusters {
				spec = append(spec, c.Name)
			}
		} else {
			rb, err := k.WorkV1alpha2().ResourceBindings(ns).Get(ctx, binding, metav1.GetOptions{})
			if err != nil {
				return err.Error()
			}
			id = rb.Labels[idLabel]
			for _, c := range rb.Spec.Clusters {
				spec = append(spec, c.Name)
			}
		}
		slices.Sort(spec)
		if !slices.Equal(spec, clusters) {
			return fmt.Sprintf("binding %s places on %v, want %v", binding, spec, clusters)
		}
		d, err := dc.Resource(multiclusterv1alpha1.PlacementDecisions).Namespace(where).Get(ctx, binding+"-0", metav1.GetOptions{})
		if err != nil {
			return fmt.Sprintf("the decision of %s: %v", binding, err)
		}
		got, err := decisionClusters(d)
		switch {
		case err != nil:
			return err.Error()
		case !slices.Equal(got, spec):
			return fmt.Sprintf("decision %s/%s lists %v, the binding's spec.clusters %v", where, d.GetName(), got, spec)
		case d.GetLabels()[multiclusterv1alpha1.LabelDecisionKey] != id || id == "" || d.GetLabels()[multiclusterv1alpha1.LabelDecisionIndex] != "0":
			return fmt.Sprintf("decision labels %v, want key %q index 0", d.GetLabels(), id)
		case d.GetLabels()[multiclusterv1alpha1.LabelClusterManager] != inventory.Manager:
			return fmt.Sprintf("decision labels %v, want the manager label", d.GetLabels())
		}
		return ""
	})
}

// TestPlacementDecisions: a ResourceBinding's decision lists its
// spec.clusters and follows it when the policy moves the workload; the
// binding gone, so is the decision. A ClusterResourceBinding's decision is
// in the inventory namespace.
func TestPlacementDecisions(t *testing.T) {
	ns := framework.Namespace(t, "inventory-decisions")
	placeWeb(t, ns, "member1", "member2")
	waitDecisions(t, ns, "web-deployment", "member1", "member2")

	placeWeb(t, ns, "member2")
	waitDecisions(t, ns, "web-deployment", "member2")

	// Consumers select Flotilla's decisions by label.
	out, err := framework.Kubectl(t, "get", "placementdecisions", "-n", ns, "-l", multiclusterv1alpha1.LabelClusterManager+"="+inventory.Manager)
	if err != nil || !strings.Contains(out, "web-deployment-0") {
		t.Errorf("kubectl get placementdecisions: %v\n%s", err, out)
	}

	if out, err := framework.Kubectl(t, "delete", "deployment", "web", "-n", ns); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	dc := hostDynamic(t, nil)
	framework.Eventually(t, time.Minute, func(ctx context.Context) string {
		_, err := dc.Resource(multiclusterv1alpha1.PlacementDecisions).Namespace(ns).Get(ctx, "web-deployment-0", metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			return fmt.Sprintf("the decision of a deleted workload: %v, want NotFound", err)
		}
		return ""
	})

	// A deleted namespace takes its decisions along: the namespace
	// controller deletes them (Flotilla's policy lets it) and the
	// namespace goes.
	placeWeb(t, ns, "member1")
	waitDecisions(t, ns, "web-deployment", "member1")
	host := framework.HostClient(t)
	if err := host.CoreV1().Namespaces().Delete(t.Context(), ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 2*time.Minute, func(ctx context.Context) string {
		n, err := host.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			var conds any
			if n != nil {
				conds = n.Status.Conditions
			}
			return fmt.Sprintf("namespace %s with a decision, deleted: %v, conditions %v", ns, err, conds)
		}
		return ""
	})

	// A cluster-scoped template: its decision in the inventory namespace.
	framework.Apply(t, `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: inventory-decision-role}
rules: [{apiGroups: [""], resources: [pods], verbs: [get]}]
---
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: inventory-decision-role}
spec:
  resourceSelectors: [{apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRole, name: inventory-decision-role}]
  placement: {clusterAffinity: {clusterNames: [member1]}}
`)
	t.Cleanup(func() {
		_, _ = framework.Kubectl(t, "delete", "--ignore-not-found", "clusterrole/inventory-decision-role", "clusterpropagationpolicy/inventory-decision-role")
	})
	waitDecisions(t, "", "inventory-decision-role-clusterrole", "member1")
}
