package mutation

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
)

func TestMutateRolloutStrategy(t *testing.T) {
	t.Parallel()
	set := flotillav1alpha1.RolloutStage{
		Name: "set", MaxConcurrency: ptr.To(intstr.FromInt32(2)), SoakTime: &metav1.Duration{Duration: time.Minute},
		ProgressDeadline: &metav1.Duration{Duration: time.Hour}, MaxFailures: ptr.To[int32](1),
	}
	s := &flotillav1alpha1.RolloutStrategy{Spec: flotillav1alpha1.RolloutStrategySpec{Stages: []flotillav1alpha1.RolloutStage{{Name: "unset"}, *set.DeepCopy()}}}
	MutateRolloutStrategy(s)
	want := []flotillav1alpha1.RolloutStage{{
		Name: "unset", MaxConcurrency: ptr.To(intstr.FromString("100%")), SoakTime: &metav1.Duration{},
		ProgressDeadline: &metav1.Duration{Duration: 10 * time.Minute}, MaxFailures: ptr.To[int32](0),
	}, set}
	if diff := cmp.Diff(want, s.Spec.Stages); diff != "" {
		t.Errorf("stages (-want +got):\n%s", diff)
	}
	if s.Spec.NewClusters != flotillav1alpha1.NewClustersImmediately {
		t.Errorf("newClusters %q, want Immediately", s.Spec.NewClusters)
	}
	s.Spec.NewClusters = flotillav1alpha1.NewClustersInStage
	MutateRolloutStrategy(s)
	if s.Spec.NewClusters != flotillav1alpha1.NewClustersInStage {
		t.Errorf("newClusters %q, want InStage kept", s.Spec.NewClusters)
	}
}
