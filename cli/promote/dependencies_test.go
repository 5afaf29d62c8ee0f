package promote

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	configv1alpha1 "github.com/flotilla-io/flotilla/apis/config/v1alpha1"
	"github.com/flotilla-io/flotilla/interpreter"
)

func TestDependencies(t *testing.T) {
	t.Parallel()
	custom := &configv1alpha1.ResourceInterpreterCustomization{}
	custom.Name = "widgets"
	custom.Spec.Target = configv1alpha1.CustomizationTarget{APIVersion: "example.com/v1", Kind: "Widget"}
	custom.Spec.Customizations.DependencyInterpretation = &configv1alpha1.DependencyInterpretation{LuaScript: `
function GetDependencies(desiredObj)
  return {{apiVersion = "v1", kind = "ConfigMap", namespace = desiredObj.metadata.namespace, name = desiredObj.spec.config}}
end`}
	broken := &configv1alpha1.ResourceInterpreterCustomization{}
	broken.Name = "broken"
	broken.Spec.Target = configv1alpha1.CustomizationTarget{APIVersion: "example.com/v1", Kind: "Gadget"}
	broken.Spec.Customizations.DependencyInterpretation = &configv1alpha1.DependencyInterpretation{LuaScript: `function GetDependencies(`}
	var warnings []string
	d, err := NewDependencies([]*configv1alpha1.ResourceInterpreterCustomization{custom, broken}, func(w string) { warnings = append(warnings, w) })
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 1 {
		t.Errorf("warnings %v, want one about the broken customization", warnings)
	}
	ref := func(kind, name string) interpreter.DependentObjectReference {
		return interpreter.DependentObjectReference{APIVersion: "v1", Kind: kind, Namespace: "shop", Name: name}
	}
	for _, tc := range []struct {
		name string
		obj  string
		want []interpreter.DependentObjectReference
	}{
		{name: "deployment: what its pod template names", obj: memberDeployment,
			want: []interpreter.DependentObjectReference{ref("ConfigMap", "web-config"), ref("Secret", "web-secret"), ref("ServiceAccount", "web"), ref("PersistentVolumeClaim", "web-data")}},
		{name: "a kind without dependencies", obj: `{apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRole, metadata: {name: r}}`},
		{name: "a custom kind, through the control plane's customization", obj: `{apiVersion: example.com/v1, kind: Widget, metadata: {name: w, namespace: shop}, spec: {config: settings}}`,
			want: []interpreter.DependentObjectReference{ref("ConfigMap", "settings")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := d.Of(object(t, tc.obj))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) == 0 && len(tc.want) == 0 {
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("dependencies (-want +got):\n%s", diff)
			}
		})
	}
}
