package deletionprotection

import (
	"context"
	"io"
	"slices"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	genericoptions "k8s.io/apiserver/pkg/server/options"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
)

func policy(labels map[string]string) *policyv1alpha1.PropagationPolicy {
	return &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Name: "pp", Namespace: "default", Labels: labels}}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	gvk := policyv1alpha1.SchemeGroupVersion.WithKind("PropagationPolicy")
	gvr := policyv1alpha1.SchemeGroupVersion.WithResource("propagationpolicies")
	protected := map[string]string{Label: Always}
	tests := []struct {
		name   string
		op     admission.Operation
		reqFor string // the request's name; "" for an item of a collection delete
		old    runtime.Object
		denied bool
	}{
		{name: "delete protected", op: admission.Delete, reqFor: "pp", old: policy(protected), denied: true},
		{name: "delete collection item protected", op: admission.Delete, old: policy(protected), denied: true},
		{name: "delete with other value", op: admission.Delete, reqFor: "pp", old: policy(map[string]string{Label: "Never"})},
		{name: "delete with lower-case value", op: admission.Delete, reqFor: "pp", old: policy(map[string]string{Label: "always"})},
		{name: "delete without the label", op: admission.Delete, reqFor: "pp", old: policy(map[string]string{"app": "x"})},
		{name: "delete without labels", op: admission.Delete, reqFor: "pp", old: policy(nil)},
		{name: "delete without old object", op: admission.Delete, reqFor: "pp"},
		{name: "delete of an object without metadata", op: admission.Delete, reqFor: "pp", old: &metav1.Status{}},
		{name: "update protected", op: admission.Update, reqFor: "pp", old: policy(protected)},
	}
	p := NewPlugin()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := admission.NewAttributesRecord(nil, tc.old, gvk, "default", tc.reqFor, gvr, "", tc.op, nil, false, nil)
			err := p.Validate(context.Background(), a, nil)
			if !tc.denied {
				if err != nil {
					t.Fatalf("denied: %v", err)
				}
				return
			}
			if !apierrors.IsForbidden(err) {
				t.Fatalf("got %v, want Forbidden", err)
			}
			want := `propagationpolicies.policy.karmada.io "pp" is forbidden: ` + Message
			if err.Error() != want {
				t.Errorf("message\n got %q\nwant %q", err.Error(), want)
			}
		})
	}
}

func TestHandles(t *testing.T) {
	t.Parallel()
	p := NewPlugin()
	for _, op := range []admission.Operation{admission.Create, admission.Update, admission.Connect} {
		if p.Handles(op) {
			t.Errorf("handles %s", op)
		}
	}
	if !p.Handles(admission.Delete) {
		t.Error("does not handle DELETE")
	}
}

func TestRegister(t *testing.T) {
	t.Parallel()
	o := genericoptions.NewAdmissionOptions()
	Register(o)
	Register(o) // twice: still once in the order
	if !slices.Contains(o.Plugins.Registered(), PluginName) {
		t.Fatalf("%s not registered: %v", PluginName, o.Plugins.Registered())
	}
	order := o.RecommendedPluginOrder
	i, j := slices.Index(order, PluginName), slices.Index(order, validating.PluginName)
	if i < 0 || j != i+1 || slices.Index(order[i+1:], PluginName) >= 0 {
		t.Errorf("order %v: want %s once, just before %s", order, PluginName, validating.PluginName)
	}
	if o.DefaultOffPlugins.Has(PluginName) {
		t.Errorf("%s is off by default", PluginName)
	}
	plugin, err := o.Plugins.NewFromPlugins([]string{PluginName}, emptyConfig{}, admission.PluginInitializers{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := plugin.(admission.ValidationInterface); !ok {
		t.Errorf("the chain %T does not validate", plugin)
	}
}

type emptyConfig struct{}

func (emptyConfig) ConfigFor(string) (io.Reader, error) { return nil, nil }
