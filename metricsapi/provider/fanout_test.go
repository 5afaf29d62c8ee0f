package provider

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/component-base/metrics/testutil"
	"k8s.io/metrics/pkg/apis/custom_metrics"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/apis/autoscaling/v1alpha1"
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
	for _, c := range []struct{ cluster, result string }{{"fast", "success"}, {"failing", "error"}} {
		if n, err := testutil.GetHistogramMetricCount(memberDuration.WithLabelValues(c.cluster, c.result)); err != nil || n != 1 {
			t.Errorf("member_request_duration_seconds{%s,%s} count %d (%v), want 1", c.cluster, c.result, n, err)
		}
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

func TestMergeAndFirstFound(t *testing.T) {
	type item struct{ meta metav1.ObjectMeta }
	convert := func(in *string, out *item, _ conversion.Scope) error { out.meta.Name = *in; return nil }
	meta := func(i *item) *metav1.ObjectMeta { return &i.meta }
	ctx := context.Background()

	items, err := mergeItems(ctx, []answer[[]string]{
		{cluster: "m1", value: []string{"a", "b"}}, {cluster: "m2", err: errors.New("timeout")}, {cluster: "m3", value: []string{"c"}},
	}, convert, meta)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, i := range items {
		got = append(got, i.meta.Name+"@"+i.meta.Annotations[autoscalingv1alpha1.QuerySourceAnnotationKey])
	}
	if strings.Join(got, ",") != "a@m1,b@m1,c@m3" {
		t.Errorf("merged %v", got)
	}
	if _, err := mergeItems(ctx, []answer[[]string]{{cluster: "m1", err: errors.New("down")}}, convert, meta); !apierrors.IsServiceUnavailable(err) {
		t.Errorf("every member failed: err %v, want ServiceUnavailable", err)
	}
	if items, err := mergeItems(ctx, nil, convert, meta); err != nil || len(items) != 0 {
		t.Errorf("no member asked: %v %v, want an empty list", items, err)
	}

	notFound := apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, "x")
	b := "b"
	found, err := firstFound(ctx, []answer[*string]{{cluster: "m1", err: notFound}, {cluster: "m2", value: &b}}, convert, meta)
	if err != nil || found == nil || found.meta.Name != "b" || found.meta.Annotations[autoscalingv1alpha1.QuerySourceAnnotationKey] != "m2" {
		t.Errorf("firstFound = %+v, %v; want b from m2", found, err)
	}
	if found, err := firstFound(ctx, []answer[*string]{{cluster: "m1", err: notFound}}, convert, meta); found != nil || err != nil {
		t.Errorf("nowhere: %+v %v, want nil, nil", found, err)
	}
}
