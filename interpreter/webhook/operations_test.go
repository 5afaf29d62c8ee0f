package webhook

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	configv1alpha1 "github.com/flotilla-io/flotilla/apis/config/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/interpreter"
)

const observedYAML = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  replicas: 7
status:
  readyReplicas: 7
`

// jsonPatch is the response's patch field for a JSON patch.
func jsonPatch(r *configv1alpha1.ResourceInterpreterResponse, patch string) {
	r.Patch = []byte(patch)
	r.PatchType = ptr.To(configv1alpha1.PatchTypeJSONPatch)
}

// TestOperations checks each operation's happy path: what is sent and what
// the answer turns into.
func TestOperations(t *testing.T) {
	t.Parallel()
	items := []workv1alpha2.AggregatedStatusItem{
		{ClusterName: "member1", Applied: true, Health: workv1alpha2.ResourceHealthy,
			Status: &runtime.RawExtension{Raw: []byte(`{"readyReplicas":2}`)}},
		{ClusterName: "member2", Applied: true, Status: &runtime.RawExtension{Raw: []byte(`{"readyReplicas":3}`)}},
	}

	tests := []struct {
		name   string
		op     interpreter.Operation
		answer func(*configv1alpha1.ResourceInterpreterResponse)
		// call runs the operation on a Deployment; it returns the result in a
		// form whose JSON is compared with want.
		call func(t *testing.T, i *Interpreter, d *unstructured.Unstructured) (any, error)
		want string
		// checkRequest checks the operation-specific request fields.
		checkRequest func(t *testing.T, req *configv1alpha1.ResourceInterpreterRequest)
	}{{
		name: "InterpretReplica",
		op:   interpreter.InterpretReplica,
		answer: func(r *configv1alpha1.ResourceInterpreterResponse) {
			r.Replicas = ptr.To[int32](3)
			r.ReplicaRequirements = &workv1alpha2.ReplicaRequirements{
				ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
				Namespace:       "shop",
			}
		},
		call: func(t *testing.T, i *Interpreter, d *unstructured.Unstructured) (any, error) {
			n, req, err := i.GetReplicas(d)
			return []any{n, req}, err
		},
		want: `[3,{"resourceRequest":{"cpu":"100m"},"namespace":"shop"}]`,
	}, {
		name:   "InterpretReplica without replicas",
		op:     interpreter.InterpretReplica,
		answer: nil,
		call: func(t *testing.T, i *Interpreter, d *unstructured.Unstructured) (any, error) {
			n, req, err := i.GetReplicas(d)
			return []any{n, req}, err
		},
		want: `[0,null]`,
	}, {
		name: "InterpretComponent",
		op:   interpreter.InterpretComponent,
		answer: func(r *configv1alpha1.ResourceInterpreterResponse) {
			r.Components = []workv1alpha2.Component{
				{Name: "leader", Replicas: 1},
				{Name: "worker", Replicas: 4, ReplicaRequirements: &workv1alpha2.ComponentReplicaRequirements{
					ResourceRequest: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")},
				}},
			}
		},
		call: func(t *testing.T, i *Interpreter, d *unstructured.Unstructured) (any, error) {
			return i.GetComponents(d)
		},
		want: `[{"name":"leader","replicas":1},{"name":"worker","replicas":4,"replicaRequirements":{"resourceRequest":{"memory":"1Gi"}}}]`,
	}, {
		name: "ReviseReplica",
		op:   interpreter.ReviseReplica,
		answer: func(r *configv1alpha1.ResourceInterpreterResponse) {
			jsonPatch(r, `[{"op":"replace","path":"/spec/replicas","value":5}]`)
		},
		call: func(t *testing.T, i *Interpreter, d *unstructured.Unstructured) (any, error) {
			return i.ReviseReplica(d, 5)
		},
		want: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop"},` +
			`"spec":{"replicas":5,"template":{"spec":{"containers":[{"image":"nginx","name":"web"}]}}}}`,
		checkRequest: func(t *testing.T, req *configv1alpha1.ResourceInterpreterRequest) {
			if req.DesiredReplicas == nil || *req.DesiredReplicas != 5 {
				t.Errorf("request replicas = %v, want 5", req.DesiredReplicas)
			}
		},
	}, {
		name:   "ReviseReplica without patch",
		op:     interpreter.ReviseReplica,
		answer: nil,
		call: func(t *testing.T, i *Interpreter, d *unstructured.Unstructured) (any, error) {
			return i.ReviseReplica(d, 5)
		},
		want: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop"},` +
			`"spec":{"replicas":2,"template":{"spec":{"containers":[{"image":"nginx","name":"web"}]}}}}`,
	}, {
		name: "Retain",
		op:   interpreter.Retain,
		answer: func(r *configv1alpha1.ResourceInterpreterResponse) {
			jsonPatch(r, `[{"op":"replace","path":"/spec/replicas","value":7}]`)
		},
		call: func(t *testing.T, i *Interpreter, d *unstructured.Unstructured) (any, error) {
			observed := obj(t, observedYAML)
			before := observed.DeepCopy()
			out, err := i.Retain(d, observed)
			if diff := cmp.Diff(before, observed); diff != "" {
				t.Errorf("Retain changed observed (-before +after):\n%s", diff)
			}
			return out, err
		},
		want: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop"},` +
			`"spec":{"replicas":7,"template":{"spec":{"containers":[{"image":"nginx","name":"web"}]}}}}`,
		checkRequest: func(t *testing.T, req *configv1alpha1.ResourceInterpreterRequest) {
			want := toJSON(t, obj(t, observedYAML))
			if req.ObservedObject == nil || string(req.ObservedObject.Raw) != want {
				t.Errorf("observedObject = %v, want %s", req.ObservedObject, want)
			}
		},
	}, {
		name: "AggregateStatus",
		op:   interpreter.AggregateStatus,
		answer: func(r *configv1alpha1.ResourceInterpreterResponse) {
			jsonPatch(r, `[{"op":"add","path":"/status","value":{"readyReplicas":5}}]`)
		},
		call: func(t *testing.T, i *Interpreter, d *unstructured.Unstructured) (any, error) {
			return i.AggregateStatus(d, items)
		},
		want: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop"},` +
			`"spec":{"replicas":2,"template":{"spec":{"containers":[{"image":"nginx","name":"web"}]}}},"status":{"readyReplicas":5}}`,
		checkRequest: func(t *testing.T, req *configv1alpha1.ResourceInterpreterRequest) {
			if got, want := toJSON(t, req.AggregatedStatus), toJSON(t, items); got != want {
				t.Errorf("aggregatedStatus = %s, want %s", got, want)
			}
		},
	}, {
		name: "InterpretStatus",
		op:   interpreter.InterpretStatus,
		answer: func(r *configv1alpha1.ResourceInterpreterResponse) {
			r.RawStatus = &runtime.RawExtension{Raw: []byte(`{"readyReplicas":2}`)}
		},
		call: func(t *testing.T, i *Interpreter, d *unstructured.Unstructured) (any, error) {
			return i.ReflectStatus(d)
		},
		want: `{"readyReplicas":2}`,
	}, {
		name:   "InterpretStatus without status",
		op:     interpreter.InterpretStatus,
		answer: nil,
		call: func(t *testing.T, i *Interpreter, d *unstructured.Unstructured) (any, error) {
			return i.ReflectStatus(d)
		},
		want: `null`,
	}, {
		name:   "InterpretHealth healthy",
		op:     interpreter.InterpretHealth,
		answer: func(r *configv1alpha1.ResourceInterpreterResponse) { r.Healthy = ptr.To(true) },
		call: func(t *testing.T, i *Interpreter, d *unstructured.Unstructured) (any, error) {
			return i.InterpretHealth(d)
		},
		want: `"Healthy"`,
	}, {
		name:   "InterpretHealth unhealthy",
		op:     interpreter.InterpretHealth,
		answer: func(r *configv1alpha1.ResourceInterpreterResponse) { r.Healthy = ptr.To(false) },
		call: func(t *testing.T, i *Interpreter, d *unstructured.Unstructured) (any, error) {
			return i.InterpretHealth(d)
		},
		want: `"Unhealthy"`,
	}, {
		name: "InterpretDependency",
		op:   interpreter.InterpretDependency,
		answer: func(r *configv1alpha1.ResourceInterpreterResponse) {
			r.Dependencies = []configv1alpha1.DependentObjectReference{
				{APIVersion: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "web-config"},
				{APIVersion: "v1", Kind: "Secret", Namespace: "shop",
					LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
			}
		},
		call: func(t *testing.T, i *Interpreter, d *unstructured.Unstructured) (any, error) {
			return i.GetDependencies(d)
		},
		want: `[{"apiVersion":"v1","kind":"ConfigMap","namespace":"shop","name":"web-config"},` +
			`{"apiVersion":"v1","kind":"Secret","namespace":"shop","labelSelector":{"matchLabels":{"app":"web"}}}]`,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fw := newFakeWebhook(t, succeed(tc.answer))
			i := newTestInterpreter(t, Options{}, webhookConfig("config", urlWebhook("hook.example.com", fw.srv, allOnDeployments)))
			d := deployment(t)
			before := d.DeepCopy()

			got, err := tc.call(t, i, d)
			if err != nil {
				t.Fatalf("%s: %v", tc.op, err)
			}
			if diff := cmp.Diff(tc.want, toJSON(t, got)); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, d); diff != "" {
				t.Errorf("the input object changed (-before +after):\n%s", diff)
			}

			calls := fw.calls()
			if len(calls) != 1 {
				t.Fatalf("webhook got %d calls, want 1", len(calls))
			}
			if calls[0].APIVersion != "config.karmada.io/v1alpha1" || calls[0].Kind != "ResourceInterpreterContext" {
				t.Errorf("body is a %s %s, want a config.karmada.io/v1alpha1 ResourceInterpreterContext", calls[0].APIVersion, calls[0].Kind)
			}
			req := calls[0].Request
			if req.UID == "" {
				t.Error("request has no uid")
			}
			wantKind := metav1.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
			if req.Kind != wantKind || req.Name != "web" || req.Namespace != "shop" || req.Operation != configv1alpha1.InterpreterOperation(tc.op) {
				t.Errorf("request is %v %s/%s %s, want %v shop/web %s", req.Kind, req.Namespace, req.Name, req.Operation, wantKind, tc.op)
			}
			if got, want := string(req.Object.Raw), toJSON(t, before); got != want {
				t.Errorf("request object = %s, want %s", got, want)
			}
			if tc.checkRequest != nil {
				tc.checkRequest(t, req)
			}
		})
	}
}

// TestReviseReplicaPatch checks that the patch of ReviseReplica applies to a
// copy of the object, whatever it touches, and that a new object is returned.
func TestReviseReplicaPatch(t *testing.T) {
	t.Parallel()
	patch := `[
		{"op":"replace","path":"/spec/replicas","value":4},
		{"op":"add","path":"/metadata/annotations","value":{"revised":"yes"}},
		{"op":"remove","path":"/spec/template"}
	]`
	fw := newFakeWebhook(t, succeed(func(r *configv1alpha1.ResourceInterpreterResponse) { jsonPatch(r, patch) }))
	i := newTestInterpreter(t, Options{}, webhookConfig("config", urlWebhook("hook.example.com", fw.srv, allOnDeployments)))
	d := deployment(t)
	before := d.DeepCopy()

	got, err := i.ReviseReplica(d, 4)
	if err != nil {
		t.Fatalf("ReviseReplica: %v", err)
	}
	want := obj(t, `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
  annotations:
    revised: "yes"
spec:
  replicas: 4
`)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ReviseReplica (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before, d); diff != "" {
		t.Errorf("the input object changed (-before +after):\n%s", diff)
	}
	// The result shares nothing with the input.
	if err := unstructured.SetNestedField(got.Object, int64(9), "spec", "replicas"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, d); diff != "" {
		t.Errorf("changing the result changed the input (-before +after):\n%s", diff)
	}
	if n := *fw.lastRequest(t).DesiredReplicas; n != 4 {
		t.Errorf("request replicas = %d, want 4", n)
	}
}

// TestNoWebhook checks what operations give for a kind no webhook handles.
func TestNoWebhook(t *testing.T) {
	t.Parallel()
	fw := newFakeWebhook(t, succeed(nil))
	i := newTestInterpreter(t, Options{}, webhookConfig("config",
		urlWebhook("jobs.example.com", fw.srv, rule(ops("*"), []string{"batch"}, []string{"v1"}, []string{"Job"}))))
	d := deployment(t)

	if _, _, err := i.GetReplicas(d); err == nil {
		t.Error("GetReplicas: no error")
	}
	if _, err := i.ReviseReplica(d, 1); err == nil {
		t.Error("ReviseReplica: no error")
	}
	if _, err := i.GetDependencies(d); err == nil {
		t.Error("GetDependencies: no error")
	}
	if s, err := i.ReflectStatus(d); s != nil || err != nil {
		t.Errorf("ReflectStatus = %v, %v; want nil, nil", s, err)
	}
	if h, err := i.InterpretHealth(d); h != workv1alpha2.ResourceUnknown || err != nil {
		t.Errorf("InterpretHealth = %v, %v; want Unknown, nil", h, err)
	}
	if n := len(fw.calls()); n != 0 {
		t.Errorf("webhook got %d calls, want 0", n)
	}
}
