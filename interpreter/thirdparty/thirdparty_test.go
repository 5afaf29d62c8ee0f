package thirdparty

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	configvalidation "github.com/flotilla-io/flotilla/apis/config/validation"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/interpreter"
	"github.com/flotilla-io/flotilla/interpreter/lua"
)

// Every shipped customization is one a user could create: it passes
// admission, and no two define an operation for the same kind.
func TestShippedCustomizationsAreValid(t *testing.T) {
	rics, err := Customizations()
	if err != nil {
		t.Fatal(err)
	}
	if len(rics) < 14 { // the files list 14 kind versions
		t.Fatalf("only %d customizations shipped", len(rics))
	}
	for i, ric := range rics {
		if errs := configvalidation.ValidateResourceInterpreterCustomization(ric); len(errs) > 0 {
			t.Errorf("%s: %v", ric.Name, errs.ToAggregate())
		}
		if errs := configvalidation.ValidateNoDuplicateOperations(ric, rics[:i]); len(errs) > 0 {
			t.Errorf("%s: %v", ric.Name, errs.ToAggregate())
		}
	}
	if _, err := New(); err != nil {
		t.Fatal(err)
	}
}

func object(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(y), &m); err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}

func shipped(t *testing.T) *lua.Customizations {
	t.Helper()
	c, err := New()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func items(statuses ...string) []workv1alpha2.AggregatedStatusItem {
	var out []workv1alpha2.AggregatedStatusItem
	for i, s := range statuses {
		out = append(out, workv1alpha2.AggregatedStatusItem{ClusterName: []string{"member1", "member2"}[i], Applied: true, Status: &runtime.RawExtension{Raw: []byte(s)}})
	}
	return out
}

func toJSON(v any) string {
	raw, _ := json.Marshal(v)
	return string(raw)
}

const cloneSet = `
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {name: web, namespace: ns, generation: 3}
spec:
  replicas: 5
  template:
    spec:
      serviceAccountName: web
      containers:
      - name: c
        image: nginx
        resources: {requests: {cpu: 200m}}
        envFrom: [{configMapRef: {name: web-env}}]
status: {observedGeneration: 3, replicas: 5, updatedReplicas: 5, availableReplicas: 5, readyReplicas: 5, updateRevision: web-2, labelSelector: app=web}
`

func TestWorkloads(t *testing.T) {
	c := shipped(t)
	for _, y := range []string{cloneSet, `
apiVersion: apps.kruise.io/v1beta1
kind: StatefulSet
metadata: {name: web, namespace: ns, generation: 3}
spec:
  replicas: 5
  volumeClaimTemplates: [{metadata: {name: data}}]
  template:
    spec:
      serviceAccountName: web
      volumes: [{name: data, persistentVolumeClaim: {claimName: data}}, {name: shared, persistentVolumeClaim: {claimName: shared}}]
      containers:
      - name: c
        image: nginx
        resources: {requests: {cpu: 200m}}
        envFrom: [{configMapRef: {name: web-env}}]
status: {observedGeneration: 3, replicas: 5, updatedReplicas: 5, availableReplicas: 5, readyReplicas: 5, updateRevision: web-2, labelSelector: app=web}
`} {
		obj := object(t, y)
		t.Run(obj.GetAPIVersion()+"/"+obj.GetKind(), func(t *testing.T) {
			n, req, err := c.GetReplicas(obj)
			if err != nil || n != 5 {
				t.Fatalf("GetReplicas = %d, %v", n, err)
			}
			wantReq := &workv1alpha2.ReplicaRequirements{ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m")}}
			if diff := cmp.Diff(wantReq, req); diff != "" {
				t.Errorf("requirements (-want +got):\n%s", diff)
			}
			revised, err := c.ReviseReplica(obj, 2)
			if err != nil {
				t.Fatal(err)
			}
			if r, _, _ := unstructured.NestedInt64(revised.Object, "spec", "replicas"); r != 2 {
				t.Errorf("revised replicas %d", r)
			}
			health, err := c.InterpretHealth(obj)
			if err != nil || health != workv1alpha2.ResourceHealthy {
				t.Errorf("health %s, %v", health, err)
			}
			behind := obj.DeepCopy()
			_ = unstructured.SetNestedField(behind.Object, int64(2), "status", "observedGeneration")
			if health, _ := c.InterpretHealth(behind); health != workv1alpha2.ResourceUnhealthy {
				t.Errorf("health of a status behind its generation: %s", health)
			}
			rolling := obj.DeepCopy()
			_ = unstructured.SetNestedField(rolling.Object, int64(3), "status", "updatedReplicas")
			if health, _ := c.InterpretHealth(rolling); health != workv1alpha2.ResourceUnhealthy {
				t.Errorf("health while updating: %s", health)
			}
			st, err := c.ReflectStatus(obj)
			if err != nil {
				t.Fatal(err)
			}
			var reflected map[string]any
			_ = json.Unmarshal(st.Raw, &reflected)
			if reflected["updatedReplicas"] != float64(5) || reflected["updateRevision"] != "web-2" {
				t.Errorf("reflected %s", st.Raw)
			}
			agg, err := c.AggregateStatus(obj, items(`{"replicas":2,"readyReplicas":2,"updatedReplicas":2,"availableReplicas":1,"updateRevision":"web-3"}`, `{"replicas":3,"readyReplicas":1,"updatedReplicas":3,"availableReplicas":3}`))
			if err != nil {
				t.Fatal(err)
			}
			status, _, _ := unstructured.NestedMap(agg.Object, "status")
			for field, want := range map[string]any{"replicas": int64(5), "readyReplicas": int64(3), "updatedReplicas": int64(5), "availableReplicas": int64(4), "updateRevision": "web-3", "observedGeneration": int64(3)} {
				if status[field] != want {
					t.Errorf("aggregated %s = %v, want %v (status %v)", field, status[field], want, status)
				}
			}
			deps, err := c.GetDependencies(obj)
			if err != nil {
				t.Fatal(err)
			}
			want := []interpreter.DependentObjectReference{
				{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "web-env"},
				{APIVersion: "v1", Kind: "ServiceAccount", Namespace: "ns", Name: "web"},
			}
			if obj.GetAPIVersion() == "apps.kruise.io/v1beta1" {
				want = append(want, interpreter.DependentObjectReference{APIVersion: "v1", Kind: "PersistentVolumeClaim", Namespace: "ns", Name: "shared"})
			}
			if diff := cmp.Diff(want, deps); diff != "" {
				t.Errorf("dependencies (-want +got):\n%s", diff)
			}
		})
	}
}

func TestArgoWorkflow(t *testing.T) {
	c := shipped(t)
	obj := object(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: wf, namespace: ns}
spec:
  parallelism: 4
  nodeSelector: {disk: ssd}
  serviceAccountName: runner
  executor: {serviceAccountName: executor}
  imagePullSecrets: [{name: pull}]
  volumes: [{name: v, configMap: {name: wf-config}}, {name: s, secret: {secretName: wf-secret}}]
  suspend: false
status: {phase: Running, progress: 1/4}
`)
	n, req, err := c.GetReplicas(obj)
	if err != nil || n != 4 || req == nil || req.NodeClaim == nil || req.NodeClaim.NodeSelector["disk"] != "ssd" {
		t.Errorf("GetReplicas = %d %s %v", n, toJSON(req), err)
	}
	revised, _ := c.ReviseReplica(obj, 1)
	if p, _, _ := unstructured.NestedInt64(revised.Object, "spec", "parallelism"); p != 1 {
		t.Errorf("revised parallelism %d", p)
	}
	observed := obj.DeepCopy()
	_ = unstructured.SetNestedField(observed.Object, true, "spec", "suspend")
	_ = unstructured.SetNestedField(observed.Object, "Succeeded", "status", "phase")
	desired := obj.DeepCopy()
	unstructured.RemoveNestedField(desired.Object, "status")
	kept, err := c.Retain(desired, observed)
	if err != nil {
		t.Fatal(err)
	}
	if s, _, _ := unstructured.NestedBool(kept.Object, "spec", "suspend"); !s {
		t.Error("spec.suspend of the member not kept")
	}
	if p, _, _ := unstructured.NestedString(kept.Object, "status", "phase"); p != "Succeeded" {
		t.Errorf("status of the member not kept: phase %q", p)
	}
	for phase, want := range map[string]workv1alpha2.ResourceHealth{"Running": workv1alpha2.ResourceHealthy, "Succeeded": workv1alpha2.ResourceHealthy, "Failed": workv1alpha2.ResourceUnhealthy, "Error": workv1alpha2.ResourceUnhealthy, "": workv1alpha2.ResourceUnhealthy} {
		o := obj.DeepCopy()
		_ = unstructured.SetNestedField(o.Object, phase, "status", "phase")
		if got, err := c.InterpretHealth(o); got != want || err != nil {
			t.Errorf("phase %q: health %s, %v", phase, got, err)
		}
	}
	deps, err := c.GetDependencies(obj)
	if err != nil {
		t.Fatal(err)
	}
	v1 := func(kind, name string) interpreter.DependentObjectReference {
		return interpreter.DependentObjectReference{APIVersion: "v1", Kind: kind, Namespace: "ns", Name: name}
	}
	want := []interpreter.DependentObjectReference{v1("ConfigMap", "wf-config"), v1("Secret", "pull"), v1("Secret", "wf-secret"), v1("ServiceAccount", "runner"), v1("ServiceAccount", "executor")}
	if diff := cmp.Diff(want, deps); diff != "" {
		t.Errorf("dependencies (-want +got):\n%s", diff)
	}
}

func TestFlux(t *testing.T) {
	c := shipped(t)
	release := object(t, `
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: podinfo, namespace: ns, generation: 2}
spec:
  interval: 5m
  serviceAccountName: flux
  chart: {spec: {chart: podinfo, verify: {provider: cosign, secretRef: {name: cosign-pub}}}}
  valuesFrom: [{kind: ConfigMap, name: values}, {kind: Secret, name: secret-values}, {kind: ConfigMap, name: values}]
status:
  conditions: [{type: Ready, status: "True", reason: InstallSucceeded, message: ok}]
`)
	kustomization := object(t, `
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: apps, namespace: ns}
spec:
  decryption: {provider: sops, secretRef: {name: sops-age}}
  postBuild: {substituteFrom: [{kind: ConfigMap, name: cluster-vars}]}
status:
  conditions: [{type: Ready, status: "False", reason: BuildFailed}]
`)
	if h, err := c.InterpretHealth(release); h != workv1alpha2.ResourceHealthy || err != nil {
		t.Errorf("release health %s %v", h, err)
	}
	if h, err := c.InterpretHealth(kustomization); h != workv1alpha2.ResourceUnhealthy || err != nil {
		t.Errorf("kustomization health %s %v", h, err)
	}
	for _, o := range []*unstructured.Unstructured{release, kustomization} {
		observed := o.DeepCopy()
		_ = unstructured.SetNestedField(observed.Object, true, "spec", "suspend")
		kept, err := c.Retain(o, observed)
		if err != nil {
			t.Fatal(err)
		}
		if s, _, _ := unstructured.NestedBool(kept.Object, "spec", "suspend"); !s {
			t.Errorf("%s: spec.suspend of the member not kept", o.GetKind())
		}
	}
	deps, err := c.GetDependencies(release)
	if err != nil {
		t.Fatal(err)
	}
	v1 := func(kind, name string) interpreter.DependentObjectReference {
		return interpreter.DependentObjectReference{APIVersion: "v1", Kind: kind, Namespace: "ns", Name: name}
	}
	if diff := cmp.Diff([]interpreter.DependentObjectReference{v1("ConfigMap", "values"), v1("Secret", "secret-values"), v1("Secret", "cosign-pub"), v1("ServiceAccount", "flux")}, deps); diff != "" {
		t.Errorf("release dependencies (-want +got):\n%s", diff)
	}
	deps, err = c.GetDependencies(kustomization)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]interpreter.DependentObjectReference{v1("Secret", "sops-age"), v1("ConfigMap", "cluster-vars")}, deps); diff != "" {
		t.Errorf("kustomization dependencies (-want +got):\n%s", diff)
	}
	agg, err := c.AggregateStatus(release, items(
		`{"failures":1,"lastAppliedRevision":"6.5.0","conditions":[{"type":"Ready","status":"True","reason":"InstallSucceeded","message":"installed"}]}`,
		`{"failures":2,"conditions":[{"type":"Ready","status":"True","reason":"InstallSucceeded","message":"installed"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	status, _, _ := unstructured.NestedMap(agg.Object, "status")
	conditions, _ := status["conditions"].([]any)
	if status["failures"] != int64(3) || status["lastAppliedRevision"] != "6.5.0" || status["observedGeneration"] != int64(2) || len(conditions) != 1 {
		t.Fatalf("aggregated status %v", status)
	}
	if msg := conditions[0].(map[string]any)["message"]; msg != "member1=installed, member2=installed" {
		t.Errorf("merged condition message %q", msg)
	}
	st, err := c.ReflectStatus(release)
	if err != nil || st == nil || !json.Valid(st.Raw) {
		t.Fatalf("reflected %v %v", st, err)
	}
	if got := string(st.Raw); got != `{"conditions":[{"message":"ok","reason":"InstallSucceeded","status":"True","type":"Ready"}]}` {
		t.Errorf("reflected %s", got)
	}
}

func TestKruiseDaemonSet(t *testing.T) {
	c := shipped(t)
	obj := object(t, `
apiVersion: apps.kruise.io/v1alpha1
kind: DaemonSet
metadata: {name: agent, namespace: ns, generation: 2}
spec:
  template:
    spec:
      containers: [{name: c, image: agent, env: [{name: K, valueFrom: {secretKeyRef: {name: agent-key, key: k}}}]}]
status: {observedGeneration: 2, desiredNumberScheduled: 3, updatedNumberScheduled: 3, numberAvailable: 3, numberReady: 3}
`)
	if c.HookEnabled(obj.GroupVersionKind(), interpreter.InterpretReplica) {
		t.Error("a DaemonSet has no replicas to interpret")
	}
	if h, err := c.InterpretHealth(obj); h != workv1alpha2.ResourceHealthy || err != nil {
		t.Errorf("health %s %v", h, err)
	}
	rolling := obj.DeepCopy()
	_ = unstructured.SetNestedField(rolling.Object, int64(1), "status", "updatedNumberScheduled")
	if h, _ := c.InterpretHealth(rolling); h != workv1alpha2.ResourceUnhealthy {
		t.Errorf("health while updating: %s", h)
	}
	agg, err := c.AggregateStatus(obj, items(`{"desiredNumberScheduled":3,"numberReady":2,"daemonSetHash":"h1"}`, `{"desiredNumberScheduled":2,"numberReady":2}`))
	if err != nil {
		t.Fatal(err)
	}
	status, _, _ := unstructured.NestedMap(agg.Object, "status")
	if status["desiredNumberScheduled"] != int64(5) || status["numberReady"] != int64(4) || status["daemonSetHash"] != "h1" || status["observedGeneration"] != int64(2) {
		t.Errorf("aggregated status %v", status)
	}
	deps, err := c.GetDependencies(obj)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]interpreter.DependentObjectReference{{APIVersion: "v1", Kind: "Secret", Namespace: "ns", Name: "agent-key"}}, deps); diff != "" {
		t.Errorf("dependencies (-want +got):\n%s", diff)
	}
}

func TestKyvernoPolicies(t *testing.T) {
	c := shipped(t)
	for _, kind := range []string{"ClusterPolicy", "Policy"} {
		obj := object(t, "apiVersion: kyverno.io/v1\nkind: "+kind+"\nmetadata: {name: p}\nspec: {rules: []}\nstatus: {ready: true, conditions: [{type: Ready, status: \"True\", reason: Succeeded, message: ready}]}\n")
		if h, err := c.InterpretHealth(obj); h != workv1alpha2.ResourceHealthy || err != nil {
			t.Errorf("%s health %s %v", kind, h, err)
		}
		notReady := obj.DeepCopy()
		_ = unstructured.SetNestedField(notReady.Object, false, "status", "ready")
		if h, _ := c.InterpretHealth(notReady); h != workv1alpha2.ResourceUnhealthy {
			t.Errorf("%s health when not ready: %s", kind, h)
		}
		agg, err := c.AggregateStatus(obj, items(`{"ready":true,"conditions":[{"type":"Ready","status":"True","message":"ok"}]}`, `{"ready":false}`))
		if err != nil {
			t.Fatal(err)
		}
		status, _, _ := unstructured.NestedMap(agg.Object, "status")
		conditions, _ := status["conditions"].([]any)
		if status["ready"] != false || len(conditions) != 1 || conditions[0].(map[string]any)["message"] != "member1=ok" {
			t.Errorf("%s aggregated status %v", kind, status)
		}
		agg, _ = c.AggregateStatus(obj, items(`{"ready":true}`, `{"ready":true}`))
		if ready, _, _ := unstructured.NestedBool(agg.Object, "status", "ready"); !ready {
			t.Errorf("%s not ready where every member is: %v", kind, agg.Object["status"])
		}
	}
}

func yamlUnmarshal(raw []byte, out any) error {
	return yaml.Unmarshal(raw, out)
}

// jsonRoundTrip is v as encoding/json decodes it (numbers float64), to
// compare unstructured values whatever their integer types.
func jsonRoundTrip(t *testing.T, v any) any {
	t.Helper()
	if v == nil {
		return nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
