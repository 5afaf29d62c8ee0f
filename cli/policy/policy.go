// Package policy makes the PropagationPolicies and
// ClusterPropagationPolicies karmadactl makes for the objects it applies
// (apply --all-clusters, -C) and promotes, named as karmadactl names them,
// so that a runbook finds them under the same names.
package policy

import (
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/davecgh/go-spew/spew"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/rand"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
)

// Name is the name karmadactl gives the policy of object namespace/name of
// kind gvk (names.GeneratePolicyName): the object's name (":" made ".",
// as ClusterRole names may hold it) and a hash of the namespace and the
// kind, in lower case.
func Name(namespace, name string, gvk schema.GroupVersionKind) string {
	h := fnv.New32a()
	// Karmada hashes the string as its DeepHashObject prints it.
	printer := spew.ConfigState{Indent: " ", SortKeys: true, DisableMethods: true, SpewKeys: true}
	// Writes to a hash never fail.
	_, _ = printer.Fprintf(h, "%#v", namespace+gvk.String())
	return strings.ToLower(fmt.Sprintf("%s-%s", strings.ReplaceAll(name, ":", "."), rand.SafeEncodeString(fmt.Sprint(h.Sum32()))))
}

// Target is an object a policy is made for.
type Target struct {
	GVK             schema.GroupVersionKind
	Namespace, Name string
	// Namespaced says whether the kind is namespaced: a
	// ClusterPropagationPolicy is made for the others.
	Namespaced bool
}

// For returns the policy placing t on clusters, or on every cluster when
// clusters is empty: a PropagationPolicy in t's namespace, or a
// ClusterPropagationPolicy for a cluster-scoped kind.
func For(t Target, clusters []string) runtime.Object {
	if !t.Namespaced {
		t.Namespace = "" // neither selected nor hashed into the name
	}
	spec := policyv1alpha1.PropagationSpec{
		ResourceSelectors: []policyv1alpha1.ResourceSelector{{
			APIVersion: t.GVK.GroupVersion().String(), Kind: t.GVK.Kind, Name: t.Name, Namespace: t.Namespace,
		}},
		Placement: policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: clusters}},
	}
	name := Name(t.Namespace, t.Name, t.GVK)
	if t.Namespaced {
		return &policyv1alpha1.PropagationPolicy{
			TypeMeta:   metav1.TypeMeta{APIVersion: policyv1alpha1.SchemeGroupVersion.String(), Kind: "PropagationPolicy"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: t.Namespace},
			Spec:       spec,
		}
	}
	return &policyv1alpha1.ClusterPropagationPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: policyv1alpha1.SchemeGroupVersion.String(), Kind: "ClusterPropagationPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       spec,
	}
}
