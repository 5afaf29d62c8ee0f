package clusterstatus

import (
	"fmt"
	"time"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/member"
)

// summaryReconciler sets the node and resource summaries from the member's
// node and pod informers.
type summaryReconciler struct {
	// informers returns the member's informers, started on client when
	// they are not running.
	informers func(name string, client *member.Client) Informers
	now       func() time.Time
	// timeout bounds the wait for the informers to list.
	timeout time.Duration
}

// reconcile fills the summaries of a ready member. It returns errListing
// while the informers are listing (the status waits, so that Ready=True
// first arrives with its summary), and an error once they are late.
func (r *summaryReconciler) reconcile(cluster *clusterv1alpha1.Cluster, client *member.Client, status *clusterv1alpha1.ClusterStatus) error {
	mc := r.informers(cluster.Name, client)
	switch synced, late := listed(mc, r.now(), r.timeout); {
	case late:
		return fmt.Errorf("the caches of cluster %s's nodes and pods did not sync within %s", cluster.Name, r.timeout)
	case !synced:
		return errListing
	}
	ns, rs, err := summaries(mc, cluster.Spec.ResourceModels)
	if err != nil {
		return err
	}
	status.NodeSummary, status.ResourceSummary = ns, rs
	return nil
}
