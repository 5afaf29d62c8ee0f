package informed

import (
	"context"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	configv1alpha1 "github.com/flotilla-io/flotilla/apis/config/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned/fake"
	"github.com/flotilla-io/flotilla/apis/generated/informers/externalversions"
	"github.com/flotilla-io/flotilla/interpreter"
)

// dependencyRIC is a customization of Widgets whose dependencyInterpretation
// lists the ConfigMap called configMap.
func dependencyRIC(name, configMap string) *configv1alpha1.ResourceInterpreterCustomization {
	r := &configv1alpha1.ResourceInterpreterCustomization{ObjectMeta: metav1.ObjectMeta{Name: name, Generation: 1}}
	r.Spec.Target = configv1alpha1.CustomizationTarget{APIVersion: "example.io/v1", Kind: "Widget"}
	r.Spec.Customizations.DependencyInterpretation = &configv1alpha1.DependencyInterpretation{LuaScript: `
function GetDependencies(desiredObj)
  return {{apiVersion = "v1", kind = "ConfigMap", namespace = desiredObj.metadata.namespace, name = "` + configMap + `"}}
end`}
	return r
}

// TestDependenciesOfSeveralCustomizations: the
// interpreter every controller uses lists the dependencies of every
// customization defining dependencyInterpretation for a kind, and follows
// their removal.
func TestDependenciesOfSeveralCustomizations(t *testing.T) {
	t.Parallel()
	withRetain := dependencyRIC("b-second", "two")
	withRetain.Spec.Customizations.Retention = &configv1alpha1.LocalValueRetention{LuaScript: "function Retain(desiredObj, observedObj) return desiredObj end"}
	cs := fake.NewClientset([]runtime.Object{dependencyRIC("a-first", "one"), withRetain, dependencyRIC("c-third", "one")}...)
	factory := externalversions.NewSharedInformerFactory(cs, 0)
	_, interp, synced, err := New(factory, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		t.Fatal("customizations not loaded")
	}
	widget := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.io/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w", "namespace": "ns"}}}
	names := func() []string {
		t.Helper()
		deps, err := interp.GetDependencies(widget)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, d := range deps {
			out = append(out, d.Kind+"/"+d.Namespace+"/"+d.Name)
		}
		return out
	}
	if !interp.HookEnabled(widget.GroupVersionKind(), interpreter.InterpretDependency) {
		t.Fatal("no dependency hook for Widgets")
	}
	if got, want := names(), []string{"ConfigMap/ns/one", "ConfigMap/ns/two"}; !slices.Equal(got, want) {
		t.Errorf("dependencies %v, want %v", got, want)
	}
	if err := cs.ConfigV1alpha1().ResourceInterpreterCustomizations().Delete(ctx, "b-second", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for ctx.Err() == nil && !slices.Equal(names(), []string{"ConfigMap/ns/one"}) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := names(); !slices.Equal(got, []string{"ConfigMap/ns/one"}) {
		t.Errorf("after deleting b-second: dependencies %v", got)
	}
}
