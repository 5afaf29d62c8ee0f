package binding

import (
	"testing"

	"github.com/flotilla-io/flotilla/controllers/internal/works"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/interpreter"
)

func nginx() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	_ = u.UnmarshalJSON([]byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"nginx","namespace":"default","uid":"u1",
	"resourceVersion":"7","generation":3,"labels":{"app":"nginx","propagationpolicy.karmada.io/permanent-id":"p1"},
	"annotations":{"propagationpolicy.karmada.io/name":"nginx-propagation"}},
	"spec":{"replicas":2,"selector":{"matchLabels":{"app":"nginx"}},"template":{"metadata":{"labels":{"app":"nginx"}},
	"spec":{"containers":[{"name":"nginx","image":"nginx:1.7.9"}]}}},"status":{"replicas":2}}`))
	return u
}

func TestBuildWork(t *testing.T) {
	c := &Controller{interp: interpreter.NewNative()}
	b := &bindingView{namespace: "default", name: "nginx-deployment", id: "rb1", spec: &workv1alpha2.ResourceBindingSpec{
		Replicas: 2,
		Placement: &policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
			ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided}},
	}}
	cluster := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member1"}}
	w, err := c.buildWork(b, nginx(), workv1alpha2.TargetCluster{Name: "member1", Replicas: 1}, cluster, nil, "w1")
	if err != nil {
		t.Fatal(err)
	}
	if w.Name != "nginx-687f7fb96f" || w.Namespace != "karmada-es-member1" {
		t.Errorf("work %s/%s", w.Namespace, w.Name)
	}
	if w.Labels[workv1alpha2.ResourceBindingPermanentIDLabel] != "rb1" || w.Labels[workv1alpha2.WorkPermanentIDLabel] != "w1" {
		t.Errorf("work labels %v", w.Labels)
	}
	m := &unstructured.Unstructured{}
	if err := m.UnmarshalJSON(w.Spec.Workload.Manifests[0].Raw); err != nil {
		t.Fatal(err)
	}
	if r, _, _ := unstructured.NestedInt64(m.Object, "spec", "replicas"); r != 1 {
		t.Errorf("replicas %d, want 1", r)
	}
	if got := w.Annotations[workv1alpha2.AssignedReplicasAnnotation]; got != "1" {
		t.Errorf("Work annotation %s=%q, want the assignment 1", workv1alpha2.AssignedReplicasAnnotation, got)
	}
	if _, ok := m.Object["status"]; ok || m.GetResourceVersion() != "" || m.GetUID() != "" {
		t.Errorf("not pruned: %v", m.Object)
	}
	l, a := m.GetLabels(), m.GetAnnotations()
	for k, v := range map[string]string{workv1alpha1.ManagedByKarmadaLabel: "true", workv1alpha2.ResourceBindingPermanentIDLabel: "rb1", workv1alpha2.WorkPermanentIDLabel: "w1", "app": "nginx"} {
		if l[k] != v {
			t.Errorf("manifest label %s=%q, want %q", k, l[k], v)
		}
	}
	for k, v := range map[string]string{workv1alpha2.ResourceTemplateUIDAnnotation: "u1", workv1alpha2.WorkNameAnnotation: "nginx-687f7fb96f",
		workv1alpha2.WorkNamespaceAnnotation: "karmada-es-member1", workv1alpha2.ResourceBindingNameAnnotationKey: "nginx-deployment",
		workv1alpha2.ResourceTemplateGenerationAnnotationKey: "3", workv1alpha2.ResourceConflictResolutionAnnotation: "abort",
		"propagationpolicy.karmada.io/name": "nginx-propagation"} {
		if a[k] != v {
			t.Errorf("manifest annotation %s=%q, want %q", k, a[k], v)
		}
	}
	if a[workv1alpha2.ManagedLabels] == "" || a[workv1alpha2.ManagedAnnotation] == "" {
		t.Errorf("managed keys missing: %v", a)
	}
	// Building again from the stored Work's id is a no-op.
	again, err := c.buildWork(b, nginx(), workv1alpha2.TargetCluster{Name: "member1", Replicas: 1}, cluster, nil, "w1")
	if err != nil {
		t.Fatal(err)
	}
	if works.Differs(w, again) {
		t.Error("rebuilt Work differs")
	}
	// Duplicated: replicas untouched.
	b.spec.Placement = nil
	dup, _ := c.buildWork(b, nginx(), workv1alpha2.TargetCluster{Name: "member1", Replicas: 2}, cluster, nil, "w1")
	if !works.Differs(w, dup) {
		t.Error("Duplicated Work equals the divided one")
	}
	if got, ok := dup.Annotations[workv1alpha2.AssignedReplicasAnnotation]; ok {
		t.Errorf("Duplicated Work has %s=%q: nothing was revised", workv1alpha2.AssignedReplicasAnnotation, got)
	}
}

// A workload described by components goes whole to each cluster: its
// Work is never revised to the cluster's replicas, even under Divided.
func TestBuildWorkComponents(t *testing.T) {
	c := &Controller{interp: interpreter.NewNative()}
	divided := &policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
		ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided}}
	cluster := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member1"}}
	for name, spec := range map[string]*workv1alpha2.ResourceBindingSpec{
		"components only":            {Placement: divided, Components: []workv1alpha2.Component{{Name: "web", Replicas: 2}}},
		"components beside replicas": {Placement: divided, Replicas: 2, Components: []workv1alpha2.Component{{Name: "web", Replicas: 2}}},
	} {
		b := &bindingView{namespace: "default", name: "nginx-deployment", id: "rb1", spec: spec}
		target := workv1alpha2.TargetCluster{Name: "member1", Components: []workv1alpha2.TargetComponent{{Name: "web", Replicas: 2}}}
		w, err := c.buildWork(b, nginx(), target, cluster, nil, "w1")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		m := &unstructured.Unstructured{}
		if err := m.UnmarshalJSON(w.Spec.Workload.Manifests[0].Raw); err != nil {
			t.Fatal(err)
		}
		if r, _, _ := unstructured.NestedInt64(m.Object, "spec", "replicas"); r != 2 {
			t.Errorf("%s: replicas %d, want the template's 2", name, r)
		}
	}
}

// The state a failover preserved goes, as labels, to the workload in the
// clusters it moved to, not to those it already ran in, while the task
// is open.
func TestBuildWorkPreservedLabels(t *testing.T) {
	c := &Controller{interp: interpreter.NewNative()}
	spec := &workv1alpha2.ResourceBindingSpec{Replicas: 2, GracefulEvictionTasks: []workv1alpha2.GracefulEvictionTask{{
		FromCluster: "member1", PurgeMode: policyv1alpha1.PurgeModeImmediately,
		PreservedLabelState: map[string]string{"example.io/checkpoint": "42"}, ClustersBeforeFailover: []string{"member1", "member3"},
	}}}
	b := &bindingView{namespace: "default", name: "nginx-deployment", id: "rb1", spec: spec}
	for cluster, want := range map[string]string{"member2": "42", "member3": ""} {
		w, err := c.buildWork(b, nginx(), workv1alpha2.TargetCluster{Name: cluster, Replicas: 2},
			&clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: cluster}}, nil, "w1")
		if err != nil {
			t.Fatal(err)
		}
		m := &unstructured.Unstructured{}
		if err := m.UnmarshalJSON(w.Spec.Workload.Manifests[0].Raw); err != nil {
			t.Fatal(err)
		}
		if got := m.GetLabels()["example.io/checkpoint"]; got != want {
			t.Errorf("%s: label example.io/checkpoint=%q, want %q", cluster, got, want)
		}
	}
	// The task gone, the label goes.
	spec.GracefulEvictionTasks = nil
	w, err := c.buildWork(b, nginx(), workv1alpha2.TargetCluster{Name: "member2", Replicas: 2},
		&clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member2"}}, nil, "w1")
	if err != nil {
		t.Fatal(err)
	}
	m := &unstructured.Unstructured{}
	if err := m.UnmarshalJSON(w.Spec.Workload.Manifests[0].Raw); err != nil {
		t.Fatal(err)
	}
	if got, ok := m.GetLabels()["example.io/checkpoint"]; ok {
		t.Errorf("label example.io/checkpoint=%q after the task ended", got)
	}
}
