package federatedhpa

import (
	"slices"
	"strings"
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/flotilla-io/flotilla/controllers/federatedhpa/calculator"
)

func TestClustersWithoutSamples(t *testing.T) {
	pods := []calculator.Pod{{Cluster: "m1", Name: "a"}, {Cluster: "m2", Name: "b"}, {Cluster: "m3", Name: "c"}}
	sample := func(clusters ...string) calculator.MetricData {
		d := calculator.MetricData{PodMetrics: calculator.PodMetrics{}}
		for _, c := range clusters {
			d.PodMetrics[calculator.PodKey{Cluster: c, Name: "x"}] = calculator.PodMetric{Value: 1}
		}
		return d
	}
	for _, tc := range []struct {
		name  string
		data  []calculator.MetricData
		known []string
		want  []string
	}{
		{"every cluster answered", []calculator.MetricData{sample("m1", "m2", "m3")}, nil, nil},
		{"one silent", []calculator.MetricData{sample("m1", "m3")}, nil, []string{"m2"}},
		{"already known missing", []calculator.MetricData{sample("m1")}, []string{"m3"}, []string{"m2"}},
		{"a sample in any metric counts", []calculator.MetricData{sample("m1"), sample("m2", "m3")}, nil, nil},
		{"no per-pod metric read", []calculator.MetricData{{Value: 3}}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := clustersWithoutSamples(pods, tc.data, tc.known); !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestNoteMissing(t *testing.T) {
	status := autoscalingv2.HorizontalPodAutoscalerStatus{Conditions: []autoscalingv2.HorizontalPodAutoscalerCondition{
		{Type: autoscalingv2.AbleToScale, Message: "able"},
		{Type: autoscalingv2.ScalingActive, Message: "the HPA was able to successfully calculate a replica count"},
	}}
	noteMissing(&status, nil)
	if status.Conditions[1].Message != "the HPA was able to successfully calculate a replica count" {
		t.Fatalf("message changed without missing clusters: %q", status.Conditions[1].Message)
	}
	noteMissing(&status, []string{"m3", "m2"})
	if got := status.Conditions[1].Message; !strings.HasSuffix(got, "; metrics of clusters m2,m3 are missing, computed on the other clusters") {
		t.Errorf("ScalingActive message %q does not name m2,m3", got)
	}
	if status.Conditions[0].Message != "able" {
		t.Errorf("AbleToScale changed: %q", status.Conditions[0].Message)
	}
}

func TestAutoscalersSelecting(t *testing.T) {
	web, db := labels.SelectorFromSet(labels.Set{"app": "web"}), labels.SelectorFromSet(labels.Set{"app": "db"})
	c := &Controller{selectors: map[string]labels.Selector{
		"ns/web": web, "ns/web-too": web, "ns/db": db, "other/web": web, "ns/no-selector": nil,
	}}
	pods := []memberPod{
		{cluster: "m1", pod: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"app": "web"}}}},
		{cluster: "m2", pod: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"app": "web", "tier": "x"}}}},
	}
	if got, want := c.autoscalersSelecting("ns", pods), []string{"ns/web", "ns/web-too"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if got := c.autoscalersSelecting("ns", nil); len(got) != 0 {
		t.Errorf("no pods: got %v", got)
	}
}
