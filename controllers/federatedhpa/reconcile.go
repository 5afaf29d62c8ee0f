package federatedhpa

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/apis/autoscaling/v1alpha1"
	"github.com/flotilla-io/flotilla/controllers/federatedhpa/calculator"
	"github.com/flotilla-io/flotilla/controllers/internal/names"
	"github.com/flotilla-io/flotilla/member"
)

// reconcile computes one FederatedHPA: read the target's scale, its pods in
// every member it is placed on and their metrics, run the algorithm, scale
// if it says so, and write the status once. It runs again after SyncPeriod.
func (c *Controller) reconcile(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	fhpa, err := c.fhpas.FederatedHPAs(ns).Get(name)
	if apierrors.IsNotFound(err) {
		c.forget(key)
		return nil
	}
	if err != nil {
		return err
	}
	defer c.queue.AddAfter(key, c.opts.SyncPeriod)
	status, events := c.compute(ctx, fhpa)
	status.ObservedGeneration = &fhpa.Generation
	for _, e := range events {
		c.recorder.Event(fhpa, e.Type, e.Reason, e.Message)
	}
	return c.writeStatus(ctx, fhpa, status)
}

// compute runs one sync and returns the status to write and the events.
func (c *Controller) compute(ctx context.Context, fhpa *autoscalingv1alpha1.FederatedHPA) (autoscalingv2.HorizontalPodAutoscalerStatus, []calculator.Event) {
	key := fhpa.Namespace + "/" + fhpa.Name
	now := c.now()
	ref := fhpa.Spec.ScaleTargetRef
	gvr, sc, err := c.getScale(ctx, fhpa.Namespace, ref)
	if err != nil {
		status, e := calculator.ScaleUnavailable(fhpa.Status, err, now)
		return status, []calculator.Event{e}
	}
	clusters := c.targetClusters(fhpa.Namespace, ref)
	selector, err := labels.Parse(sc.Status.Selector)
	if err != nil || sc.Status.Selector == "" {
		selector = nil // the algorithm reports the invalid selector
	}
	memberPods, missing := c.pods(fhpa.Namespace, selector, clusters)
	pods := make([]calculator.Pod, len(memberPods))
	for i, p := range memberPods {
		pods[i] = calculatorPod(p.cluster, p.pod)
	}
	reader := &metricReader{source: c.metrics, namespace: fhpa.Namespace, selector: selector, pods: pods}
	data := make([]calculator.MetricData, len(fhpa.Spec.Metrics))
	for i, m := range fhpa.Spec.Metrics {
		data[i] = reader.read(ctx, m)
	}
	missing = append(missing, clustersWithoutSamples(pods, data, missing)...)

	// The workqueue hands a key to one worker at a time: the history is
	// this worker's; only the maps are shared.
	c.mu.Lock()
	h := c.histories[key]
	if h == nil {
		h = &calculator.History{}
		c.histories[key] = h
	}
	c.selectors[key] = selector
	selecting := c.autoscalersSelecting(fhpa.Namespace, memberPods)
	c.mu.Unlock()
	in := calculator.Input{
		Namespace: fhpa.Namespace, Spec: fhpa.Spec, Status: fhpa.Status,
		CurrentReplicas: sc.Spec.Replicas, StatusReplicas: sc.Status.Replicas, Selector: sc.Status.Selector,
		AutoscalersSelectingPods: selecting, Pods: pods, Metrics: data,
	}
	rec := c.opts.Algorithm.Recommend(in, h, now)
	if rec.Rescale {
		patch := fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, rec.DesiredReplicas)
		if _, err := c.scales.Scales(fhpa.Namespace).Patch(ctx, gvr, ref.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			rec.RescaleFailed(err, now)
		} else {
			rec.Rescaled(h, now)
		}
	}
	status := rec.Status
	noteMissing(&status, missing)
	return status, rec.Events
}

// getScale reads the template's scale subresource on the host.
func (c *Controller) getScale(ctx context.Context, namespace string, ref autoscalingv2.CrossVersionObjectReference) (schema.GroupVersionResource, *autoscalingv1.Scale, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return schema.GroupVersionResource{}, nil, err
	}
	mapping, err := c.mapper.RESTMapping(gv.WithKind(ref.Kind).GroupKind(), gv.Version)
	if err != nil {
		return schema.GroupVersionResource{}, nil, fmt.Errorf("unable to determine resource for scale target reference: %w", err)
	}
	gvr := mapping.Resource
	sc, err := c.scales.Scales(namespace).Get(ctx, gvr.GroupResource(), ref.Name, metav1.GetOptions{})
	if err != nil {
		return gvr, nil, fmt.Errorf("unable to get scale for target %s %s/%s: %w", ref.Kind, namespace, ref.Name, err)
	}
	return gvr, sc, nil
}

// targetClusters are the members the template's binding places it on.
func (c *Controller) targetClusters(namespace string, ref autoscalingv2.CrossVersionObjectReference) []string {
	rb, err := c.bindings.ResourceBindings(namespace).Get(names.BindingName(ref.Kind, ref.Name))
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(rb.Spec.Clusters))
	for _, t := range rb.Spec.Clusters {
		out = append(out, t.Name)
	}
	sort.Strings(out)
	return out
}

// memberPod is a pod of a member cluster.
type memberPod struct {
	cluster string
	pod     *member.Pod
}

// calculatorPod is what the algorithm reads of a member pod. The request
// maps are the hub's, shared and read-only.
func calculatorPod(cluster string, p *member.Pod) calculator.Pod {
	out := calculator.Pod{Cluster: cluster, Namespace: p.Namespace, Name: p.Name, Phase: p.Phase, Deleting: p.Deleting,
		Ready: p.Ready, ReadyTransition: p.ReadyTransition(), StartTime: p.StartTime(), PodRequests: p.PodLevelRequests()}
	for _, c := range p.Containers() {
		out.Containers = append(out.Containers, calculator.Container{Name: c.Name, Requests: c.Requests})
	}
	return out
}

// pods returns the pods selector matches in the target clusters, and the
// clusters whose pods are unknown (not Ready, or their informer not yet
// synced). A nil selector matches nothing.
func (c *Controller) pods(namespace string, selector labels.Selector, clusters []string) ([]memberPod, []string) {
	if selector == nil {
		return nil, nil
	}
	var out []memberPod
	var missing []string
	for _, name := range clusters {
		m, ok := c.members.Member(name)
		if !ok || !m.Synced {
			missing = append(missing, name)
			continue
		}
		pods, err := m.Pods(namespace, selector)
		if err != nil {
			missing = append(missing, name)
			continue
		}
		for _, p := range pods {
			out = append(out, memberPod{cluster: name, pod: p})
		}
	}
	return out, missing
}

// clustersWithoutSamples are the clusters (not already known missing)
// with pods of which no metric read has a sample: their member did not
// answer the metrics request.
func clustersWithoutSamples(pods []calculator.Pod, data []calculator.MetricData, known []string) []string {
	withPods, withSamples := map[string]bool{}, map[string]bool{}
	for _, p := range pods {
		withPods[p.Cluster] = true
	}
	read := false
	for _, d := range data {
		if d.PodMetrics == nil {
			continue
		}
		read = true
		for k := range d.PodMetrics {
			withSamples[k.Cluster] = true
		}
	}
	if !read {
		return nil
	}
	var out []string
	for c := range withPods {
		if !withSamples[c] && !slices.Contains(known, c) {
			out = append(out, c)
		}
	}
	sort.Strings(out)
	return out
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

// autoscalersSelecting lists the FederatedHPAs of namespace whose last
// selector matches one of pods; the caller holds c.mu.
func (c *Controller) autoscalersSelecting(namespace string, pods []memberPod) []string {
	var out []string
	for key, sel := range c.selectors {
		if ns, _, _ := cache.SplitMetaNamespaceKey(key); ns != namespace || sel == nil {
			continue
		}
		for _, p := range pods {
			if sel.Matches(labels.Set(p.pod.Labels())) {
				out = append(out, key)
				break
			}
		}
	}
	sort.Strings(out)
	return out
}

func (c *Controller) forget(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.histories, key)
	delete(c.selectors, key)
}

// writeStatus writes the status with one merge patch, none when unchanged.
func (c *Controller) writeStatus(ctx context.Context, fhpa *autoscalingv1alpha1.FederatedHPA, status autoscalingv2.HorizontalPodAutoscalerStatus) error {
	if apiequality.Semantic.DeepEqual(fhpa.Status, status) {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"status": status})
	if err != nil {
		return err
	}
	_, err = c.client.AutoscalingV1alpha1().FederatedHPAs(fhpa.Namespace).Patch(ctx, fhpa.Name, types.MergePatchType, patch,
		metav1.PatchOptions{FieldManager: FieldManager}, "status")
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
