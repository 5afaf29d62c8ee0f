package resource

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/user"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

func TestLoopbackStatus(t *testing.T) {
	def := &Definition{Status: true, LoopbackStatus: true, New: func() runtime.Object { return &workv1alpha2.ResourceBinding{} }}
	s := &strategy{def: def}
	for name, tc := range map[string]struct {
		user     string
		loopback bool
		want     int64
	}{
		"loopback writes status":       {user.APIServerUser, true, 2},
		"others cannot":                {"alice", true, 1},
		"kind without loopback status": {user.APIServerUser, false, 1},
	} {
		def.LoopbackStatus = tc.loopback
		old := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Generation: 1}, Status: workv1alpha2.ResourceBindingStatus{SchedulerObservedGeneration: 1}}
		obj := old.DeepCopy()
		obj.Spec.Clusters = []workv1alpha2.TargetCluster{{Name: "member1"}}
		obj.Status.SchedulerObservedGeneration = 2
		ctx := genericapirequest.WithUser(context.Background(), &user.DefaultInfo{Name: tc.user})
		s.PrepareForUpdate(ctx, obj, old)
		if got := obj.Status.SchedulerObservedGeneration; got != tc.want {
			t.Errorf("%s: observed generation %d, want %d", name, got, tc.want)
		}
		if obj.Generation != 2 {
			t.Errorf("%s: generation %d, want 2 (spec changed)", name, obj.Generation)
		}
	}
}
