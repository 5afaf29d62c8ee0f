package scheduler

import (
	"testing"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// A result with components is compared by its components too: the same
// one is not written again, a changed one is.
func TestSameClustersComponents(t *testing.T) {
	t.Parallel()
	set := func(tm int32) []workv1alpha2.TargetCluster {
		return []workv1alpha2.TargetCluster{{Name: "member1", Components: []workv1alpha2.TargetComponent{
			{Name: "jobmanager", Replicas: 1}, {Name: "taskmanager", Replicas: tm}}}}
	}
	if !sameClusters(set(2), set(2)) {
		t.Error("the same components compare different")
	}
	if sameClusters(set(2), set(3)) {
		t.Error("different components compare the same")
	}
	if sameClusters(set(2), []workv1alpha2.TargetCluster{{Name: "member1"}}) {
		t.Error("a result without components compares the same as one with")
	}
}
