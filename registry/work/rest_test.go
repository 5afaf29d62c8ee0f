package work

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/registry/internal/resource"
	"github.com/flotilla-io/flotilla/registry/internal/resource/resourcetest"
)

func TestStrategies(t *testing.T) {
	t.Parallel()
	w := func(obj runtime.Object) *workv1alpha1.Work { return obj.(*workv1alpha1.Work) }
	rb := func(obj runtime.Object) *workv1alpha2.ResourceBinding { return obj.(*workv1alpha2.ResourceBinding) }
	crb := func(obj runtime.Object) *workv1alpha2.ClusterResourceBinding {
		return obj.(*workv1alpha2.ClusterResourceBinding)
	}
	// A binding's spec and status: the scheduler writes spec.clusters
	// through the binding and the Scheduled condition through its status.
	binding := `
spec:
  resource: {apiVersion: apps/v1, kind: Deployment, namespace: default, name: nginx}
  replicas: 2
`
	clusters := []workv1alpha2.TargetCluster{{Name: "member1", Replicas: 2}}
	scheduled := workv1alpha2.ResourceBindingStatus{SchedulerObservedGeneration: 1, Conditions: []metav1.Condition{{
		Type: workv1alpha2.Scheduled, Status: metav1.ConditionTrue, Reason: workv1alpha2.BindingReasonSuccess, LastTransitionTime: metav1.Now()}}}
	badAggregate := []workv1alpha2.AggregatedStatusItem{{ClusterName: ""}}
	defs := append([]*resource.Definition{workDefinition()}, bindingDefinitions()...)
	resourcetest.Run(t, defs, []resourcetest.Kind{
		{
			Resource: "works",
			Manifest: `
metadata: {name: nginx, namespace: karmada-es-member1}
spec:
  workload:
    manifests:
      - {apiVersion: v1, kind: ConfigMap, metadata: {name: cfg, namespace: default}}
`,
			ChangeSpec:   func(obj runtime.Object) { w(obj).Spec.SuspendDispatching = new(bool) },
			ChangeStatus: func(obj runtime.Object) { w(obj).Status.Conditions = scheduled.Conditions },
			Invalid: func(obj runtime.Object) {
				w(obj).Spec.Workload.Manifests[0] = workv1alpha1.Manifest{RawExtension: runtime.RawExtension{Raw: []byte(`{"data":{}}`)}}
			},
			InvalidPath: "spec.workload.manifests[0].kind",
			InvalidStatus: func(obj runtime.Object) {
				w(obj).Status.ManifestStatuses = []workv1alpha1.ManifestStatus{{Health: "Sick"}}
			},
			InvalidStatusPath: "status.manifestStatuses[0].health",
			Defaulted:         func(obj runtime.Object) bool { return w(obj).Labels[workv1alpha2.WorkPermanentIDLabel] != "" },
		},
		{
			Resource:          "resourcebindings",
			Manifest:          "metadata: {name: nginx-deployment, namespace: default}" + binding,
			ChangeSpec:        func(obj runtime.Object) { rb(obj).Spec.Clusters = clusters },
			ChangeStatus:      func(obj runtime.Object) { rb(obj).Status = *scheduled.DeepCopy() },
			Invalid:           func(obj runtime.Object) { rb(obj).Spec.Resource.Kind = "" },
			InvalidPath:       "spec.resource.kind",
			InvalidStatus:     func(obj runtime.Object) { rb(obj).Status.AggregatedStatus = badAggregate },
			InvalidStatusPath: "status.aggregatedStatus[0].clusterName",
			Defaulted: func(obj runtime.Object) bool {
				return rb(obj).Labels[workv1alpha2.ResourceBindingPermanentIDLabel] != ""
			},
		},
		{
			Resource:          "clusterresourcebindings",
			Manifest:          "metadata: {name: nginx-deployment}" + binding,
			ChangeSpec:        func(obj runtime.Object) { crb(obj).Spec.Clusters = clusters },
			ChangeStatus:      func(obj runtime.Object) { crb(obj).Status = *scheduled.DeepCopy() },
			Invalid:           func(obj runtime.Object) { crb(obj).Spec.Resource.Kind = "" },
			InvalidPath:       "spec.resource.kind",
			InvalidStatus:     func(obj runtime.Object) { crb(obj).Status.AggregatedStatus = badAggregate },
			InvalidStatusPath: "status.aggregatedStatus[0].clusterName",
			Defaulted: func(obj runtime.Object) bool {
				return crb(obj).Labels[workv1alpha2.ClusterResourceBindingPermanentIDLabel] != ""
			},
		},
	})
}

// TestBindingCells: kubectl get rb -o wide names the clusters a binding is
// being evicted from, with why.
func TestBindingCells(t *testing.T) {
	status := &workv1alpha2.ResourceBindingStatus{Conditions: []metav1.Condition{{Type: workv1alpha2.Scheduled, Status: metav1.ConditionTrue}}}
	for _, tc := range []struct {
		tasks []workv1alpha2.GracefulEvictionTask
		want  string
	}{
		{nil, "[True  <none>]"},
		{[]workv1alpha2.GracefulEvictionTask{{FromCluster: "member1", Reason: workv1alpha2.EvictionReasonTaintUntolerated},
			{FromCluster: "member3", Reason: workv1alpha2.EvictionReasonApplicationFailure}},
			"[True  member1(TaintUntolerated),member3(ApplicationFailure)]"},
	} {
		if got := fmt.Sprint(bindingCells(&workv1alpha2.ResourceBindingSpec{GracefulEvictionTasks: tc.tasks}, status)); got != tc.want {
			t.Errorf("cells %s, want %s", got, tc.want)
		}
	}
}
