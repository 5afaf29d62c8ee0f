package federatedhpa

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/apis/autoscaling/v1alpha1"
	"github.com/flotilla-io/flotilla/podautoscaler"
	"github.com/flotilla-io/flotilla/telemetry"
)

// reconcile computes one FederatedHPA. The sub-reconcilers run in order:
// scaleReconciler reads the target's scale, podsReconciler its pods in
// every member it is placed on, metricsReconciler their metrics,
// recommendReconciler runs the algorithm with this FederatedHPA's memory,
// rescaleReconciler patches the scale when the algorithm says so,
// eventsReconciler records the events and statusReconciler writes the
// status in one merge patch, none when nothing changed. It runs again after
// SyncPeriod.
func (c *Controller) reconcile(ctx context.Context, key string) (err error) {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	fhpa, err := c.fhpas.FederatedHPAs(ns).Get(name)
	if apierrors.IsNotFound(err) {
		c.recommend.forget(key)
		return nil
	}
	if err != nil {
		return err
	}
	defer c.queue.AddAfter(key, c.opts.SyncPeriod)
	start := time.Now()
	defer func() { telemetry.ObserveFederatedHPA(err, start) }()
	status, events := c.compute(ctx, key, fhpa)
	status.ObservedGeneration = &fhpa.Generation
	c.events.reconcile(fhpa, events)
	return c.status.reconcile(ctx, fhpa, status)
}

// compute runs one sync and returns the status to write and the events.
func (c *Controller) compute(ctx context.Context, key string, fhpa *autoscalingv1alpha1.FederatedHPA) (autoscalingv2.HorizontalPodAutoscalerStatus, []podautoscaler.Event) {
	now := c.now()
	ref := fhpa.Spec.ScaleTargetRef
	gvr, sc, err := c.scale.reconcile(ctx, fhpa.Namespace, ref)
	if err != nil {
		status, e := podautoscaler.ScaleUnavailable(fhpa.Status, err, now)
		return status, []podautoscaler.Event{e}
	}
	selector, err := labels.Parse(sc.Status.Selector)
	if err != nil || sc.Status.Selector == "" {
		selector = nil // the algorithm reports the invalid selector
	}
	memberPods, missing := c.pods.reconcile(fhpa.Namespace, ref, selector)
	pods := make([]podautoscaler.Pod, len(memberPods))
	for i, p := range memberPods {
		pods[i] = podautoscalerPod(p.cluster, p.pod)
	}
	data, silent := c.metrics.reconcile(ctx, fhpa, selector, pods, missing)
	missing = append(missing, silent...)

	in := podautoscaler.Input{
		Namespace: fhpa.Namespace, Spec: fhpa.Spec, Status: fhpa.Status,
		CurrentReplicas: sc.Spec.Replicas, StatusReplicas: sc.Status.Replicas, Selector: sc.Status.Selector,
		Pods: pods, Metrics: data,
	}
	rec, h := c.recommend.reconcile(key, in, selector, memberPods, now)
	c.rescale.reconcile(ctx, fhpa.Namespace, gvr, ref.Name, &rec, h, now)
	status := rec.Status
	noteMissing(&status, missing)
	return status, rec.Events
}

// noteMissing says in the ScalingActive condition which members' pods or
// metrics were missing from the computation; the algorithm treated their
// pods as upstream treats pods without metrics.
func noteMissing(status *autoscalingv2.HorizontalPodAutoscalerStatus, missing []string) {
	if len(missing) == 0 {
		return
	}
	sort.Strings(missing)
	for i := range status.Conditions {
		if status.Conditions[i].Type == autoscalingv2.ScalingActive {
			status.Conditions[i].Message += fmt.Sprintf("; metrics of clusters %s are missing, computed on the other clusters", strings.Join(missing, ","))
		}
	}
}
