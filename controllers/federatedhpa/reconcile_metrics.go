package federatedhpa

import (
	"context"
	"slices"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/apis/autoscaling/v1alpha1"
	"github.com/flotilla-io/flotilla/podautoscaler"
	"github.com/flotilla-io/flotilla/telemetry"
)

// metricsReconciler reads the data of a FederatedHPA's metrics through the
// control plane's metrics APIs.
type metricsReconciler struct {
	source MetricsSource
}

// reconcile returns the data of each spec.metrics entry, index by index,
// for the pods selector matches, and the clusters (not in known, those
// whose pods are already missing) with pods of which no metric has a
// sample: their member did not answer the metrics request.
func (r *metricsReconciler) reconcile(ctx context.Context, fhpa *autoscalingv1alpha1.FederatedHPA, selector labels.Selector,
	pods []podautoscaler.Pod, known []string) ([]podautoscaler.MetricData, []string) {
	reader := &metricReader{source: r.source, namespace: fhpa.Namespace, selector: selector, pods: pods}
	data := make([]podautoscaler.MetricData, len(fhpa.Spec.Metrics))
	for i, m := range fhpa.Spec.Metrics {
		start := time.Now()
		data[i] = reader.read(ctx, m)
		telemetry.ObserveFederatedHPAPullMetrics(data[i].Err, string(m.Type), start)
	}
	return data, clustersWithoutSamples(pods, data, known)
}

// clustersWithoutSamples are the clusters (not already known missing)
// with pods of which no metric read has a sample: their member did not
// answer the metrics request.
func clustersWithoutSamples(pods []podautoscaler.Pod, data []podautoscaler.MetricData, known []string) []string {
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
