package federatedhpa

import (
	"slices"
	"strings"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/flotilla-io/flotilla/member"
	"github.com/flotilla-io/flotilla/podautoscaler"
)

func TestClustersWithoutSamples(t *testing.T) {
	pods := []podautoscaler.Pod{{Cluster: "m1", Name: "a"}, {Cluster: "m2", Name: "b"}, {Cluster: "m3", Name: "c"}}
	sample := func(clusters ...string) podautoscaler.MetricData {
		d := podautoscaler.MetricData{PodMetrics: podautoscaler.PodMetrics{}}
		for _, c := range clusters {
			d.PodMetrics[podautoscaler.PodKey{Cluster: c, Name: "x"}] = podautoscaler.PodMetric{Value: 1}
		}
		return d
	}
	for _, tc := range []struct {
		name  string
		data  []podautoscaler.MetricData
		known []string
		want  []string
	}{
		{"every cluster answered", []podautoscaler.MetricData{sample("m1", "m2", "m3")}, nil, nil},
		{"one silent", []podautoscaler.MetricData{sample("m1", "m3")}, nil, []string{"m2"}},
		{"already known missing", []podautoscaler.MetricData{sample("m1")}, []string{"m3"}, []string{"m2"}},
		{"a sample in any metric counts", []podautoscaler.MetricData{sample("m1"), sample("m2", "m3")}, nil, nil},
		{"no per-pod metric read", []podautoscaler.MetricData{{Value: 3}}, nil, nil},
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
	c := &recommendReconciler{selectors: map[string]labels.Selector{
		"ns/web": web, "ns/web-too": web, "ns/db": db, "other/web": web, "ns/no-selector": nil,
	}}
	pods := []memberPod{
		{cluster: "m1", pod: member.NewPod(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"app": "web"}}})},
		{cluster: "m2", pod: member.NewPod(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"app": "web", "tier": "x"}}})},
	}
	if got, want := c.autoscalersSelecting("ns", pods), []string{"ns/web", "ns/web-too"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if got := c.autoscalersSelecting("ns", nil); len(got) != 0 {
		t.Errorf("no pods: got %v", got)
	}
}

// The algorithm reads a pod the hub keeps as it reads the pod itself.
func TestCalculatorPodFromTheHub(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	started := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	req := func(cpu, mem string) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}}
	}
	for name, p := range map[string]*corev1.Pod{
		"containers and a sidecar": {ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", Labels: map[string]string{"app": "web"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Resources: req("250m", "64Mi")}, {Name: "log", Resources: req("50m", "16Mi")}},
				InitContainers: []corev1.Container{{Name: "init", Resources: req("1", "1Gi")}, {Name: "proxy", RestartPolicy: &always, Resources: req("100m", "32Mi")}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &started,
				Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: started}}}},
		"pod-level requests, deleting": {ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b", DeletionTimestamp: &started},
			Spec:   corev1.PodSpec{Resources: &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}, Containers: []corev1.Container{{Name: "app"}}},
			Status: corev1.PodStatus{Phase: corev1.PodPending}},
	} {
		t.Run(name, func(t *testing.T) {
			want := podautoscaler.NewPod("m1", p)
			if diff := cmp.Diff(want, podautoscalerPod("m1", member.NewPod(p)), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("(-from the pod +from the hub):\n%s", diff)
			}
		})
	}
}
