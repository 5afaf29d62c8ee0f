package federatedhpa

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/flotilla-io/flotilla/member"
	"github.com/flotilla-io/flotilla/podautoscaler"
)

func TestRecommendReconciler(t *testing.T) {
	t.Parallel()
	web := labels.SelectorFromSet(labels.Set{"app": "web"})
	db := labels.SelectorFromSet(labels.Set{"app": "db"})
	pods := []memberPod{{cluster: "m1", pod: member.NewPod(webPod("m1-web"))}}
	kept := &podautoscaler.History{}
	tests := []struct {
		name string
		// selectors and history are the memory before the sync.
		selectors map[string]labels.Selector
		history   *podautoscaler.History
		// wantAmbiguous is the AmbiguousSelector event's message, "" for none.
		wantAmbiguous string
	}{
		{name: "alone: computed"},
		{name: "another selects the pods: AmbiguousSelector", selectors: map[string]labels.Selector{"default/other": web},
			wantAmbiguous: "pods by selector app=web are controlled by multiple HPAs: [default/other default/web]"},
		{name: "another selects other pods", selectors: map[string]labels.Selector{"default/other": db}},
		{name: "another namespace's", selectors: map[string]labels.Selector{"other/web": web}},
		{name: "the history kept", history: kept},
		{name: "its own old selector replaced", selectors: map[string]labels.Selector{"default/web": db}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRecommendReconciler(podautoscaler.DefaultConfig())
			for k, s := range tc.selectors {
				r.selectors[k] = s
			}
			if tc.history != nil {
				r.histories["default/web"] = tc.history
			}
			h := fhpa()
			in := podautoscaler.Input{Namespace: "default", Spec: h.Spec, CurrentReplicas: 2, StatusReplicas: 2, Selector: web.String(),
				Pods: []podautoscaler.Pod{podautoscalerPod("m1", pods[0].pod)}, Metrics: make([]podautoscaler.MetricData, len(h.Spec.Metrics))}
			rec, history := r.reconcile("default/web", in, web, pods, fixedNow)
			var ambiguous []string
			for _, e := range rec.Events {
				if e.Reason == podautoscaler.ReasonAmbiguousSelector {
					if e.Type != corev1.EventTypeWarning {
						t.Errorf("AmbiguousSelector event of type %s", e.Type)
					}
					ambiguous = append(ambiguous, e.Message)
				}
			}
			if got := strings.Join(ambiguous, "|"); got != tc.wantAmbiguous {
				t.Errorf("AmbiguousSelector events %q, want %q", got, tc.wantAmbiguous)
			}
			if history == nil || r.histories["default/web"] != history {
				t.Errorf("history %p not the one kept (%p)", history, r.histories["default/web"])
			}
			if tc.history != nil && history != tc.history {
				t.Error("a new history replaced the one kept")
			}
			if s := r.selectors["default/web"]; s == nil || s.String() != web.String() {
				t.Errorf("selector remembered %v, want %v", s, web)
			}
			wantSelectors := len(tc.selectors)
			if _, own := tc.selectors["default/web"]; !own {
				wantSelectors++
			}
			if len(r.selectors) != wantSelectors {
				t.Errorf("selectors %v: others changed", r.selectors)
			}

			r.forget("default/web")
			if _, ok := r.histories["default/web"]; ok {
				t.Error("history kept after forget")
			}
			if _, ok := r.selectors["default/web"]; ok {
				t.Error("selector kept after forget")
			}
		})
	}
}
