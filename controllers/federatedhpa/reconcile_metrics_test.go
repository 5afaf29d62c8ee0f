package federatedhpa

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	"k8s.io/utils/ptr"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/apis/autoscaling/v1alpha1"
	"github.com/flotilla-io/flotilla/podautoscaler"
)

// countingMetrics counts the resource metrics lists of fakeMetrics.
type countingMetrics struct {
	*fakeMetrics
	lists int
}

func (m *countingMetrics) PodMetrics(ctx context.Context, namespace string, selector labels.Selector) (*metricsv1beta1.PodMetricsList, error) {
	m.lists++
	return m.fakeMetrics.PodMetrics(ctx, namespace, selector)
}

func TestMetricsReconciler(t *testing.T) {
	t.Parallel()
	memory := autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
		Name: corev1.ResourceMemory, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](50)}}}
	pods := []podautoscaler.Pod{{Cluster: "m1", Namespace: "default", Name: "m1-web"}, {Cluster: "m2", Namespace: "default", Name: "m2-web"}}
	sample := func(pod string, v int64) string { return fmt.Sprintf("%s=%d", pod, v) }
	tests := []struct {
		name    string
		metrics []autoscalingv2.MetricSpec // nil: fhpa()'s one cpu metric
		source  *fakeMetrics
		known   []string
		// want are the samples of each metric, cluster/pod=value, or its error.
		want       [][]string
		wantErrs   []string
		wantSilent []string
		wantLists  int
	}{
		{name: "every cluster sampled", source: &fakeMetrics{cpu: map[string]int64{"m1-web": 1, "m2-web": 2}},
			want: [][]string{{sample("m1/m1-web", 1), sample("m2/m2-web", 2)}}, wantErrs: []string{""}, wantLists: 1},
		{name: "a member silent: named", source: &fakeMetrics{cpu: map[string]int64{"m1-web": 1}},
			want: [][]string{{sample("m1/m1-web", 1)}}, wantErrs: []string{""}, wantSilent: []string{"m2"}, wantLists: 1},
		{name: "a member silent whose pods are already missing: not named twice", source: &fakeMetrics{cpu: map[string]int64{"m1-web": 1}},
			known: []string{"m2"}, want: [][]string{{sample("m1/m1-web", 1)}}, wantErrs: []string{""}, wantLists: 1},
		{name: "metrics API down: the error, no member named", source: &fakeMetrics{err: errors.New("down")},
			want: [][]string{nil}, wantErrs: []string{"down"}, wantLists: 1},
		{name: "two resource metrics: one list", metrics: []autoscalingv2.MetricSpec{fhpa().Spec.Metrics[0], memory},
			source: &fakeMetrics{cpu: map[string]int64{"m1-web": 1, "m2-web": 2}},
			want:   [][]string{{sample("m1/m1-web", 1), sample("m2/m2-web", 2)}, nil}, wantErrs: []string{"", ""}, wantLists: 1},
		{name: "no metric: nothing read", metrics: []autoscalingv2.MetricSpec{}, source: &fakeMetrics{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := fhpa(func(h *autoscalingv1alpha1.FederatedHPA) {
				if tc.metrics != nil {
					h.Spec.Metrics = tc.metrics
				}
			})
			source := &countingMetrics{fakeMetrics: tc.source}
			r := metricsReconciler{source: source}
			data, silent := r.reconcile(context.Background(), h, labels.SelectorFromSet(labels.Set{"app": "web"}), pods, tc.known)
			var got [][]string
			var errs []string
			for _, d := range data {
				var samples []string
				for k, v := range d.PodMetrics {
					samples = append(samples, sample(k.Cluster+"/"+k.Name, v.Value))
				}
				got = append(got, samples)
				if d.Err != nil {
					errs = append(errs, d.Err.Error())
				} else {
					errs = append(errs, "")
				}
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
				t.Errorf("samples (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantErrs, errs); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantSilent, silent); diff != "" {
				t.Errorf("silent members (-want +got):\n%s", diff)
			}
			if source.lists != tc.wantLists {
				t.Errorf("%d resource metrics lists, want %d", source.lists, tc.wantLists)
			}
		})
	}
}
