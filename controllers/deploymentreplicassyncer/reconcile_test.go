package deploymentreplicassyncer

import (
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

const retainLabel = "resourcetemplate.karmada.io/retain-replicas"

// newDeployment is a labelled template with spec and status replicas.
func newDeployment(spec, status int32) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", ResourceVersion: "7", Generation: 3,
			Labels: map[string]string{retainLabel: "true"}},
		Spec:   appsv1.DeploymentSpec{Replicas: ptr.To(spec)},
		Status: appsv1.DeploymentStatus{Replicas: status},
	}
}

// newBinding is a Divided binding of replicas, scheduled, with one
// reported status per member replica count.
func newBinding(replicas int32, members ...int32) *workv1alpha2.ResourceBinding {
	rb := &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-deployment", Generation: 4},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource: workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "web"},
			Replicas: replicas,
			Placement: &policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
				ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided}},
		},
		Status: workv1alpha2.ResourceBindingStatus{SchedulerObservedGeneration: 4},
	}
	for i, n := range members {
		c := fmt.Sprintf("member%d", i+1)
		rb.Spec.Clusters = append(rb.Spec.Clusters, workv1alpha2.TargetCluster{Name: c, Replicas: replicas / int32(len(members))})
		// As the interpreter reflects it: the status plus the federated generation.
		raw := fmt.Sprintf(`{"replicas":%d,"readyReplicas":%d,"observedGeneration":2,"resourceTemplateGeneration":3}`, n, n)
		rb.Status.AggregatedStatus = append(rb.Status.AggregatedStatus, workv1alpha2.AggregatedStatusItem{
			ClusterName: c, Status: &runtime.RawExtension{Raw: []byte(raw)}, Applied: true})
	}
	return rb
}

func TestDecide(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		d       func(*appsv1.Deployment)
		rb      func(*workv1alpha2.ResourceBinding)
		noRB    bool
		want    decision
		wantWhy string
	}{
		{name: "members scaled up", want: syncReplicas},
		{name: "not labelled", d: func(d *appsv1.Deployment) { d.Labels = nil }, want: skipSync, wantWhy: "not labelled"},
		{name: "label false", d: func(d *appsv1.Deployment) { d.Labels[retainLabel] = "false" }, want: skipSync, wantWhy: "not labelled"},
		{name: "no binding", noRB: true, want: skipSync, wantWhy: "no binding"},
		{name: "duplicated", rb: func(rb *workv1alpha2.ResourceBinding) {
			rb.Spec.Placement.ReplicaScheduling.ReplicaSchedulingType = policyv1alpha1.ReplicaSchedulingTypeDuplicated
		}, want: skipSync, wantWhy: "not divided"},
		{name: "no replica scheduling", rb: func(rb *workv1alpha2.ResourceBinding) { rb.Spec.Placement.ReplicaScheduling = nil },
			want: skipSync, wantWhy: "not divided"},
		{name: "no placement", rb: func(rb *workv1alpha2.ResourceBinding) { rb.Spec.Placement = nil }, want: skipSync, wantWhy: "not divided"},
		{name: "in sync", d: func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To[int32](5) }, want: skipSync, wantWhy: "agree"},
		{name: "template change not in the binding yet", d: func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To[int32](3) },
			want: waitForStatus, wantWhy: "the binding has 2 replicas"},
		{name: "spec.replicas unset", d: func(d *appsv1.Deployment) { d.Spec.Replicas = nil }, want: waitForStatus, wantWhy: "unset"},
		{name: "not scheduled", rb: func(rb *workv1alpha2.ResourceBinding) { rb.Generation = 5 }, want: waitForStatus, wantWhy: "scheduler"},
		{name: "a cluster missing", rb: func(rb *workv1alpha2.ResourceBinding) {
			rb.Status.AggregatedStatus = rb.Status.AggregatedStatus[:1]
		}, want: waitForStatus, wantWhy: "1 of 2 clusters"},
		{name: "a status missing", rb: func(rb *workv1alpha2.ResourceBinding) { rb.Status.AggregatedStatus[1].Status = nil },
			want: waitForStatus, wantWhy: "member2 reported no status"},
		{name: "zero replicas reported", rb: func(rb *workv1alpha2.ResourceBinding) {
			rb.Status.AggregatedStatus[0].Status.Raw = []byte(`{"readyReplicas":0}`)
		}, want: waitForStatus, wantWhy: "member1 reported no replicas"},
		{name: "malformed status", rb: func(rb *workv1alpha2.ResourceBinding) {
			rb.Status.AggregatedStatus[0].Status.Raw = []byte(`{"replicas":"many"}`)
		}, want: waitForStatus, wantWhy: "malformed"},
		{name: "template status behind the members", d: func(d *appsv1.Deployment) { d.Status.Replicas = 4 },
			want: waitForStatus, wantWhy: "4 replicas, the clusters 5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d, rb := newDeployment(2, 5), newBinding(2, 2, 3)
			if tc.d != nil {
				tc.d(d)
			}
			if tc.rb != nil {
				tc.rb(rb)
			}
			if tc.noRB {
				rb = nil
			}
			got, why := decide(d, rb)
			if got != tc.want || !strings.Contains(why, tc.wantWhy) {
				t.Errorf("decide = %v %q, want %v containing %q", got, why, tc.want, tc.wantWhy)
			}
		})
	}
}

func TestReplicasPatch(t *testing.T) {
	t.Parallel()
	want := `{"metadata":{"resourceVersion":"7"},"spec":{"replicas":5}}`
	if got := string(replicasPatch("7", 5)); got != want {
		t.Errorf("patch %s, want %s", got, want)
	}
}

func TestReplicasChanged(t *testing.T) {
	t.Parallel()
	unlabelled := newDeployment(2, 2)
	unlabelled.Labels = nil
	for _, tc := range []struct {
		name     string
		old, obj *appsv1.Deployment
		want     bool
	}{
		{"label added", unlabelled, newDeployment(2, 2), true},
		{"label removed", newDeployment(2, 5), unlabelled, false},
		{"status replicas changed", newDeployment(2, 2), newDeployment(2, 5), true},
		{"spec replicas changed", newDeployment(2, 5), newDeployment(5, 5), true},
		{"other change", newDeployment(2, 5), newDeployment(2, 5), false},
		{"spec replicas unset", newDeployment(2, 5), &appsv1.Deployment{ObjectMeta: newDeployment(0, 0).ObjectMeta}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := replicasChanged(tc.old, tc.obj); got != tc.want {
				t.Errorf("replicasChanged %v, want %v", got, tc.want)
			}
		})
	}
}
