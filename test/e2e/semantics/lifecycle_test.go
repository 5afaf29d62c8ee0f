package semantics

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// lazyPolicy is propagationPolicy with activationPreference Lazy.
func lazyPolicy(ns, name, target string, priority int, preemption, selectorName string) string {
	return propagationPolicy(ns, name, target, priority, preemption, selectorName) + "  activationPreference: Lazy\n"
}

// placementOf tells where the binding of Deployment ns/name is placed
// (placement.clusterAffinity.clusterNames) and scheduled (spec.clusters).
func placementOf(ctx context.Context, t *testing.T, ns, name string) (placed, scheduled []string, err error) {
	b, err := framework.Karmada(t).WorkV1alpha2().ResourceBindings(ns).Get(ctx, name+"-deployment", metav1.GetOptions{})
	if err != nil {
		return nil, nil, err
	}
	if p := b.Spec.Placement; p != nil && p.ClusterAffinity != nil {
		placed = p.ClusterAffinity.ClusterNames
	}
	for _, c := range b.Spec.Clusters {
		scheduled = append(scheduled, c.Name)
	}
	return placed, scheduled, nil
}

// TestLazyActivationFirstMatch: a Lazy policy that first
// matches an existing template claims it but creates no binding until the
// template next changes.
func TestLazyActivationFirstMatch(t *testing.T) {
	ns := framework.Namespace(t, "sem-lazy-first")
	framework.Apply(t, nginx(ns, "web", 1, ""))
	// The template's own creation is long handled when the policy comes.
	time.Sleep(3 * time.Second)
	framework.Apply(t, lazyPolicy(ns, "lazy", "member1", 0, "Never", "web"))
	framework.Eventually(t, 60*time.Second, func(ctx context.Context) string {
		return claimedBy(ctx, t, ns, "web", ns, "lazy")
	})
	time.Sleep(5 * time.Second)
	if _, _, err := placementOf(t.Context(), t, ns, "web"); !apierrors.IsNotFound(err) {
		t.Fatalf("a Lazy policy's first match made a binding before the template changed (get: %v)", err)
	}
	if s := deploymentGone(t.Context(), t, "member1", ns, "web"); s != "" {
		t.Fatal(s)
	}
	// The template's next change propagates it.
	kubectl(t, "label", "deployment", "-n", ns, "web", "tier=front")
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		return deploymentIn(ctx, t, "member1", ns, "web")
	})
	waitEvent(t, ns, "Deployment", "web", "ApplyPolicySucceed", fmt.Sprintf("Apply policy(%s/lazy) succeed", ns))
}

// TestLazyActivationPreemption: a Lazy policy that
// preempts another switches the claim at once; the binding keeps its
// placement, and the workload its cluster, until the template next changes.
func TestLazyActivationPreemption(t *testing.T) {
	ns := framework.Namespace(t, "sem-lazy-preempt")
	framework.Apply(t, nginx(ns, "web", 1, "")+"---\n"+propagationPolicy(ns, "low", "member1", 1, "Never", "web"))
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		if s := claimedBy(ctx, t, ns, "web", ns, "low"); s != "" {
			return s
		}
		return deploymentIn(ctx, t, "member1", ns, "web")
	})
	framework.Apply(t, lazyPolicy(ns, "high", "member2", 5, "Always", "web"))
	framework.Eventually(t, 60*time.Second, func(ctx context.Context) string {
		return claimedBy(ctx, t, ns, "web", ns, "high")
	})
	waitEvent(t, ns, "Deployment", "web", "PreemptPolicySucceed",
		fmt.Sprintf("Propagation policy(%[1]s/high) preempted propagation policy(%[1]s/low) successfully", ns))
	time.Sleep(5 * time.Second)
	placed, scheduled, err := placementOf(t.Context(), t, ns, "web")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(placed, []string{"member1"}) || !slices.Equal(scheduled, []string{"member1"}) {
		t.Fatalf("after a Lazy preemption the binding is placed on %v, scheduled to %v; want member1 until the template changes", placed, scheduled)
	}
	if s := deploymentGone(t.Context(), t, "member2", ns, "web"); s != "" {
		t.Fatal(s)
	}
	// The template's next change moves it.
	kubectl(t, "label", "deployment", "-n", ns, "web", "tier=front")
	waitMoved(t, ns, "web", ns, "high", "member2", "member1")
}

// TestNamespaceClusterOverrides: ClusterOverridePolicies
// selecting a Namespace apply per cluster to the namespace Flotilla
// propagates on its own: plaintext, labels and annotations overriders.
func TestNamespaceClusterOverrides(t *testing.T) {
	const name = "sem-ns-overrides"
	framework.Apply(t, fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: ClusterOverridePolicy
metadata: {name: %[1]s}
spec:
  resourceSelectors: [{apiVersion: v1, kind: Namespace, name: %[1]s}]
  overrideRules:
  - targetCluster: {clusterNames: [member1]}
    overriders:
      plaintext: [{path: /metadata/labels/plain, operator: add, value: text}]
      labelsOverrider: [{operator: add, value: {team: one}}]
      annotationsOverrider: [{operator: add, value: {owner: ops}}]
`, name))
	t.Cleanup(func() {
		_, _ = framework.Kubectl(t, "delete", "clusteroverridepolicy", name, "--ignore-not-found")
	})
	framework.Namespace(t, name)
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		n1, err := framework.MemberClient(t, "member1").CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return "member1: " + err.Error()
		}
		if n1.Labels["plain"] != "text" || n1.Labels["team"] != "one" || n1.Annotations["owner"] != "ops" {
			return fmt.Sprintf("member1 namespace labels %v annotations %v: overrides not applied", n1.Labels, n1.Annotations)
		}
		n2, err := framework.MemberClient(t, "member2").CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return "member2: " + err.Error()
		}
		if n2.Labels["plain"] != "" || n2.Labels["team"] != "" || n2.Annotations["owner"] != "" {
			return fmt.Sprintf("member2, not targeted, has labels %v annotations %v", n2.Labels, n2.Annotations)
		}
		return ""
	})
}

// workApplied tells "" when the Work in member of the binding ns/binding
// has Applied=True.
func workApplied(ctx context.Context, t *testing.T, member, ns, binding string) string {
	list, err := framework.Karmada(t).WorkV1alpha1().Works("karmada-es-"+member).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	for _, w := range list.Items {
		if w.Annotations[workv1alpha2.ResourceBindingNamespaceAnnotationKey] != ns || w.Annotations[workv1alpha2.ResourceBindingNameAnnotationKey] != binding {
			continue
		}
		c := meta.FindStatusCondition(w.Status.Conditions, workv1alpha1.WorkApplied)
		if c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Sprintf("Work %s of %s/%s: Applied %+v", w.Name, ns, binding, c)
		}
		return ""
	}
	return fmt.Sprintf("no Work of %s/%s in %s", ns, binding, member)
}

// TestAdoptExistingMemberObjects: objects that exist in
// a member before Flotilla propagates their templates are found with a GET
// and, with conflictResolution Overwrite, taken over in place: a NodePort
// Service (whose create would fail with 422, the port being allocated) and
// a Secret a workload depends on. The Works become Applied. Deleting the
// template releases the adopted object: Flotilla never deletes from a
// member what it did not create.
func TestAdoptExistingMemberObjects(t *testing.T) {
	ns := framework.Namespace(t, "sem-adopt")
	const nodePort = 31857
	member := framework.MemberClient(t, "member1")
	var svcUID, secretUID string
	framework.Eventually(t, 60*time.Second, func(ctx context.Context) string {
		if svcUID == "" {
			s, err := member.CoreV1().Services(ns).Create(ctx, &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: "edge", Namespace: ns, Labels: map[string]string{"owner": "member"}},
				Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Selector: map[string]string{"app": "app"},
					Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(80), NodePort: nodePort}}},
			}, metav1.CreateOptions{})
			if err != nil {
				return "service in member1: " + err.Error()
			}
			svcUID = string(s.UID)
		}
		s, err := member.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: ns},
			StringData: map[string]string{"password": "old"},
		}, metav1.CreateOptions{})
		if err != nil {
			return "secret in member1: " + err.Error()
		}
		secretUID = string(s.UID)
		return ""
	})
	framework.Apply(t, fmt.Sprintf(`apiVersion: v1
kind: Service
metadata: {name: edge, namespace: %[1]s}
spec:
  type: NodePort
  selector: {app: app}
  ports: [{port: 80, targetPort: 80, nodePort: %[2]d}]
---
apiVersion: v1
kind: Secret
metadata: {name: creds, namespace: %[1]s}
stringData: {password: new}
---
%[3]s---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: adopt, namespace: %[1]s}
spec:
  propagateDeps: true
  conflictResolution: Overwrite
  resourceSelectors:
  - {apiVersion: v1, kind: Service, name: edge}
  - {apiVersion: apps/v1, kind: Deployment, name: app}
  placement: {clusterAffinity: {clusterNames: [member1]}}
`, ns, nodePort, nginx(ns, "app", 1, `      volumes:
      - name: creds
        secret: {secretName: creds}
`)))
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		if s := workApplied(ctx, t, "member1", ns, "edge-service"); s != "" {
			return s
		}
		svc, err := member.CoreV1().Services(ns).Get(ctx, "edge", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if string(svc.UID) != svcUID || svc.Labels[workv1alpha1.ManagedByKarmadaLabel] != workv1alpha1.ManagedByKarmadaLabelValue || svc.Labels["owner"] != "member" {
			return fmt.Sprintf("member1 Service uid %s (was %s) labels %v: not adopted in place", svc.UID, svcUID, svc.Labels)
		}
		return ""
	})
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		if s := workApplied(ctx, t, "member1", ns, "creds-secret"); s != "" {
			return s
		}
		s, err := member.CoreV1().Secrets(ns).Get(ctx, "creds", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if string(s.UID) != secretUID || string(s.Data["password"]) != "new" {
			return fmt.Sprintf("member1 Secret uid %s (was %s) password %q: not taken over in place", s.UID, secretUID, s.Data["password"])
		}
		return ""
	})

	// Flotilla did not create the Service: deleting its template releases
	// it in the member, it is not deleted.
	kubectl(t, "delete", "service", "-n", ns, "edge")
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		if s := workApplied(ctx, t, "member1", ns, "edge-service"); s != fmt.Sprintf("no Work of %s/edge-service in member1", ns) {
			return "the Service's Work is still there: " + s
		}
		svc, err := member.CoreV1().Services(ns).Get(ctx, "edge", metav1.GetOptions{})
		if err != nil {
			return "the adopted Service was deleted from member1: " + err.Error()
		}
		if string(svc.UID) != svcUID || svc.Labels[workv1alpha1.ManagedByKarmadaLabel] != "" || svc.Annotations[workv1alpha2.AdoptedAnnotation] != "" {
			return fmt.Sprintf("member1 Service uid %s (was %s) labels %v annotations %v: not released", svc.UID, svcUID, svc.Labels, svc.Annotations)
		}
		return ""
	})
}
