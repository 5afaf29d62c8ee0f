package hpascaletargetmarker

import (
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	retainLabel = "resourcetemplate.karmada.io/retain-replicas"
	ppIDLabel   = "propagationpolicy.karmada.io/permanent-id"
)

func ref(name string) autoscalingv2.CrossVersionObjectReference {
	return autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: name}
}

func newHPA(name, target string, claimed bool) *autoscalingv2.HorizontalPodAutoscaler {
	hpa := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec:       autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: ref(target), MaxReplicas: 5},
	}
	if claimed {
		hpa.Labels = map[string]string{ppIDLabel: "5f1e0c2a"}
	}
	return hpa
}

func TestLabelPatch(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		action action
		labels map[string]string
		want   string
	}{
		{"mark unlabelled", mark, nil, `{"metadata":{"labels":{"` + retainLabel + `":"true"}}}`},
		{"mark keeps other labels out of the patch", mark, map[string]string{"app": "web"}, `{"metadata":{"labels":{"` + retainLabel + `":"true"}}}`},
		{"mark already marked", mark, map[string]string{retainLabel: "true"}, ""},
		{"mark corrects another value", mark, map[string]string{retainLabel: "false"}, `{"metadata":{"labels":{"` + retainLabel + `":"true"}}}`},
		{"unmark marked", unmark, map[string]string{retainLabel: "true", "app": "web"}, `{"metadata":{"labels":{"` + retainLabel + `":null}}}`},
		{"unmark any value", unmark, map[string]string{retainLabel: "false"}, `{"metadata":{"labels":{"` + retainLabel + `":null}}}`},
		{"unmark unlabelled", unmark, map[string]string{"app": "web"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := string(labelPatch(tc.action, tc.labels)); got != tc.want {
				t.Errorf("patch %s, want %s", got, tc.want)
			}
		})
	}
}

func TestStale(t *testing.T) {
	t.Parallel()
	deleting := newHPA("deleting", "web", true)
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	for _, tc := range []struct {
		name   string
		action action
		hpas   []*autoscalingv2.HorizontalPodAutoscaler
		want   bool
	}{
		{"mark while a propagated HPA scales it", mark, []*autoscalingv2.HorizontalPodAutoscaler{newHPA("h", "web", true)}, false},
		{"mark after the HPA is gone", mark, nil, true},
		{"mark for an unpropagated HPA", mark, []*autoscalingv2.HorizontalPodAutoscaler{newHPA("h", "web", false)}, true},
		{"mark after the HPA moved to another target", mark, []*autoscalingv2.HorizontalPodAutoscaler{newHPA("h", "api", true)}, true},
		{"mark while the HPA is being deleted", mark, []*autoscalingv2.HorizontalPodAutoscaler{deleting}, true},
		{"unmark after the HPA is gone", unmark, nil, false},
		{"unmark while only an unpropagated HPA scales it", unmark, []*autoscalingv2.HorizontalPodAutoscaler{newHPA("h", "web", false)}, false},
		{"unmark while another propagated HPA scales it", unmark, []*autoscalingv2.HorizontalPodAutoscaler{newHPA("other", "web", true)}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := stale(tc.action, scaledBy(tc.hpas, ref("web"))); got != tc.want {
				t.Errorf("stale %v, want %v", got, tc.want)
			}
		})
	}
}

func TestKeys(t *testing.T) {
	t.Parallel()
	r := autoscalingv2.CrossVersionObjectReference{APIVersion: "example.io/v1beta1", Kind: "Widget", Name: "w.1"}
	got, err := parseKey(targetKey(unmark, "team-a", r))
	if err != nil {
		t.Fatal(err)
	}
	if want := (target{action: unmark, namespace: "team-a", ref: r}); got != want {
		t.Errorf("parsed %+v, want %+v", got, want)
	}
	for _, bad := range []string{"", "mark|ns|v1|Kind", "relabel|ns|apps/v1|Deployment|web"} {
		if _, err := parseKey(bad); err == nil {
			t.Errorf("key %q accepted", bad)
		}
	}
}
