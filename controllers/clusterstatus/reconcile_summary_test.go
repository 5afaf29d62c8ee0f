package clusterstatus

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/member"
)

func TestSummaryReconciler(t *testing.T) {
	t.Parallel()
	stored := func() clusterv1alpha1.ClusterStatus {
		return clusterv1alpha1.ClusterStatus{NodeSummary: &clusterv1alpha1.NodeSummary{TotalNum: 9}}
	}
	tests := []struct {
		name     string
		informer *staticInformers
		// wantErr: errListing, any other error (errOther), or none.
		wantErr error
		want    clusterv1alpha1.ClusterStatus
	}{
		{name: "listed: the summaries of the nodes and pods",
			informer: &staticInformers{listed: true, since: fixedNow, nodes: healthy().nodes, pods: healthy().pods},
			want:     clusterv1alpha1.ClusterStatus{NodeSummary: healthyStatus().NodeSummary, ResourceSummary: healthyStatus().ResourceSummary}},
		{name: "listed, no nodes: empty summaries", informer: &staticInformers{listed: true, since: fixedNow},
			want: clusterv1alpha1.ClusterStatus{NodeSummary: &clusterv1alpha1.NodeSummary{},
				ResourceSummary: &clusterv1alpha1.ResourceSummary{Allocated: corev1.ResourceList{corev1.ResourcePods: rl("0", "0")[corev1.ResourcePods]}}}},
		{name: "listing within the timeout: errListing, status untouched",
			informer: &staticInformers{since: fixedNow.Add(-30 * time.Second)}, wantErr: errListing, want: stored()},
		{name: "listing past the timeout: an error, status untouched",
			informer: &staticInformers{since: fixedNow.Add(-time.Minute)}, wantErr: errOther, want: stored()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			theClient := &member.Client{}
			r := summaryReconciler{
				informers: func(name string, c *member.Client) Informers {
					if name != "member1" || c != theClient {
						t.Errorf("informers of %s asked for with another client", name)
					}
					return tc.informer
				},
				now:     func() time.Time { return fixedNow },
				timeout: time.Minute,
			}
			status := stored()
			err := r.reconcile(push(), theClient, &status)
			switch {
			case tc.wantErr == nil && err != nil:
				t.Fatalf("error %v", err)
			case tc.wantErr == errListing && !errors.Is(err, errListing):
				t.Errorf("error %v, want errListing", err)
			case tc.wantErr == errOther && (err == nil || errors.Is(err, errListing)):
				t.Errorf("error %v, want a timeout error", err)
			}
			if diff := cmp.Diff(tc.want, status, statusCmp...); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
		})
	}
}

// errOther stands for any error but errListing in the tables.
var errOther = errors.New("another error")
