package clusterstatus

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/member"
)

func TestReadyReconciler(t *testing.T) {
	t.Parallel()
	theClient := &member.Client{}
	tests := []struct {
		name      string
		clientErr error
		body      string
		err       error
		// stored is the Ready condition the cluster had.
		stored    *metav1.Condition
		wantReady bool
		want      metav1.Condition
	}{
		{name: "readyz ok: ClusterReady", body: "ok\n", wantReady: true,
			want: readyCondition(metav1.ConditionTrue, ReasonClusterReady, MessageClusterReady)},
		{name: "no client: ClusterNotReachable with the reason", clientErr: errors.New("no secret"),
			want: readyCondition(metav1.ConditionFalse, ReasonClusterNotReachable, "no secret")},
		{name: "no answer: ClusterNotReachable", err: errors.New("connection refused"),
			want: readyCondition(metav1.ConditionFalse, ReasonClusterNotReachable, MessageClusterNotReachable)},
		{name: "HTTP error without a body: ClusterNotReady",
			err:  apierrors.NewGenericServerResponse(http.StatusServiceUnavailable, "get", schema.GroupResource{}, "", "", 0, false),
			want: readyCondition(metav1.ConditionFalse, ReasonClusterNotReady, MessageClusterNotReady)},
		{name: "a failed check in the body: ClusterNotReady", body: "[-]etcd failed", err: errors.New("500"),
			want: readyCondition(metav1.ConditionFalse, ReasonClusterNotReady, MessageClusterNotReady)},
		{name: "answer other than ok: ClusterNotReady", body: "maybe",
			want: readyCondition(metav1.ConditionFalse, ReasonClusterNotReady, MessageClusterNotReady)},
		{name: "was ready, now not: the condition replaced", body: "maybe",
			stored: ptrTo(readyCondition(metav1.ConditionTrue, ReasonClusterReady, MessageClusterReady)),
			want:   readyCondition(metav1.ConditionFalse, ReasonClusterNotReady, MessageClusterNotReady)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			probed := false
			r := readyReconciler{
				memberClient: func(c *clusterv1alpha1.Cluster) (*member.Client, error) {
					if tc.clientErr != nil {
						return nil, tc.clientErr
					}
					return theClient, nil
				},
				readyz: func(ctx context.Context, c *member.Client) ([]byte, error) {
					probed = true
					if c != theClient {
						t.Error("readyz probed another client")
					}
					if _, ok := ctx.Deadline(); !ok {
						t.Error("readyz probed without a deadline")
					}
					return []byte(tc.body), tc.err
				},
			}
			status := &clusterv1alpha1.ClusterStatus{}
			if tc.stored != nil {
				status.Conditions = []metav1.Condition{*tc.stored}
			}
			client, ready := r.reconcile(context.Background(), push(), status)
			if ready != tc.wantReady {
				t.Errorf("ready = %v, want %v", ready, tc.wantReady)
			}
			if ready != (client == theClient) {
				t.Errorf("client %v returned with ready %v", client, ready)
			}
			if probed == (tc.clientErr != nil) {
				t.Errorf("probed = %v with client error %v", probed, tc.clientErr)
			}
			if diff := cmp.Diff([]metav1.Condition{tc.want}, status.Conditions, statusCmp...); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
		})
	}
}
