package semantics

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// r2DepsPolicy propagates Deployment workload and its dependencies to
// clusters with the given conflictResolution and preserveResourcesOnDeletion.
func r2DepsPolicy(ns, name, workload, conflict string, preserve bool, clusters string) string {
	return fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: %[2]s, namespace: %[1]s}
spec:
  propagateDeps: true
  conflictResolution: %[4]s
  preserveResourcesOnDeletion: %[5]t
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: %[3]s}]
  placement: {clusterAffinity: {clusterNames: [%[6]s]}}
`, ns, name, workload, conflict, preserve, clusters)
}

// r2ConflictCount is how many DependencyPolicyConflict events the attached
// binding name has had, repeats included, and their messages.
func r2ConflictCount(ctx context.Context, t *testing.T, ns, name string) (int32, []string, error) {
	sel := fields.Set{"involvedObject.kind": "ResourceBinding", "involvedObject.name": name, "reason": "DependencyPolicyConflict"}
	list, err := framework.HostClient(t).CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: sel.AsSelector().String()})
	if err != nil {
		return 0, nil, err
	}
	var n int32
	var msgs []string
	for _, e := range list.Items {
		n += max(e.Count, 1)
		msgs = append(msgs, e.Message)
	}
	return n, msgs, nil
}

// r2Binding returns the binding ns/name, or nil when it does not exist.
func r2Binding(ctx context.Context, t *testing.T, ns, name string) (*workv1alpha2.ResourceBinding, error) {
	b, err := framework.Karmada(t).WorkV1alpha2().ResourceBindings(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return b, err
}

// TestDependencyPolicyMerge: two workloads share a
// ConfigMap, one asking Overwrite and to preserve, the other Abort and not
// to preserve. The attached binding takes Overwrite and preserve, and a
// DependencyPolicyConflict warning names both conflicts in Karmada's
// words. Deleting the second workload's policy resolves the conflict: the
// workloads syncing again raise no more warnings.
func TestDependencyPolicyMerge(t *testing.T) {
	ns := framework.Namespace(t, "sem-deps-merge")
	framework.Apply(t, fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata: {name: shared, namespace: %[1]s}
data: {k: v}
---
%[2]s---
%[3]s---
%[4]s---
%[5]s`, ns, nginx(ns, "a", 1, sharedVolume), nginx(ns, "b", 1, sharedVolume),
		r2DepsPolicy(ns, "a", "a", "Overwrite", true, "member1"), r2DepsPolicy(ns, "b", "b", "Abort", false, "member1")))

	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		b, err := r2Binding(ctx, t, ns, "shared-configmap")
		if err != nil || b == nil {
			return fmt.Sprintf("attached binding: %v", err)
		}
		if len(b.Spec.RequiredBy) != 2 || b.Spec.ConflictResolution != policyv1alpha1.ConflictOverwrite || !ptr.Deref(b.Spec.PreserveResourcesOnDeletion, false) {
			return fmt.Sprintf("attached binding required by %d, conflictResolution %q, preserve %v: want 2, Overwrite, true",
				len(b.Spec.RequiredBy), b.Spec.ConflictResolution, ptr.Deref(b.Spec.PreserveResourcesOnDeletion, false))
		}
		return ""
	})
	const want = "Dependency policy conflict detected: ConflictResolution conflicted (Overwrite vs Abort); PreserveResourcesOnDeletion conflicted (true vs false)."
	if got := waitEvent(t, ns, "ResourceBinding", "shared-configmap", "DependencyPolicyConflict", "Dependency policy conflict detected"); got != want {
		t.Errorf("DependencyPolicyConflict message %q, want %q", got, want)
	}

	kubectl(t, "delete", "propagationpolicy", "-n", ns, "b")
	framework.Eventually(t, 60*time.Second, func(ctx context.Context) string {
		b, err := r2Binding(ctx, t, ns, "b-deployment")
		if err != nil || b == nil {
			return fmt.Sprintf("binding of b: %v", err)
		}
		if id := b.Labels[policyv1alpha1.PropagationPolicyPermanentIDLabel]; id != "" {
			return "the binding of b is still claimed by policy " + id
		}
		return ""
	})
	// Let the unclaimed binding's own sync go by, then count.
	time.Sleep(3 * time.Second)
	before, _, err := r2ConflictCount(t.Context(), t, ns, "shared-configmap")
	if err != nil {
		t.Fatal(err)
	}
	// Both workloads change: each syncs its dependencies again.
	for _, w := range []string{"a", "b"} {
		kubectl(t, "annotate", "deployment", "-n", ns, w, "sem.flotilla.io/resync="+w, "--overwrite")
	}
	framework.Eventually(t, 60*time.Second, func(ctx context.Context) string {
		b, err := r2Binding(ctx, t, ns, "shared-configmap")
		if err != nil || b == nil {
			return fmt.Sprintf("attached binding: %v", err)
		}
		if len(b.Spec.RequiredBy) != 2 || b.Spec.ConflictResolution != policyv1alpha1.ConflictOverwrite || !ptr.Deref(b.Spec.PreserveResourcesOnDeletion, false) {
			return fmt.Sprintf("after the policy's deletion: attached binding required by %d, %q, preserve %v; want a's policy",
				len(b.Spec.RequiredBy), b.Spec.ConflictResolution, ptr.Deref(b.Spec.PreserveResourcesOnDeletion, false))
		}
		return ""
	})
	time.Sleep(5 * time.Second)
	after, msgs, err := r2ConflictCount(t.Context(), t, ns, "shared-configmap")
	if err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Errorf("DependencyPolicyConflict raised again after b's policy was deleted: %d events, then %d (%q)", before, after, msgs)
	}
}

// TestDependencyFollowsTemplate: a workload whose
// template moves to another ServiceAccount and drops a ConfigMap volume
// (its binding's spec unchanged) leaves both dependencies: their attached
// bindings, required by nobody else, are deleted and the objects leave the
// member; the new ServiceAccount arrives.
func TestDependencyFollowsTemplate(t *testing.T) {
	ns := framework.Namespace(t, "sem-deps-follow")
	framework.Apply(t, fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: %[1]s}
data: {k: v}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: old-sa, namespace: %[1]s}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: new-sa, namespace: %[1]s}
---
%[2]s---
%[3]s`, ns, nginx(ns, "app", 1, `      serviceAccountName: old-sa
      volumes:
      - name: settings
        configMap: {name: settings}
`), r2DepsPolicy(ns, "app", "app", "Abort", false, "member1")))
	member := framework.MemberClient(t, "member1")
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		if _, err := member.CoreV1().ServiceAccounts(ns).Get(ctx, "old-sa", metav1.GetOptions{}); err != nil {
			return "old-sa in member1: " + err.Error()
		}
		if _, err := member.CoreV1().ConfigMaps(ns).Get(ctx, "settings", metav1.GetOptions{}); err != nil {
			return "settings in member1: " + err.Error()
		}
		return ""
	})
	rb, err := framework.Karmada(t).WorkV1alpha2().ResourceBindings(ns).Get(t.Context(), "app-deployment", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	generation := rb.Generation

	kubectl(t, "patch", "deployment", "-n", ns, "app", "--type=json", "-p",
		`[{"op":"replace","path":"/spec/template/spec/serviceAccountName","value":"new-sa"},{"op":"remove","path":"/spec/template/spec/volumes"}]`)
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		for _, name := range []string{"old-sa-serviceaccount", "settings-configmap"} {
			b, err := r2Binding(ctx, t, ns, name)
			if err != nil {
				return err.Error()
			}
			if b != nil {
				return fmt.Sprintf("attached binding %s still exists, required by %d", name, len(b.Spec.RequiredBy))
			}
		}
		if _, err := member.CoreV1().ServiceAccounts(ns).Get(ctx, "new-sa", metav1.GetOptions{}); err != nil {
			return "new-sa in member1: " + err.Error()
		}
		if _, err := member.CoreV1().ServiceAccounts(ns).Get(ctx, "old-sa", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Sprintf("old-sa still in member1 (%v)", err)
		}
		if _, err := member.CoreV1().ConfigMaps(ns).Get(ctx, "settings", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Sprintf("settings still in member1 (%v)", err)
		}
		return ""
	})
	rb, err = framework.Karmada(t).WorkV1alpha2().ResourceBindings(ns).Get(t.Context(), "app-deployment", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rb.Generation != generation {
		t.Logf("the workload's binding changed generation (%d to %d): the test did not isolate a template-only change", generation, rb.Generation)
	}
	if strings.Contains(rb.Annotations[workv1alpha2.BindingDependenciesAnnotationKey], "old-sa") {
		t.Errorf("the binding still records old-sa: %s", rb.Annotations[workv1alpha2.BindingDependenciesAnnotationKey])
	}
}

// TestAttachedBindingStatus: the attached binding of a
// ConfigMap two workloads on different members require has one
// aggregatedStatus item per member, applied, and FullyApplied True.
func TestAttachedBindingStatus(t *testing.T) {
	ns := framework.Namespace(t, "sem-deps-status")
	framework.Apply(t, fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata: {name: shared, namespace: %[1]s}
data: {k: v}
---
%[2]s---
%[3]s---
%[4]s---
%[5]s`, ns, nginx(ns, "a", 1, sharedVolume), nginx(ns, "b", 1, sharedVolume),
		r2DepsPolicy(ns, "a", "a", "Abort", false, "member1"), r2DepsPolicy(ns, "b", "b", "Abort", false, "member2")))
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		b, err := r2Binding(ctx, t, ns, "shared-configmap")
		if err != nil || b == nil {
			return fmt.Sprintf("attached binding: %v", err)
		}
		if b.Spec.Placement != nil || len(b.Spec.Clusters) != 0 {
			return fmt.Sprintf("attached binding has placement %v, clusters %v", b.Spec.Placement, b.Spec.Clusters)
		}
		var items []string
		for _, it := range b.Status.AggregatedStatus {
			items = append(items, fmt.Sprintf("%s:%v", it.ClusterName, it.Applied))
		}
		if got := strings.Join(items, ","); got != "member1:true,member2:true" {
			return fmt.Sprintf("aggregatedStatus %q, want member1:true,member2:true", got)
		}
		if c := meta.FindStatusCondition(b.Status.Conditions, workv1alpha2.FullyApplied); c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Sprintf("FullyApplied %+v", c)
		}
		return ""
	})
}

// r2DepWidgets is a made-up kind two ResourceInterpreterCustomizations
// each add a dependency to: the ConfigMap spec.configMap names and the
// Secret spec.secret names.
var r2DepWidgets = framework.OpenCRD(schema.GroupVersionResource{Group: "sem.flotilla.io", Version: "v1", Resource: "depwidgets"}, "DepWidget", "sem-depwidgets-crd", "member1") + "---\n" + `apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata: {name: sem-depwidget-configmaps}
spec:
  target: {apiVersion: sem.flotilla.io/v1, kind: DepWidget}
  customizations:
    dependencyInterpretation:
      luaScript: |
        function GetDependencies(desiredObj)
          return {{apiVersion = "v1", kind = "ConfigMap", namespace = desiredObj.metadata.namespace, name = desiredObj.spec.configMap}}
        end
---
apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata: {name: sem-depwidget-secrets}
spec:
  target: {apiVersion: sem.flotilla.io/v1, kind: DepWidget}
  customizations:
    dependencyInterpretation:
      luaScript: |
        function GetDependencies(desiredObj)
          return {{apiVersion = "v1", kind = "Secret", namespace = desiredObj.metadata.namespace, name = desiredObj.spec.secret}}
        end
`

// TestDependencyInterpretationUnion: two
// ResourceInterpreterCustomizations may both define dependencyInterpretation
// for one kind (admission accepts the second), and a workload of that kind
// propagates the dependencies of both.
func TestDependencyInterpretationUnion(t *testing.T) {
	framework.Apply(t, r2DepWidgets)
	kubectl(t, "wait", "--for=condition=Established", "crd/depwidgets.sem.flotilla.io", "--timeout=30s")
	ns := framework.Namespace(t, "sem-deps-union")
	t.Cleanup(func() {
		_, _ = framework.Kubectl(t, "delete", "depwidgets", "-n", ns, "--all", "--wait=true")
		_, _ = framework.Kubectl(t, "delete", "resourceinterpretercustomization", "sem-depwidget-configmaps", "sem-depwidget-secrets", "--ignore-not-found")
		_, _ = framework.Kubectl(t, "delete", "clusterpropagationpolicy", "sem-depwidgets-crd", "--ignore-not-found")
	})
	framework.Apply(t, fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata: {name: widget-settings, namespace: %[1]s}
data: {k: v}
---
apiVersion: v1
kind: Secret
metadata: {name: widget-creds, namespace: %[1]s}
stringData: {password: p}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: widgets, namespace: %[1]s}
spec:
  propagateDeps: true
  resourceSelectors: [{apiVersion: sem.flotilla.io/v1, kind: DepWidget}]
  placement: {clusterAffinity: {clusterNames: [member1]}}
---
apiVersion: sem.flotilla.io/v1
kind: DepWidget
metadata: {name: w, namespace: %[1]s}
spec: {configMap: widget-settings, secret: widget-creds}
`, ns))
	member := framework.MemberClient(t, "member1")
	framework.Eventually(t, 120*time.Second, func(ctx context.Context) string {
		if _, err := member.CoreV1().ConfigMaps(ns).Get(ctx, "widget-settings", metav1.GetOptions{}); err != nil {
			return "widget-settings in member1: " + err.Error()
		}
		if _, err := member.CoreV1().Secrets(ns).Get(ctx, "widget-creds", metav1.GetOptions{}); err != nil {
			return "widget-creds in member1: " + err.Error()
		}
		return ""
	})
}
