package dependencies

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/interpreter"
)

func TestDiscoverReconciler(t *testing.T) {
	t.Parallel()
	ref := func(kind, ns, name string) interpreter.DependentObjectReference {
		return interpreter.DependentObjectReference{APIVersion: "v1", Kind: kind, Namespace: ns, Name: name}
	}
	selecting := func(kind string, sel *metav1.LabelSelector) interpreter.DependentObjectReference {
		return interpreter.DependentObjectReference{APIVersion: "v1", Kind: kind, LabelSelector: sel}
	}
	dep := func(kind, ns, name string) dependency {
		return dependency{APIVersion: "v1", Kind: kind, Namespace: ns, Name: name}
	}
	tests := []struct {
		name        string
		disabled    bool
		templateErr error
		refs        []interpreter.DependentObjectReference
		interpErr   error
		// selected are the names listNames returns; listErr its error.
		selected []string
		listErr  error
		wantTmpl bool
		want     []dependency
		// wantLists are the listNames calls, "kind ns selector".
		wantLists []string
		wantErr   bool
	}{
		{name: "no GetDependencies for the kind: none, the template not read", disabled: true},
		{name: "template gone: none", templateErr: apierrors.NewNotFound(schema.GroupResource{Group: "apps", Resource: "deployments"}, "app")},
		{name: "template unreadable: an error to retry", templateErr: errors.New("not watched"), wantErr: true},
		{name: "the interpreter fails: an error with the template", interpErr: errors.New("lua"), wantTmpl: true, wantErr: true},
		{name: "named: in the binding's namespace unless given, sorted, once", wantTmpl: true,
			refs: []interpreter.DependentObjectReference{ref("Secret", "", "s"), ref("ConfigMap", "other", "cm"), ref("ConfigMap", "", "a"), ref("Secret", "", "s")},
			want: []dependency{dep("ConfigMap", testNS, "a"), dep("ConfigMap", "other", "cm"), dep("Secret", testNS, "s")}},
		{name: "selected: the objects the selector matches", wantTmpl: true, selected: []string{"b", "a"},
			refs:      []interpreter.DependentObjectReference{selecting("ConfigMap", &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}})},
			want:      []dependency{dep("ConfigMap", testNS, "a"), dep("ConfigMap", testNS, "b")},
			wantLists: []string{"ConfigMap ns app=x"}},
		{name: "neither name nor valid selector: skipped", wantTmpl: true,
			refs: []interpreter.DependentObjectReference{selecting("ConfigMap", nil),
				selecting("ConfigMap", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Bogus"}}})}},
		{name: "the list fails: an error with the template", wantTmpl: true, listErr: errors.New("forbidden"), wantErr: true,
			refs:      []interpreter.DependentObjectReference{selecting("ConfigMap", &metav1.LabelSelector{})},
			wantLists: []string{"ConfigMap ns "}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tmpl := deployment("app", nil)
			var lists []string
			r := discoverReconciler{
				enabled: func(gvk schema.GroupVersionKind) bool {
					if gvk != deploymentGVK {
						t.Errorf("asked about %v", gvk)
					}
					return !tc.disabled
				},
				getTemplate: func(_ context.Context, gvk schema.GroupVersionKind, ns, name string) (*unstructured.Unstructured, error) {
					if tc.disabled {
						t.Error("template read for a kind without GetDependencies")
					}
					if gvk != deploymentGVK || ns != testNS || name != "app" {
						t.Errorf("read template %v %s/%s", gvk, ns, name)
					}
					if tc.templateErr != nil {
						return nil, tc.templateErr
					}
					return tmpl, nil
				},
				interpret: func(obj *unstructured.Unstructured) ([]interpreter.DependentObjectReference, error) {
					return tc.refs, tc.interpErr
				},
				listNames: func(_ context.Context, gvk schema.GroupVersionKind, ns string, sel labels.Selector) ([]string, error) {
					lists = append(lists, gvk.Kind+" "+ns+" "+sel.String())
					return tc.selected, tc.listErr
				},
			}
			got, deps, err := r.reconcile(context.Background(), requirerBinding("app", policyv1alpha1.ConflictAbort, false, false))
			if (err != nil) != tc.wantErr {
				t.Errorf("error %v, want error %v", err, tc.wantErr)
			}
			if (got != nil) != tc.wantTmpl || (got != nil && got != tmpl) {
				t.Errorf("template returned %v, want %v", got != nil, tc.wantTmpl)
			}
			if diff := cmp.Diff(tc.want, deps); diff != "" {
				t.Errorf("dependencies (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantLists, lists); diff != "" {
				t.Errorf("lists (-want +got):\n%s", diff)
			}
		})
	}
}
