package main

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"
)

func testProvider(t *testing.T, now time.Time, pods ...*corev1.Pod) *podAnnotations {
	t.Helper()
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, p := range pods {
		if err := idx.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	return &podAnnotations{pods: corelisters.NewPodLister(idx), now: func() time.Time { return now }}
}

func pod(ns, name string, phase corev1.PodPhase, lbls, annotations map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: lbls, Annotations: annotations},
		Status: corev1.PodStatus{Phase: phase}}
}

func TestPodAnnotations(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	web := map[string]string{"app": "web"}
	deleting := pod("a", "web-deleting", corev1.PodRunning, web, map[string]string{AnnotationPrefix + "rps": "7"})
	deleting.DeletionTimestamp = &metav1.Time{Time: now}
	p := testProvider(t, now,
		pod("a", "web-1", corev1.PodRunning, web, map[string]string{AnnotationPrefix + "rps": "10", AnnotationPrefix + "queue": "500m"}),
		pod("a", "web-0", corev1.PodRunning, web, map[string]string{AnnotationPrefix + "rps": " 2.5 "}),
		pod("a", "web-pending", corev1.PodPending, web, map[string]string{AnnotationPrefix + "rps": "3"}),
		pod("a", "web-bad", corev1.PodRunning, web, map[string]string{AnnotationPrefix + "rps": "lots"}),
		deleting,
		pod("a", "db", corev1.PodRunning, map[string]string{"app": "db"}, map[string]string{AnnotationPrefix + "rps": "4"}),
		pod("b", "web-2", corev1.PodRunning, web, map[string]string{AnnotationPrefix + "rps": "1", "other.io/x": "1"}),
		pod("b", "plain", corev1.PodRunning, web, nil),
	)
	rps := provider.CustomMetricInfo{GroupResource: podsResource, Namespaced: true, Metric: "rps"}

	v, err := p.GetMetricByName(t.Context(), types.NamespacedName{Namespace: "a", Name: "web-1"}, rps, labels.Everything())
	if err != nil {
		t.Fatal(err)
	}
	if v.Value.String() != "10" || v.DescribedObject.Kind != "Pod" || v.DescribedObject.APIVersion != "v1" ||
		v.DescribedObject.Namespace != "a" || v.DescribedObject.Name != "web-1" || v.Metric.Name != "rps" ||
		!v.Timestamp.Time.Equal(now) || v.WindowSeconds == nil || *v.WindowSeconds != 60 {
		t.Errorf("web-1: %+v", v)
	}
	for _, name := range []string{"plain", "web-pending", "web-bad", "web-deleting", "absent"} {
		ns := "a"
		if name == "plain" {
			ns = "b"
		}
		if _, err := p.GetMetricByName(t.Context(), types.NamespacedName{Namespace: ns, Name: name}, rps, labels.Everything()); !apierrors.IsNotFound(err) {
			t.Errorf("%s: error %v, want NotFound", name, err)
		}
	}

	list, err := p.GetMetricBySelector(t.Context(), "a", labels.SelectorFromSet(web), rps, labels.Everything())
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 2 || list.Items[0].DescribedObject.Name != "web-0" || list.Items[0].Value.MilliValue() != 2500 ||
		list.Items[1].DescribedObject.Name != "web-1" || list.Items[1].Value.MilliValue() != 10000 {
		t.Errorf("a, app=web: %+v", list.Items)
	}
	all, err := p.GetMetricBySelector(t.Context(), "", labels.Everything(), rps, labels.Everything())
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Items) != 4 {
		t.Errorf("every namespace: %d values, want 4: %+v", len(all.Items), all.Items)
	}

	notFound := []struct {
		name     string
		ns       string
		info     provider.CustomMetricInfo
		selector labels.Selector
	}{
		{"no pod has the metric", "a", provider.CustomMetricInfo{GroupResource: podsResource, Namespaced: true, Metric: "latency"}, labels.Everything()},
		{"selected pods lack it", "b", provider.CustomMetricInfo{GroupResource: podsResource, Namespaced: true, Metric: "queue"}, labels.Everything()},
		{"selector matches no pod", "a", rps, labels.SelectorFromSet(map[string]string{"app": "none"})},
		{"services", "a", provider.CustomMetricInfo{GroupResource: schema.GroupResource{Resource: "services"}, Namespaced: true, Metric: "rps"}, labels.Everything()},
	}
	for _, tc := range notFound {
		if _, err := p.GetMetricBySelector(t.Context(), tc.ns, tc.selector, tc.info, labels.Everything()); !apierrors.IsNotFound(err) {
			t.Errorf("%s: error %v, want NotFound", tc.name, err)
		}
	}
	// Metrics have no labels.
	if _, err := p.GetMetricBySelector(t.Context(), "a", labels.Everything(), rps, labels.SelectorFromSet(map[string]string{"verb": "GET"})); !apierrors.IsNotFound(err) {
		t.Errorf("metric selector verb=GET: error %v, want NotFound", err)
	}

	got := p.ListAllMetrics()
	want := []provider.CustomMetricInfo{
		{GroupResource: podsResource, Namespaced: true, Metric: "queue"},
		{GroupResource: podsResource, Namespaced: true, Metric: "rps"},
	}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("ListAllMetrics %v, want %v", got, want)
	}
}
