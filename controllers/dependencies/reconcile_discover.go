package dependencies

import (
	"context"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/interpreter"
)

// discoverReconciler lists what a binding's template depends on.
type discoverReconciler struct {
	// enabled tells whether the interpreter answers GetDependencies for
	// the kind; interpret asks it.
	enabled   func(gvk schema.GroupVersionKind) bool
	interpret func(obj *unstructured.Unstructured) ([]interpreter.DependentObjectReference, error)
	// getTemplate reads a template.
	getTemplate func(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error)
	// listNames names the objects of a kind in namespace that selector
	// matches.
	listNames func(ctx context.Context, gvk schema.GroupVersionKind, namespace string, selector labels.Selector) ([]string, error)
}

// reconcile lists the dependencies of rb's template, sorted and without
// duplicates, expanding label selectors over the template's namespace. The
// template is returned when it was read.
func (r *discoverReconciler) reconcile(ctx context.Context, rb *workv1alpha2.ResourceBinding) (*unstructured.Unstructured, []dependency, error) {
	gvk := schema.FromAPIVersionAndKind(rb.Spec.Resource.APIVersion, rb.Spec.Resource.Kind)
	if !r.enabled(gvk) {
		return nil, nil, nil
	}
	tmpl, err := r.getTemplate(ctx, gvk, rb.Spec.Resource.Namespace, rb.Spec.Resource.Name)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil, nil
		}
		// Not watched yet (just after a restart): retry rather than take
		// the template for one without dependencies and release them.
		return nil, nil, fmt.Errorf("reading the template of %s/%s: %w", rb.Namespace, rb.Name, err)
	}
	refs, err := r.interpret(tmpl)
	if err != nil {
		return tmpl, nil, err
	}
	var out []dependency
	for _, ref := range refs {
		ns := ref.Namespace
		if ns == "" {
			ns = rb.Namespace
		}
		if ref.Name != "" {
			out = append(out, dependency{APIVersion: ref.APIVersion, Kind: ref.Kind, Namespace: ns, Name: ref.Name})
			continue
		}
		if ref.LabelSelector == nil {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(ref.LabelSelector)
		if err != nil {
			continue
		}
		matched, err := r.listNames(ctx, schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind), ns, sel)
		if err != nil {
			return tmpl, nil, err
		}
		for _, name := range matched {
			out = append(out, dependency{APIVersion: ref.APIVersion, Kind: ref.Kind, Namespace: ns, Name: name})
		}
	}
	slices.SortFunc(out, func(a, b dependency) int { return strings.Compare(a.Kind+"/"+a.Name, b.Kind+"/"+b.Name) })
	return tmpl, slices.Compact(out), nil
}
