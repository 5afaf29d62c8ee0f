package status

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// TestRun drives the controller through started informers: a Work applied
// after the binding exists makes the binding FullyApplied.
func TestRun(t *testing.T) {
	t.Parallel()
	pending := work(t, "m2", metav1.ConditionFalse, "not yet", nil)
	f := newFixture(t, nil, []runtime.Object{rb("m1", "m2"), work(t, "m1", metav1.ConditionTrue, "", deploymentStatus(t, 2, 2)), pending}, deployment(1))
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Start from empty stores, as after a restart, so the informers add.
	for _, inf := range []cache.SharedIndexInformer{f.factory.Work().V1alpha1().Works().Informer(), f.factory.Work().V1alpha2().ResourceBindings().Informer()} {
		if err := inf.GetIndexer().Replace(nil, ""); err != nil {
			t.Fatal(err)
		}
	}
	f.factory.Start(ctx.Done())
	go f.c.Run(ctx, 2)

	fullyApplied := func(want metav1.ConditionStatus) wait.ConditionWithContextFunc {
		return func(ctx context.Context) (bool, error) {
			b, err := f.karmada.WorkV1alpha2().ResourceBindings("default").Get(ctx, "nginx-deployment", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			return meta.IsStatusConditionPresentAndEqual(b.Status.Conditions, workv1alpha2.FullyApplied, want), nil
		}
	}
	if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 5*time.Second, true, fullyApplied(metav1.ConditionFalse)); err != nil {
		t.Fatalf("FullyApplied never became False: %v", err)
	}
	done := pending.DeepCopy()
	done.Status.Conditions[0].Status = metav1.ConditionTrue
	if _, err := f.karmada.WorkV1alpha1().Works(done.Namespace).UpdateStatus(ctx, done, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 5*time.Second, true, fullyApplied(metav1.ConditionTrue)); err != nil {
		t.Fatalf("FullyApplied never became True: %v", err)
	}
}
