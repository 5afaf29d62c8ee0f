package deploymentreplicassyncer

import (
	"context"
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/interpreter"
	"github.com/flotilla-io/flotilla/names"
)

// decision is what to do with a Deployment template.
type decision int

const (
	// skipSync: nothing to do.
	skipSync decision = iota
	// waitForStatus: the aggregated status is not current yet; look again later.
	waitForStatus
	// syncReplicas: set spec.replicas to status.replicas.
	syncReplicas
)

// decide follows Karmada's deploymentReplicasSyncer: only labelled
// Deployments whose binding divides replicas among clusters are synced,
// when spec and status replicas differ and the status is collected (see
// collected). rb is nil when the Deployment has no binding. why says why
// for the log.
func decide(d *appsv1.Deployment, rb *workv1alpha2.ResourceBinding) (_ decision, why string) {
	switch {
	case d.Labels[interpreter.RetainReplicasLabel] != interpreter.RetainReplicasValue:
		return skipSync, "not labelled retain-replicas"
	case rb == nil:
		return skipSync, "no binding"
	case !divided(rb.Spec.Placement):
		return skipSync, "replicas are not divided among clusters"
	case d.Spec.Replicas != nil && *d.Spec.Replicas == d.Status.Replicas:
		return skipSync, "spec and status replicas agree"
	}
	if ok, why := collected(d, rb); !ok {
		return waitForStatus, why
	}
	return syncReplicas, ""
}

// divided tells whether the placement divides replicas among clusters; a
// placement without replica scheduling duplicates them (Karmada's
// Placement.ReplicaSchedulingType).
func divided(p *policyv1alpha1.Placement) bool {
	return p != nil && p.ReplicaScheduling != nil && p.ReplicaScheduling.ReplicaSchedulingType == policyv1alpha1.ReplicaSchedulingTypeDivided
}

// collected is Karmada's isDeploymentStatusCollected: the template's last
// spec.replicas reached the binding, the scheduler has seen the binding's
// generation, every target cluster reported a status with replicas (a
// member scaled by an HPA never has zero, so zero means not reported yet),
// and the template's status.replicas is their sum.
func collected(d *appsv1.Deployment, rb *workv1alpha2.ResourceBinding) (bool, string) {
	if d.Spec.Replicas == nil {
		return false, "spec.replicas is unset"
	}
	if *d.Spec.Replicas != rb.Spec.Replicas {
		return false, fmt.Sprintf("the binding has %d replicas, the template %d", rb.Spec.Replicas, *d.Spec.Replicas)
	}
	if rb.Generation != rb.Status.SchedulerObservedGeneration {
		return false, "the scheduler has not seen the binding's generation"
	}
	if len(rb.Status.AggregatedStatus) != len(rb.Spec.Clusters) {
		return false, fmt.Sprintf("%d of %d clusters reported status", len(rb.Status.AggregatedStatus), len(rb.Spec.Clusters))
	}
	var sum int32
	for _, item := range rb.Status.AggregatedStatus {
		if item.Status == nil {
			return false, "cluster " + item.ClusterName + " reported no status"
		}
		var s appsv1.DeploymentStatus
		if err := json.Unmarshal(item.Status.Raw, &s); err != nil {
			return false, fmt.Sprintf("the status of cluster %s is malformed: %v", item.ClusterName, err)
		}
		if s.Replicas <= 0 {
			return false, "cluster " + item.ClusterName + " reported no replicas"
		}
		sum += s.Replicas
	}
	if d.Status.Replicas != sum {
		return false, fmt.Sprintf("the template's status has %d replicas, the clusters %d", d.Status.Replicas, sum)
	}
	return true, ""
}

// replicasPatch is the merge patch setting spec.replicas. It carries the
// resourceVersion the decision was made on, so that, like Karmada's update,
// it fails with a conflict if the template changed meanwhile.
func replicasPatch(resourceVersion string, replicas int32) []byte {
	patch, _ := json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": resourceVersion},
		"spec":     map[string]any{"replicas": replicas},
	})
	return patch
}

func (c *Controller) reconcile(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	d, err := c.deployments.Deployments(ns).Get(name)
	if apierrors.IsNotFound(err) {
		// Deleted or no longer labelled.
		return nil
	}
	if err != nil {
		return err
	}
	rb, err := c.rbs.ResourceBindings(ns).Get(names.BindingName("Deployment", name))
	if apierrors.IsNotFound(err) {
		rb, err = nil, nil
	}
	if err != nil {
		return err
	}
	log := klog.FromContext(ctx).WithValues("deployment", klog.KObj(d))
	switch what, why := decide(d, rb); what {
	case skipSync:
		log.V(4).Info("Not syncing replicas", "reason", why)
		return nil
	case waitForStatus:
		// The next change of the Deployment or its binding brings it back.
		log.V(4).Info("Waiting for the member status", "reason", why)
		return nil
	}
	patch := replicasPatch(d.ResourceVersion, d.Status.Replicas)
	_, err = c.host.AppsV1().Deployments(ns).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: ControllerName})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("setting spec.replicas of Deployment %s to %d: %w", key, d.Status.Replicas, err)
	}
	log.V(2).Info("Synced replicas from status", "from", *d.Spec.Replicas, "to", d.Status.Replicas)
	return nil
}
