package semantics

import (
	"context"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/names"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

var gadgets = schema.GroupVersionResource{Group: "recreate.e2e.example.io", Version: "v1", Resource: "gadgets"}

// gadgetsRecreated is the Gadgets' CRD as created again: it serves v2 as
// well as v1 (stored), with the same open schema.
const gadgetsRecreated = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.recreate.e2e.example.io}
spec:
  group: recreate.e2e.example.io
  names: {kind: Gadget, listKind: GadgetList, plural: gadgets, singular: gadget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
  - name: v2
    served: true
    storage: false
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

// recreatedBound is how soon after its creation a CR of a CRD created
// again has its binding: well below the 15 s period at which the detector
// retries the kinds the host did not serve, and below the backoff an
// informer of the kind, failing to list since the CRD went, reaches
// within absence.
const recreatedBound = 5 * time.Second

// absence is how long the CRD stays deleted, as when an operator is
// uninstalled and installed again a while later.
const absence = 20 * time.Second

// TestCRDDeletedAndCreatedAgain: a kind whose CRD is deleted on the
// control plane loses its templates, so their bindings and Works go; the
// CRD created again (with another version list) is propagated again at
// once: a new CR the policy selects gets its binding within seconds and
// reaches the member, without restarting anything.
func TestCRDDeletedAndCreatedAgain(t *testing.T) {
	ns := framework.Namespace(t, "sem-crd-recreate")
	crd := gadgets.Resource + "." + gadgets.Group
	framework.Apply(t, framework.OpenCRD(gadgets, "Gadget", "sem-crd-recreate-gadgets", "member1"))
	t.Cleanup(func() {
		_, _ = framework.Kubectl(t, "delete", "clusterpropagationpolicy", "sem-crd-recreate-gadgets", "--ignore-not-found")
		_, _ = framework.Kubectl(t, "delete", "crd", crd, "--ignore-not-found", "--wait=false")
	})
	kubectl(t, "wait", "--for=condition=Established", "crd/"+crd, "--timeout=30s")
	member := memberGadgets(t, ns)
	waitServed(t, member, true)
	framework.Apply(t, fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: gadgets, namespace: %s}
spec:
  resourceSelectors: [{apiVersion: %s, kind: Gadget}]
  placement: {clusterAffinity: {clusterNames: [member1]}}
`, ns, gadgets.GroupVersion()))

	createGadget(t, ns, "one")
	waitBinding(t, ns, "one", 90*time.Second)
	waitGadgetIn(t, member, "one", 90*time.Second)

	// The CRD goes, and its CRs with it: so do their bindings and Works.
	kubectl(t, "delete", "crd", crd, "--wait=true", "--timeout=60s")
	framework.Eventually(t, 60*time.Second, func(ctx context.Context) string {
		_, err := framework.Karmada(t).WorkV1alpha2().ResourceBindings(ns).Get(ctx, names.BindingName("Gadget", "one"), metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			return fmt.Sprintf("the binding of one, whose CRD is deleted: %v", err)
		}
		return worksOf(ctx, t, "member1", ns, names.BindingName("Gadget", "one"))
	})
	// The member's CRD, propagated, goes too.
	waitServed(t, member, false)
	time.Sleep(absence)

	// Created again: once the member serves the kind again, a new CR is
	// bound at once and reaches it.
	framework.Apply(t, gadgetsRecreated)
	kubectl(t, "wait", "--for=condition=Established", "crd/"+crd, "--timeout=30s")
	waitServed(t, member, true)
	createGadget(t, ns, "two")
	start := time.Now()
	waitBinding(t, ns, "two", recreatedBound)
	t.Logf("the binding of two came %s after its creation", time.Since(start).Round(time.Millisecond))
	waitGadgetIn(t, member, "two", max(15*time.Second-time.Since(start), time.Second))
	t.Logf("two reached member1 %s after its creation", time.Since(start).Round(time.Millisecond))
}

// memberGadgets is member1's client of the Gadgets of ns.
func memberGadgets(t *testing.T, ns string) dynamic.ResourceInterface {
	t.Helper()
	cfg, err := framework.Member(t, "member1").RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	return dynamic.NewForConfigOrDie(cfg).Resource(gadgets).Namespace(ns)
}

// waitServed waits until member1 serves the Gadgets (served) or no longer
// does.
func waitServed(t *testing.T, member dynamic.ResourceInterface, served bool) {
	t.Helper()
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		_, err := member.List(ctx, metav1.ListOptions{})
		switch {
		case served && err != nil:
			return fmt.Sprintf("member1 does not serve %s: %v", gadgets.GroupResource(), err)
		case !served && err == nil:
			return fmt.Sprintf("member1 still serves %s", gadgets.GroupResource())
		}
		return ""
	})
}

// createGadget creates a Gadget on the control plane, retrying while the
// host does not serve the kind yet.
func createGadget(t *testing.T, ns, name string) {
	t.Helper()
	cfg, err := framework.Env.Host.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	c := dynamic.NewForConfigOrDie(cfg).Resource(gadgets).Namespace(ns)
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": gadgets.GroupVersion().String(), "kind": "Gadget",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     map[string]any{"size": int64(3)},
	}}
	framework.Eventually(t, 30*time.Second, func(ctx context.Context) string {
		if _, err := c.Create(ctx, u, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Sprintf("creating Gadget %s/%s: %v", ns, name, err)
		}
		return ""
	})
}

// waitBinding waits (up to within) for the binding of Gadget ns/name.
func waitBinding(t *testing.T, ns, name string, within time.Duration) {
	t.Helper()
	framework.Eventually(t, within, func(ctx context.Context) string {
		_, err := framework.Karmada(t).WorkV1alpha2().ResourceBindings(ns).Get(ctx, names.BindingName("Gadget", name), metav1.GetOptions{})
		if err != nil {
			return fmt.Sprintf("the binding of Gadget %s/%s: %v", ns, name, err)
		}
		return ""
	})
}

// waitGadgetIn waits (up to within) for Gadget name in member1.
func waitGadgetIn(t *testing.T, member dynamic.ResourceInterface, name string, within time.Duration) {
	t.Helper()
	framework.Eventually(t, within, func(ctx context.Context) string {
		if _, err := member.Get(ctx, name, metav1.GetOptions{}); err != nil {
			return fmt.Sprintf("Gadget %s in member1: %v", name, err)
		}
		return ""
	})
}

// worksOf tells "" when no Work in member belongs to the binding ns/binding.
func worksOf(ctx context.Context, t *testing.T, member, ns, binding string) string {
	list, err := framework.Karmada(t).WorkV1alpha1().Works(names.ExecutionNamespace(member)).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	for _, w := range list.Items {
		if w.Annotations[workv1alpha2.ResourceBindingNamespaceAnnotationKey] == ns && w.Annotations[workv1alpha2.ResourceBindingNameAnnotationKey] == binding {
			return fmt.Sprintf("Work %s of %s/%s still in %s", w.Name, ns, binding, w.Namespace)
		}
	}
	return ""
}
