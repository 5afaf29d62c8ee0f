package config

import (
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/flotilla-io/flotilla/apis/config/v1alpha1"
	"github.com/flotilla-io/flotilla/registry/internal/resource"
	"github.com/flotilla-io/flotilla/registry/internal/resource/resourcetest"
)

// retainingRIC customizes the retention of a Workload.
const retainingRIC = `
metadata: {name: workload}
spec:
  target: {apiVersion: workload.example.io/v1alpha1, kind: Workload}
  customizations:
    retention:
      luaScript: |
        function Retain(desired, observed)
          return desired
        end
`

func noOthers() ([]*configv1alpha1.ResourceInterpreterCustomization, error) { return nil, nil }

func TestStrategies(t *testing.T) {
	t.Parallel()
	ric := func(obj runtime.Object) *configv1alpha1.ResourceInterpreterCustomization {
		return obj.(*configv1alpha1.ResourceInterpreterCustomization)
	}
	riwc := func(obj runtime.Object) *configv1alpha1.ResourceInterpreterWebhookConfiguration {
		return obj.(*configv1alpha1.ResourceInterpreterWebhookConfiguration)
	}
	resourcetest.Run(t, definitions(&customizations{list: noOthers}), []resourcetest.Kind{
		{
			Resource:    "resourceinterpretercustomizations",
			Manifest:    retainingRIC,
			ChangeSpec:  func(obj runtime.Object) { ric(obj).Spec.Target.Kind = "Other" },
			Invalid:     func(obj runtime.Object) { ric(obj).Spec.Target.Kind = "" },
			InvalidPath: "spec.target.kind",
		},
		{
			Resource: "resourceinterpreterwebhookconfigurations",
			Manifest: `
metadata: {name: examples}
webhooks:
  - name: workloads.example.com
    rules:
      - {operations: [InterpretReplica], apiGroups: [workload.example.io], apiVersions: [v1alpha1], kinds: [Workload]}
    clientConfig:
      url: https://interpreter.karmada-system.svc:443/interpreter-workload
    interpreterContextVersions: [v1alpha1]
`,
			ChangeSpec:  func(obj runtime.Object) { riwc(obj).Webhooks[0].TimeoutSeconds = ptr.To[int32](5) },
			Invalid:     func(obj runtime.Object) { riwc(obj).Webhooks[0].Name = "" },
			InvalidPath: "webhooks[0].name",
		},
	})
}

// A customization is refused when another one defines the same operation
// for the same target, or when the others cannot be listed.
func TestCustomizationsCheckedAgainstOthers(t *testing.T) {
	t.Parallel()
	decode := func(name string) *configv1alpha1.ResourceInterpreterCustomization {
		r := &configv1alpha1.ResourceInterpreterCustomization{}
		if err := yaml.UnmarshalStrict([]byte(retainingRIC), r); err != nil {
			t.Fatal(err)
		}
		r.Name = name
		return r
	}
	for _, tc := range []struct {
		name     string
		list     func() ([]*configv1alpha1.ResourceInterpreterCustomization, error)
		wantPath string // "" for accepted
		wantType field.ErrorType
	}{
		{name: "no other customization", list: noOthers},
		{name: "another one retains the same target", wantPath: "spec.customizations.retention", wantType: field.ErrorTypeInvalid,
			list: func() ([]*configv1alpha1.ResourceInterpreterCustomization, error) {
				return []*configv1alpha1.ResourceInterpreterCustomization{decode("other")}, nil
			}},
		{name: "others cannot be listed", wantPath: "spec.customizations", wantType: field.ErrorTypeInternal,
			list: func() ([]*configv1alpha1.ResourceInterpreterCustomization, error) {
				return nil, errors.New("etcd down")
			}},
		{name: "storage not ready", wantPath: "spec.customizations", wantType: field.ErrorTypeInternal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := resource.NewStrategy(runtime.NewScheme(), definitions(&customizations{list: tc.list})[0])
			ctx := genericapirequest.NewContext()
			obj := decode("mine")
			s.PrepareForCreate(ctx, obj)
			old := obj.DeepCopy()
			old.ResourceVersion = "1"
			upd := old.DeepCopy()
			s.PrepareForUpdate(ctx, upd, old)
			for what, errs := range map[string]field.ErrorList{"create": s.Validate(ctx, obj), "update": s.ValidateUpdate(ctx, upd, old)} {
				if tc.wantPath == "" {
					if len(errs) != 0 {
						t.Errorf("%s: %v, want accepted", what, errs)
					}
					continue
				}
				if len(errs) != 1 || errs[0].Field != tc.wantPath || errs[0].Type != tc.wantType {
					t.Errorf("%s: %v, want one %s error at %s", what, errs, tc.wantType, tc.wantPath)
				}
			}
		})
	}
}
