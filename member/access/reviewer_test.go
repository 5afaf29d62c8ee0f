package access

import (
	"context"
	"errors"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
)

func TestNewReviewer(t *testing.T) {
	t.Parallel()
	cs := fake.NewClientset()
	cs.PrependReactor("create", "subjectaccessreviews", func(a clienttesting.Action) (bool, runtime.Object, error) {
		sar := a.(clienttesting.CreateAction).GetObject().(*authorizationv1.SubjectAccessReview)
		sar.Status.Allowed = sar.Spec.User == "tom" && sar.Spec.ResourceAttributes.Namespace == "a"
		return true, sar, nil
	})
	review := NewReviewer(func(cluster string) (kubernetes.Interface, error) {
		if cluster != "m1" {
			return nil, errors.New("not ready")
		}
		return cs, nil
	})
	ctx := context.Background()
	for _, tc := range []struct {
		cluster, ns string
		want, err   bool
	}{{"m1", "a", true, false}, {"m1", "b", false, false}, {"m2", "a", false, true}} {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: "tom", ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "list", Resource: "pods", Namespace: tc.ns}}}
		got, err := review(ctx, tc.cluster, sar)
		if got != tc.want || (err != nil) != tc.err {
			t.Errorf("%s/%s: %t, %v; want %t, error %t", tc.cluster, tc.ns, got, err, tc.want, tc.err)
		}
	}
}
