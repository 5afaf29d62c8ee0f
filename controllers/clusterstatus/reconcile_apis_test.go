package clusterstatus

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/member"
)

func TestAPIsReconciler(t *testing.T) {
	t.Parallel()
	apps := &metav1.APIResourceList{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{
		{Name: "statefulsets", Kind: "StatefulSet"}, {Name: "deployments/scale", Kind: "Scale"}, {Name: "deployments", Kind: "Deployment"}}}
	core := &metav1.APIResourceList{GroupVersion: "v1", APIResources: []metav1.APIResource{{Name: "pods", Kind: "Pod"}}}
	both := []clusterv1alpha1.APIEnablement{
		{GroupVersion: "apps/v1", Resources: []clusterv1alpha1.APIResource{{Name: "deployments", Kind: "Deployment"}, {Name: "statefulsets", Kind: "StatefulSet"}}},
		{GroupVersion: "v1", Resources: []clusterv1alpha1.APIResource{{Name: "pods", Kind: "Pod"}}},
	}
	stored := []clusterv1alpha1.APIEnablement{{GroupVersion: "old/v1"}}
	complete := metav1.Condition{Type: clusterv1alpha1.ClusterConditionCompleteAPIEnablements, Status: metav1.ConditionTrue,
		Reason: ReasonCompleteAPIEnablements, Message: MessageCompleteAPIEnablements, ObservedGeneration: 2}
	partial := metav1.Condition{Type: clusterv1alpha1.ClusterConditionCompleteAPIEnablements, Status: metav1.ConditionFalse,
		Reason: ReasonIncompleteAPIEnablements, Message: MessageIncompleteAPIEnablements, ObservedGeneration: 2}
	tests := []struct {
		name       string
		version    string
		versionErr error
		lists      []*metav1.APIResourceList
		listErr    error
		want       clusterv1alpha1.ClusterStatus
	}{
		{name: "full discovery: sorted APIs without subresources, complete", version: "v1.31.2",
			lists: []*metav1.APIResourceList{core, apps},
			want:  clusterv1alpha1.ClusterStatus{KubernetesVersion: "v1.31.2", APIEnablements: both, Conditions: []metav1.Condition{complete}}},
		{name: "a group failed: what answered, partial", version: "v1.31.2",
			lists: []*metav1.APIResourceList{core}, listErr: errors.New("apps/v1 failed"),
			want: clusterv1alpha1.ClusterStatus{KubernetesVersion: "v1.31.2", APIEnablements: both[1:], Conditions: []metav1.Condition{partial}}},
		{name: "nothing answered: the stored APIs kept, partial", versionErr: errors.New("down"), listErr: errors.New("down"),
			want: clusterv1alpha1.ClusterStatus{KubernetesVersion: "v1.30.0", APIEnablements: stored, Conditions: []metav1.Condition{partial}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			theClient := &member.Client{}
			r := apisReconciler{
				version: func(c *member.Client) (string, error) {
					if c != theClient {
						t.Error("version read from another client")
					}
					return tc.version, tc.versionErr
				},
				resources: func(c *member.Client) ([]*metav1.APIResourceList, error) {
					if c != theClient {
						t.Error("resources read from another client")
					}
					return tc.lists, tc.listErr
				},
			}
			status := &clusterv1alpha1.ClusterStatus{KubernetesVersion: "v1.30.0", APIEnablements: stored}
			r.reconcile(push(), theClient, status)
			if diff := cmp.Diff(tc.want, *status, statusCmp...); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
		})
	}
}
