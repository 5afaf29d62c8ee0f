package podautoscaler

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/apis/autoscaling/v1alpha1"
)

// TestHistoryAcrossSyncs runs successive syncs of one FederatedHPA sharing
// a History: the scale-up policy counts earlier scale-ups, and the
// scale-down window holds earlier recommendations.
func TestHistoryAcrossSyncs(t *testing.T) {
	t.Parallel()
	// An Object metric with an AverageValue target of 1 proposes exactly
	// its value (in units) as replicas.
	spec := autoscalingv1alpha1.FederatedHPASpec{
		MinReplicas: ptr.To[int32](1), MaxReplicas: 100,
		Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricSource{
			DescribedObject: autoscalingv2.CrossVersionObjectReference{Kind: "Queue", Name: "jobs"},
			Metric:          autoscalingv2.MetricIdentifier{Name: "depth"},
			Target:          autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("1"))}}}},
		// +4 pods per minute up; scale-down: the config's 5-minute window,
		// -100% per 15s.
		Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: rules(4, 60, 0, 0, 0)},
	}
	h := &History{}
	current := int32(3)
	status := autoscalingv2.HorizontalPodAutoscalerStatus{}
	steps := []struct {
		at          time.Duration
		proposal    int64
		want        int32
		wantLimited string
		wantAble    string
	}{
		// The initial recommendation (3) does not hold a scale-up.
		{at: 0, proposal: 5, want: 5, wantLimited: ReasonDesiredWithinRange, wantAble: ReasonReadyForNewScale},
		// 3 replicas a minute ago, +4: 7.
		{at: 30 * time.Second, proposal: 20, want: 7, wantLimited: ReasonScaleUpLimit, wantAble: ReasonReadyForNewScale},
		// Still 3 a minute ago: no room left.
		{at: 45 * time.Second, proposal: 20, want: 7, wantLimited: ReasonScaleUpLimit, wantAble: ReasonReadyForNewScale},
		// The first scale-up is over a minute old: 5 + 4.
		{at: 61 * time.Second, proposal: 20, want: 9, wantLimited: ReasonScaleUpLimit, wantAble: ReasonReadyForNewScale},
		// Recommendations of 20 within the last 5 minutes hold the count.
		{at: 2 * time.Minute, proposal: 2, want: 9, wantLimited: ReasonDesiredWithinRange, wantAble: ReasonScaleDownStabilized},
		// Only the 2 of the previous step is left in the window.
		{at: 7*time.Minute + time.Second, proposal: 2, want: 2, wantLimited: ReasonDesiredWithinRange, wantAble: ReasonReadyForNewScale},
	}
	for i, step := range steps {
		now := testNow.Add(step.at)
		in := Input{
			Namespace: "ns", Spec: spec, Status: status, CurrentReplicas: current, StatusReplicas: current,
			Selector: "app=worker", Pods: podSet{n: int(current)}.build(),
			Metrics: []MetricData{{Value: step.proposal * 1000, Timestamp: now}},
		}
		rec := testingConfig().Recommend(in, h, now)
		if rec.DesiredReplicas != step.want {
			t.Fatalf("step %d: desired %d, want %d", i, rec.DesiredReplicas, step.want)
		}
		// Upstream names an Object AverageValue metric "external metric".
		if rec.Metric != "external metric depth(nil)" || !rec.MetricTimestamp.Equal(now) {
			t.Errorf("step %d: metric %q at %v", i, rec.Metric, rec.MetricTimestamp)
		}
		able := rec.Status.Conditions[conditionIndex(rec.Status.Conditions, autoscalingv2.AbleToScale)].Reason
		limited := rec.Status.Conditions[conditionIndex(rec.Status.Conditions, autoscalingv2.ScalingLimited)].Reason
		if able != step.wantAble || limited != step.wantLimited {
			t.Errorf("step %d: AbleToScale %s, ScalingLimited %s; want %s, %s", i, able, limited, step.wantAble, step.wantLimited)
		}
		if rec.Rescale {
			rec.Rescaled(h, now)
			current = rec.DesiredReplicas
		}
		status = rec.Status
	}
}

func TestRecommendEdgeCases(t *testing.T) {
	t.Parallel()
	base := func() Input {
		pods, samples := cpuPods([]int64{300, 500, 700}, []int64{1000, 1000, 1000})
		return Input{
			Namespace:       "ns",
			Spec:            autoscalingv1alpha1.FederatedHPASpec{MaxReplicas: 10, Metrics: []autoscalingv2.MetricSpec{cpuUtilization(30)}},
			CurrentReplicas: 3, StatusReplicas: 3, Selector: "app=web", Pods: pods,
			Metrics: []MetricData{{PodMetrics: samples}},
		}
	}

	t.Run("minReplicas defaults to 1", func(t *testing.T) {
		t.Parallel()
		in := base()
		in.Spec.Metrics = []autoscalingv2.MetricSpec{cpuUtilization(100)}
		pods, samples := cpuPods([]int64{10, 10, 10}, []int64{1000, 1000, 1000})
		in.Pods, in.Metrics = pods, []MetricData{{PodMetrics: samples}}
		rec := testingConfig().Recommend(in, &History{recommendations: []timestampedRecommendation{}}, testNow)
		if rec.DesiredReplicas != 1 {
			t.Errorf("desired = %d, want 1", rec.DesiredReplicas)
		}
	})

	t.Run("no metrics does not scale", func(t *testing.T) {
		t.Parallel()
		in := base()
		in.Spec.Metrics = nil
		in.Status.DesiredReplicas = 3
		rec := testingConfig().Recommend(in, &History{}, testNow)
		if rec.Rescale || rec.DesiredReplicas != 3 || rec.Err == nil || rec.Err.Error() != "no metrics to compute the replica count from" {
			t.Errorf("got rescale %v to %d, error %v", rec.Rescale, rec.DesiredReplicas, rec.Err)
		}
		checkConditions(t, rec.Status.Conditions, []cond{gotScale})
	})

	t.Run("a metric without data fails", func(t *testing.T) {
		t.Parallel()
		in := base()
		in.Metrics = nil
		rec := testingConfig().Recommend(in, &History{}, testNow)
		want := "invalid metrics (1 invalid out of 1), first error is: failed to get cpu resource metric value: " +
			"failed to get cpu utilization: unable to get metrics for resource cpu: no data was read for this metric"
		if rec.Rescale || rec.Err == nil || rec.Err.Error() != want {
			t.Errorf("got rescale %v, error %v", rec.Rescale, rec.Err)
		}
	})

	t.Run("the input is not modified", func(t *testing.T) {
		t.Parallel()
		in := base()
		in.Status.Conditions = []autoscalingv2.HorizontalPodAutoscalerCondition{{Type: autoscalingv2.AbleToScale, Status: F, Reason: ReasonFailedGetScale}}
		before := *in.Status.DeepCopy()
		samples := len(in.Metrics[0].PodMetrics)
		rec := testingConfig().Recommend(in, &History{}, testNow)
		rec.Rescaled(&History{}, testNow)
		if diff := cmp.Diff(before, in.Status); diff != "" || len(in.Metrics[0].PodMetrics) != samples {
			t.Errorf("the input status changed (-before +after):\n%s", diff)
		}
	})
}

// TestRescaleOutcome follows a recommendation through a successful and a
// failed scale update.
func TestRescaleOutcome(t *testing.T) {
	t.Parallel()
	lastScale := metav1.NewTime(testNow.Add(-time.Hour))
	earlier := metav1.NewTime(testNow.Add(-time.Hour))
	newInput := func() Input {
		pods, samples := cpuPods([]int64{300, 500, 700}, []int64{1000, 1000, 1000})
		return Input{
			Namespace: "test-namespace",
			Spec: autoscalingv1alphaSpec(2, 6, []autoscalingv2.MetricSpec{cpuUtilization(30)},
				&autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: rules(4, 60, 0, 0, 0)}),
			Status: autoscalingv2.HorizontalPodAutoscalerStatus{
				CurrentReplicas: 3, DesiredReplicas: 3, LastScaleTime: &lastScale,
				Conditions: []autoscalingv2.HorizontalPodAutoscalerCondition{
					{Type: autoscalingv2.AbleToScale, Status: T, Reason: ReasonReadyForNewScale, LastTransitionTime: earlier},
					{Type: autoscalingv2.ScaledToZero, Status: F, Reason: "NotScaledToZero", LastTransitionTime: earlier},
					{Type: autoscalingv2.ScalingActive, Status: F, Reason: ReasonInvalidSelector, LastTransitionTime: earlier},
				},
			},
			CurrentReplicas: 3, StatusReplicas: 3, Selector: "app=web",
			Pods: pods, Metrics: []MetricData{{PodMetrics: samples}},
		}
	}

	t.Run("succeeded", func(t *testing.T) {
		t.Parallel()
		h := &History{}
		rec := testingConfig().Recommend(newInput(), h, testNow)
		if !rec.Rescale || rec.DesiredReplicas != 5 {
			t.Fatalf("got rescale %v to %d, want a rescale to 5", rec.Rescale, rec.DesiredReplicas)
		}
		e := rec.Rescaled(h, testNow)
		want := Event{Type: corev1.EventTypeNormal, Reason: ReasonSuccessfulRescale,
			Message: "New size: 5; reason: cpu resource utilization (percentage of request) above target"}
		if e != want || rec.Events[len(rec.Events)-1] != want {
			t.Errorf("event = %+v, want %+v", e, want)
		}
		if rec.Status.DesiredReplicas != 5 || rec.Status.CurrentReplicas != 3 || !rec.Status.LastScaleTime.Time.Equal(testNow) {
			t.Errorf("status replicas %d -> %d, last scale %v", rec.Status.CurrentReplicas, rec.Status.DesiredReplicas, rec.Status.LastScaleTime)
		}
		// AbleToScale stayed true: its transition time is kept. ScalingActive
		// turned true now. ScaledToZero is dropped (HPAScaleToZero is off).
		wantConditions := []autoscalingv2.HorizontalPodAutoscalerCondition{
			{Type: autoscalingv2.AbleToScale, Status: T, Reason: ReasonSucceededRescale, LastTransitionTime: earlier,
				Message: "the HPA controller was able to update the target scale to 5"},
			{Type: autoscalingv2.ScalingActive, Status: T, Reason: ReasonValidMetricFound, LastTransitionTime: metav1.NewTime(testNow),
				Message: "the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)"},
			{Type: autoscalingv2.ScalingLimited, Status: F, Reason: ReasonDesiredWithinRange, LastTransitionTime: metav1.NewTime(testNow),
				Message: "the desired count is within the acceptable range"},
		}
		if diff := cmp.Diff(wantConditions, rec.Status.Conditions); diff != "" {
			t.Errorf("conditions (-want +got):\n%s", diff)
		}
		if len(h.scaleUpEvents) != 1 || h.scaleUpEvents[0].replicaChange != 2 {
			t.Errorf("scale-up events = %+v, want one of +2", h.scaleUpEvents)
		}
	})

	t.Run("failed", func(t *testing.T) {
		t.Parallel()
		h := &History{}
		rec := testingConfig().Recommend(newInput(), h, testNow)
		e := rec.RescaleFailed(errors.New("conflict"), testNow)
		want := Event{Type: corev1.EventTypeWarning, Reason: ReasonFailedRescale,
			Message: "New size: 5; reason: cpu resource utilization (percentage of request) above target; error: conflict"}
		if e != want {
			t.Errorf("event = %+v, want %+v", e, want)
		}
		if rec.Status.DesiredReplicas != 3 || !rec.Status.LastScaleTime.Equal(&lastScale) {
			t.Errorf("status desired %d, last scale %v: want the previous ones", rec.Status.DesiredReplicas, rec.Status.LastScaleTime)
		}
		checkConditions(t, rec.Status.Conditions, []cond{
			{Type: autoscalingv2.AbleToScale, Status: F, Reason: ReasonFailedUpdateScale, Message: "the HPA controller was unable to update the target scale: conflict"},
			{Type: autoscalingv2.ScaledToZero, Status: F, Reason: "NotScaledToZero"},
			validMetric, withinRange,
		})
		if len(h.scaleUpEvents) != 0 {
			t.Errorf("a failed rescale was recorded: %+v", h.scaleUpEvents)
		}
	})
}

func autoscalingv1alphaSpec(minReplicas, maxReplicas int32, metrics []autoscalingv2.MetricSpec, behavior *autoscalingv2.HorizontalPodAutoscalerBehavior) autoscalingv1alpha1.FederatedHPASpec {
	return autoscalingv1alpha1.FederatedHPASpec{MinReplicas: ptr.To(minReplicas), MaxReplicas: maxReplicas, Metrics: metrics, Behavior: behavior}
}

func TestScaleUnavailable(t *testing.T) {
	t.Parallel()
	status := autoscalingv2.HorizontalPodAutoscalerStatus{CurrentReplicas: 4, DesiredReplicas: 4}
	got, e := ScaleUnavailable(status, errors.New("no binding"), testNow)
	want := autoscalingv2.HorizontalPodAutoscalerStatus{CurrentReplicas: 4, DesiredReplicas: 4,
		Conditions: []autoscalingv2.HorizontalPodAutoscalerCondition{{Type: autoscalingv2.AbleToScale, Status: F, Reason: ReasonFailedGetScale,
			Message: "the HPA controller was unable to get the target's current scale: no binding", LastTransitionTime: metav1.NewTime(testNow)}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
	if e != (Event{Type: corev1.EventTypeWarning, Reason: ReasonFailedGetScale, Message: "no binding"}) {
		t.Errorf("event = %+v", e)
	}
	if len(status.Conditions) != 0 {
		t.Errorf("the input status was modified")
	}
}
