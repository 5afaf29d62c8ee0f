package detector

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/telemetry"
	"github.com/flotilla-io/flotilla/telemetry/telemetrytest"
)

// A template's reconcile observes the policy match; applying a policy
// observes one attempt and its duration; taking a template from another
// policy counts one preemption. Not parallel: the metrics are the
// process's.
func TestReconcileTemplateObservesPolicies(t *testing.T) {
	success := map[string]string{"result": "success"}
	for _, tc := range []struct {
		name string
		// setup starts the harness and returns it ready for the reconcile
		// observed.
		setup func(t *testing.T) *harness
		// wantApplied and wantPreempted are the moves of the attempts and
		// of the preemptions.
		wantApplied, wantPreempted float64
	}{
		{name: "a policy selects the template", wantApplied: 1, setup: func(t *testing.T) *harness {
			return newHarness(t, []runtime.Object{templateObj("web", map[string]string{"app": "web"})}, testPP("pp", false, 0, "member1"))
		}},
		{name: "no policy selects the template", setup: func(t *testing.T) *harness {
			pp := testPP("pp", false, 0, "member1")
			pp.Spec.ResourceSelectors[0].Name = "other"
			return newHarness(t, []runtime.Object{templateObj("web", map[string]string{"app": "web"})}, pp)
		}},
		{name: "a higher policy preempts", wantApplied: 1, wantPreempted: 1, setup: func(t *testing.T) *harness {
			claimed := templateObj("web", map[string]string{"app": "web", policyv1alpha1.PropagationPolicyPermanentIDLabel: "low-id"})
			claimed.SetAnnotations(map[string]string{policyv1alpha1.PropagationPolicyNamespaceAnnotation: "default",
				policyv1alpha1.PropagationPolicyNameAnnotation: "low"})
			h := newHarness(t, []runtime.Object{claimed}, testPP("low", false, 1, "member1"))
			h.reconcile("web")
			if _, err := h.karmada.PolicyV1alpha1().PropagationPolicies("default").Create(h.ctx, testPP("high", false, 5, "member2"), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			h.poll("the policy lister", func() bool { _, err := h.c.pps.PropagationPolicies("default").Get("high"); return err == nil })
			return h
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := tc.setup(t)
			matched, _ := telemetrytest.Sample(t, telemetry.ResourceMatchPolicyDuration, nil)
			attempts, _ := telemetrytest.Sample(t, telemetry.PolicyApplyAttemptsTotal, success)
			applied, _ := telemetrytest.Sample(t, telemetry.ResourceApplyPolicyDuration, success)
			preempted, _ := telemetrytest.Sample(t, telemetry.PolicyPreemptionTotal, success)
			h.reconcile("web")
			for _, c := range []struct {
				metric       string
				labels       map[string]string
				before, want float64
			}{
				{telemetry.ResourceMatchPolicyDuration, nil, matched, 1},
				{telemetry.PolicyApplyAttemptsTotal, success, attempts, tc.wantApplied},
				{telemetry.ResourceApplyPolicyDuration, success, applied, tc.wantApplied},
				{telemetry.PolicyPreemptionTotal, success, preempted, tc.wantPreempted},
			} {
				if v, _ := telemetrytest.Sample(t, c.metric, c.labels); v-c.before != c.want {
					t.Errorf("%s%v moved by %v, want %v", c.metric, c.labels, v-c.before, c.want)
				}
			}
		})
	}
}
