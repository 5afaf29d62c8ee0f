package work

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/registry/internal/resource"
)

// A decision written through the scheduling subresource keeps the stored
// spec but for spec.clusters, takes the status and metadata written, and
// moves the generation only when the clusters change.
func TestSchedulingStrategy(t *testing.T) {
	def := bindingDefinitions()[0]
	s := newSchedulingStrategy(resource.NewStrategy(runtime.NewScheme(), def))
	stored := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", Generation: 3},
		Spec: workv1alpha2.ResourceBindingSpec{Replicas: 2, Clusters: []workv1alpha2.TargetCluster{{Name: "a", Replicas: 2}},
			Resource: workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "ns", Name: "web"}},
		Status: workv1alpha2.ResourceBindingStatus{SchedulerObservedGeneration: 2}}
	for _, tc := range []struct {
		name     string
		clusters []workv1alpha2.TargetCluster
		wantGen  int64
	}{
		{"new clusters", []workv1alpha2.TargetCluster{{Name: "a", Replicas: 1}, {Name: "b", Replicas: 1}}, 4},
		{"same clusters", []workv1alpha2.TargetCluster{{Name: "a", Replicas: 2}}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			written := stored.DeepCopy()
			written.Spec.Clusters = tc.clusters
			written.Spec.Replicas = 9 // not the scheduler's to change
			written.Annotations = map[string]string{workv1alpha2.AppliedPlacementAnnotation: "{}"}
			// The decision is written for the stored generation.
			written.Status.SchedulerObservedGeneration = 3
			written.Status.Conditions = []metav1.Condition{{Type: workv1alpha2.Scheduled, Status: metav1.ConditionTrue, ObservedGeneration: 3}}
			s.PrepareForUpdate(context.Background(), written, stored)
			if written.Spec.Replicas != 2 {
				t.Errorf("spec.replicas = %d, want the stored 2", written.Spec.Replicas)
			}
			if len(written.Spec.Clusters) != len(tc.clusters) {
				t.Errorf("spec.clusters = %v, want %v", written.Spec.Clusters, tc.clusters)
			}
			if written.Annotations[workv1alpha2.AppliedPlacementAnnotation] != "{}" {
				t.Errorf("annotations %v: want the written ones", written.Annotations)
			}
			if written.Generation != tc.wantGen {
				t.Errorf("generation %d, want %d", written.Generation, tc.wantGen)
			}
			// The decision observes the generation its own result made.
			if got := written.Status.SchedulerObservedGeneration; got != tc.wantGen {
				t.Errorf("schedulerObservedGeneration %d, want %d", got, tc.wantGen)
			}
			if got := written.Status.Conditions[0].ObservedGeneration; got != tc.wantGen {
				t.Errorf("Scheduled observedGeneration %d, want %d", got, tc.wantGen)
			}
		})
	}
}

// A decision is validated as a binding: a cluster without a name is
// refused with its field named.
func TestSchedulingStrategyValidates(t *testing.T) {
	def := bindingDefinitions()[0]
	s := newSchedulingStrategy(resource.NewStrategy(runtime.NewScheme(), def))
	stored := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", Generation: 1, ResourceVersion: "1"},
		Spec: workv1alpha2.ResourceBindingSpec{Resource: workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "ns", Name: "web"}}}
	for _, tc := range []struct {
		name     string
		clusters []workv1alpha2.TargetCluster
		wantPath string
	}{
		{"named", []workv1alpha2.TargetCluster{{Name: "a"}}, ""},
		{"unnamed", []workv1alpha2.TargetCluster{{Name: "a"}, {}}, "spec.clusters[1].name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			written := stored.DeepCopy()
			written.Spec.Clusters = tc.clusters
			s.PrepareForUpdate(context.Background(), written, stored)
			errs := s.ValidateUpdate(context.Background(), written, stored)
			switch {
			case tc.wantPath == "" && len(errs) > 0:
				t.Errorf("refused: %v", errs)
			case tc.wantPath != "" && (len(errs) == 0 || errs[0].Field != tc.wantPath):
				t.Errorf("errors %v, want one at %s", errs, tc.wantPath)
			}
		})
	}
}
