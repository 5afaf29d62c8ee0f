package federatedhpa

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/member"
)

func TestPodsReconciler(t *testing.T) {
	t.Parallel()
	web := labels.SelectorFromSet(labels.Set{"app": "web"})
	ref := autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}
	placed := func(clusters ...string) *workv1alpha2.ResourceBinding {
		rb := &workv1alpha2.ResourceBinding{}
		for _, c := range clusters {
			rb.Spec.Clusters = append(rb.Spec.Clusters, workv1alpha2.TargetCluster{Name: c, Replicas: 1})
		}
		return rb
	}
	tests := []struct {
		name     string
		selector labels.Selector
		binding  *workv1alpha2.ResourceBinding // nil: none
		// pods by member, by name; a member absent has its pods unknown.
		pods        map[string][]string
		want        []string // cluster/pod
		wantMissing []string
	}{
		{name: "no selector: nothing looked up", binding: placed("m1"), pods: map[string][]string{"m1": {"a"}}},
		{name: "no binding: no cluster", selector: web, pods: map[string][]string{"m1": {"a"}}},
		{name: "the pods of every target cluster, in cluster order", selector: web, binding: placed("m2", "m1"),
			pods: map[string][]string{"m1": {"a", "b"}, "m2": {"c"}, "m3": {"d"}}, want: []string{"m1/a", "m1/b", "m2/c"}},
		{name: "a member's pods unknown: named missing", selector: web, binding: placed("m1", "m2"),
			pods: map[string][]string{"m1": {"a"}}, want: []string{"m1/a"}, wantMissing: []string{"m2"}},
		{name: "a member without pods is not missing", selector: web, binding: placed("m1", "m2"),
			pods: map[string][]string{"m1": {"a"}, "m2": nil}, want: []string{"m1/a"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := podsReconciler{
				binding: func(namespace, name string) (*workv1alpha2.ResourceBinding, error) {
					if tc.selector == nil {
						t.Error("binding read without a selector")
					}
					if namespace != "default" || name != "web-deployment" {
						t.Errorf("binding %s/%s read", namespace, name)
					}
					if tc.binding == nil {
						return nil, apierrors.NewNotFound(schema.GroupResource{Group: "work.karmada.io", Resource: "resourcebindings"}, name)
					}
					return tc.binding, nil
				},
				memberPods: func(cluster, namespace string, selector labels.Selector) ([]*member.Pod, error) {
					if namespace != "default" || selector.String() != tc.selector.String() {
						t.Errorf("pods of %s listed in %q with %v", cluster, namespace, selector)
					}
					names, ok := tc.pods[cluster]
					if !ok {
						return nil, errors.New("unknown")
					}
					var out []*member.Pod
					for _, n := range names {
						out = append(out, member.NewPod(webPod(n)))
					}
					return out, nil
				},
			}
			pods, missing := r.reconcile("default", ref, tc.selector)
			var got []string
			for _, p := range pods {
				got = append(got, p.cluster+"/"+p.pod.Name)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("pods (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantMissing, missing); diff != "" {
				t.Errorf("missing (-want +got):\n%s", diff)
			}
		})
	}
}
