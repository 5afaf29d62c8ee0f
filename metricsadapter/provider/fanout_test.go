package provider

import (
	"context"
	"errors"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/metrics/pkg/apis/custom_metrics"
)

func TestGatherBoundsEachMember(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	start := time.Now()
	answers := gather(context.Background(), []string{"fast", "failing", "stuck"}, 200*time.Millisecond,
		func(ctx context.Context, cluster string) (int, error) {
			switch cluster {
			case "fast":
				return 1, nil
			case "failing":
				return 0, errors.New("refused")
			}
			<-release // ignores its context, like the custom metrics client
			return 2, nil
		})
	if took := time.Since(start); took > time.Second {
		t.Errorf("gather took %s, want about the 200ms timeout", took)
	}
	if answers[0].cluster != "fast" || answers[0].err != nil || answers[0].value != 1 {
		t.Errorf("fast: %+v", answers[0])
	}
	if answers[1].err == nil || answers[1].err.Error() != "refused" {
		t.Errorf("failing: %+v", answers[1])
	}
	if answers[2].err == nil {
		t.Errorf("stuck: %+v, want a timeout error", answers[2])
	}
}

func TestAddSumsValues(t *testing.T) {
	w10, w30 := int64(10), int64(30)
	t1, t2 := metav1.NewTime(time.Unix(100, 0)), metav1.NewTime(time.Unix(200, 0))
	for _, tc := range []struct {
		name       string
		values     []custom_metrics.MetricValue
		want       string
		wantTime   metav1.Time
		wantWindow int64
	}{
		{"one value", []custom_metrics.MetricValue{{Value: resource.MustParse("5"), Timestamp: t1, WindowSeconds: &w10}}, "5", t1, 10},
		{"two members", []custom_metrics.MetricValue{
			{Value: resource.MustParse("5"), Timestamp: t2, WindowSeconds: &w10},
			{Value: resource.MustParse("250m"), Timestamp: t1, WindowSeconds: &w30},
		}, "5250m", t2, 30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sum *custom_metrics.MetricValue
			for i := range tc.values {
				sum = add(sum, &tc.values[i])
			}
			if sum.Value.String() != tc.want || !sum.Timestamp.Equal(&tc.wantTime) || *sum.WindowSeconds != tc.wantWindow {
				t.Errorf("sum %s at %v window %d, want %s at %v window %d", sum.Value.String(), sum.Timestamp, *sum.WindowSeconds, tc.want, tc.wantTime, tc.wantWindow)
			}
		})
	}
}
