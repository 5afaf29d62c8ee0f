package clusterstatus

import (
	"context"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/member"
)

// readyTimeout bounds one /readyz probe of a member.
const readyTimeout = 5 * time.Second

// readyReconciler sets the Ready condition from the member's /readyz.
type readyReconciler struct {
	// memberClient returns the member's client.
	memberClient func(*clusterv1alpha1.Cluster) (*member.Client, error)
	// readyz GETs the member's /readyz.
	readyz func(ctx context.Context, client *member.Client) ([]byte, error)
}

// reconcile probes the member and sets Ready in status. It returns the
// member's client and true when the member is ready, so that the rest of
// the status is observed through it.
func (r *readyReconciler) reconcile(ctx context.Context, cluster *clusterv1alpha1.Cluster, status *clusterv1alpha1.ClusterStatus) (*member.Client, bool) {
	setReady := func(s metav1.ConditionStatus, reason, msg string) {
		meta.SetStatusCondition(&status.Conditions, metav1.Condition{Type: clusterv1alpha1.ClusterConditionReady, Status: s, Reason: reason, Message: msg, ObservedGeneration: cluster.Generation})
	}
	client, err := r.memberClient(cluster)
	if err != nil {
		setReady(metav1.ConditionFalse, ReasonClusterNotReachable, err.Error())
		return nil, false
	}
	pctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	body, err := r.readyz(pctx, client)
	switch {
	case err != nil && len(body) == 0 && !apierrors.IsInternalError(err) && !isHTTPStatus(err):
		// No answer at all (refused, timed out): not reachable.
		setReady(metav1.ConditionFalse, ReasonClusterNotReachable, MessageClusterNotReachable)
		return nil, false
	case err != nil || strings.TrimSpace(string(body)) != "ok":
		setReady(metav1.ConditionFalse, ReasonClusterNotReady, MessageClusterNotReady)
		return nil, false
	}
	setReady(metav1.ConditionTrue, ReasonClusterReady, MessageClusterReady)
	return client, true
}

// getReadyz GETs /readyz through the member's discovery REST client.
func getReadyz(ctx context.Context, client *member.Client) ([]byte, error) {
	return client.Clientset.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
}

func isHTTPStatus(err error) bool {
	_, ok := err.(apierrors.APIStatus)
	return ok
}
