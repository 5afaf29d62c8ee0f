package detector

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/controllers/internal/worker/workertest"
)

// writes are the writes to the host's templates and to Flotilla's API, as
// "verb resource namespace/name", sorted; reads (the informers' lists and
// watches) are left out.
func (h *harness) writes() []string {
	return workertest.Writes(append(h.dyn.Actions(), h.karmada.Actions()...))
}

func (h *harness) clearActions() {
	h.dyn.ClearActions()
	h.karmada.ClearActions()
	h.drainEvents()
}

// webBinding is a binding called web-deployment of the template kind/name,
// placed on member1.
func webBinding(kind, name string) *workv1alpha2.ResourceBinding {
	return &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-deployment",
		Labels: map[string]string{policyv1alpha1.PropagationPolicyPermanentIDLabel: "pp-id"}},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource:  workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: kind, Namespace: "default", Name: name},
			Placement: &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}},
		}}
}

// TestReconcileTemplate is the detector's reconcile table: templates and
// policies in; the claim on the template, the binding written and
// Karmada's events out; a second reconcile of what was written does
// nothing.
func TestReconcileTemplate(t *testing.T) {
	t.Parallel()
	const applied = "Normal ApplyPolicySucceed Apply policy(default/pp) succeed"
	claimedWeb := func() *runtime.Object {
		u := templateObj("web", map[string]string{"app": "web", policyv1alpha1.PropagationPolicyPermanentIDLabel: "pp-id"})
		u.SetAnnotations(map[string]string{policyv1alpha1.PropagationPolicyNamespaceAnnotation: "default",
			policyv1alpha1.PropagationPolicyNameAnnotation: "pp"})
		var o runtime.Object = u
		return &o
	}
	tests := []struct {
		name       string
		templates  []runtime.Object
		karmada    []runtime.Object
		wantWrites []string
		wantEvents []string
		// wantPlaced are the clusters of the binding afterwards (nil: no binding).
		wantPlaced []string
	}{
		{
			name:       "a policy selects the template: claimed, bound",
			templates:  []runtime.Object{templateObj("web", map[string]string{"app": "web"})},
			karmada:    []runtime.Object{testPP("pp", false, 0, "member1")},
			wantWrites: []string{"create resourcebindings default/web-deployment", "patch deployments default/web"},
			wantEvents: []string{applied},
			wantPlaced: []string{"member1"},
		},
		{
			name:      "no policy selects the template: nothing",
			templates: []runtime.Object{templateObj("web", map[string]string{"app": "web"})},
			karmada: []runtime.Object{func() runtime.Object {
				pp := testPP("pp", false, 0, "member1")
				pp.Spec.ResourceSelectors[0].Name = "other"
				return pp
			}()},
		},
		{
			// The control plane's copies of exported EndpointSlices are
			// claimed so: a policy selecting EndpointSlices leaves them.
			name:      "claimed by another system: left alone, though a policy selects it",
			templates: []runtime.Object{templateObj("web", map[string]string{"app": "web", workv1alpha2.ResourceTemplateClaimedByLabel: "ServiceExport"})},
			karmada:   []runtime.Object{testPP("pp", false, 0, "member1")},
		},
		{
			name:       "claimed by a policy gone: the claim removed",
			templates:  []runtime.Object{*claimedWeb()},
			wantWrites: []string{"patch deployments default/web"},
		},
		{
			name:       "template gone: its binding deleted",
			karmada:    []runtime.Object{testPP("pp", false, 0, "member1"), webBinding("Deployment", "web")},
			wantWrites: []string{"delete resourcebindings default/web-deployment"},
		},
		{
			name:       "template gone, the binding of that name another's: kept",
			karmada:    []runtime.Object{testPP("pp", false, 0, "member1"), webBinding("Deployment", "other")},
			wantPlaced: []string{"member1"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, tc.templates, tc.karmada...)
			h.clearActions()
			h.reconcile("web")
			if diff := cmp.Diff(tc.wantWrites, h.writes()); diff != "" {
				t.Errorf("writes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantEvents, h.drainEvents()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			rb := h.binding("web")
			if got := placedOn(rb); !cmp.Equal(got, tc.wantPlaced) {
				t.Errorf("binding placed on %v, want %v", got, tc.wantPlaced)
			}
			if tc.wantPlaced != nil {
				if rb.Labels[policyv1alpha1.PropagationPolicyPermanentIDLabel] != "pp-id" || rb.Spec.Resource.Kind != "Deployment" {
					t.Errorf("binding labels %v resource %+v", rb.Labels, rb.Spec.Resource)
				}
			}
			if tc.wantPlaced != nil && len(tc.templates) > 0 {
				if got := h.template("web").GetLabels()[policyv1alpha1.PropagationPolicyPermanentIDLabel]; got != "pp-id" {
					t.Errorf("template claim %q, want pp-id", got)
				}
			}
			// The informers deliver the writes: nothing more to do.
			if len(tc.templates) > 0 {
				h.settle("web")
			}
			h.poll("the binding lister", func() bool {
				_, err := h.c.rbs.ResourceBindings("default").Get("web-deployment")
				return (err == nil) == (tc.wantPlaced != nil)
			})
			h.clearActions()
			h.reconcile("web")
			if w := h.writes(); len(w) != 0 {
				t.Errorf("second reconcile wrote %v", w)
			}
			if ev := h.drainEvents(); len(ev) != 0 {
				t.Errorf("second reconcile recorded %v", ev)
			}
		})
	}
}
