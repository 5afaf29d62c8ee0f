package semantics

import (
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// TestSchedulingSubresource: a decision written through a binding's
// scheduling subresource sets spec.clusters, the applied placement and the
// status in one request; it keeps every other spec field as stored, moves
// the generation (and a decision's observed generation with it) when the
// clusters change, and is validated like the binding.
func TestSchedulingSubresource(t *testing.T) {
	ns := framework.Namespace(t, "sem-scheduling")
	rbs := framework.Karmada(t).WorkV1alpha2().ResourceBindings(ns)
	// No placement: the scheduler leaves it alone; not named after its
	// template, which does not exist: the detector leaves it alone too.
	rb, err := rbs.Create(t.Context(), &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "written-by-hand", Namespace: ns},
		Spec: workv1alpha2.ResourceBindingSpec{Replicas: 2,
			Resource: workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: "web"}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	decision := `{"metadata":{"resourceVersion":"` + rb.ResourceVersion + `","annotations":{"policy.karmada.io/applied-placement":"{}"}},
	  "spec":{"replicas":9,"clusters":[{"name":"member1","replicas":2}]},
	  "status":{"schedulerObservedGeneration":1,
	    "conditions":[{"type":"Scheduled","status":"True","reason":"Success","message":"Binding has been scheduled successfully.",
	      "observedGeneration":1,"lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`
	got, err := rbs.Patch(t.Context(), rb.Name, types.MergePatchType, []byte(decision), metav1.PatchOptions{}, workv1alpha2.SchedulingSubresource)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Spec.Clusters) != 1 || got.Spec.Clusters[0].Name != "member1" || got.Spec.Replicas != 2 {
		t.Errorf("spec %+v: want clusters [member1:2] and the stored replicas 2", got.Spec)
	}
	if got.Annotations[workv1alpha2.AppliedPlacementAnnotation] != "{}" {
		t.Errorf("annotations %v: want the applied placement written", got.Annotations)
	}
	if got.Generation != 2 || got.Status.SchedulerObservedGeneration != 2 || len(got.Status.Conditions) != 1 ||
		got.Status.Conditions[0].ObservedGeneration != 2 {
		t.Errorf("generation %d, status %+v: want generation 2 observed by the decision", got.Generation, got.Status)
	}

	// Invalid: refused with the field named, nothing changed.
	bad := `{"spec":{"clusters":[{"name":""}]}}`
	_, err = rbs.Patch(t.Context(), rb.Name, types.MergePatchType, []byte(bad), metav1.PatchOptions{}, workv1alpha2.SchedulingSubresource)
	if !apierrors.IsInvalid(err) {
		t.Fatalf("a cluster without a name: %v, want 422", err)
	}
	if status, ok := err.(apierrors.APIStatus); !ok || status.Status().Details == nil || len(status.Status().Details.Causes) == 0 ||
		status.Status().Details.Causes[0].Field != "spec.clusters[0].name" {
		t.Errorf("refusal %v: want a cause at spec.clusters[0].name", err)
	}
	after, err := rbs.Get(t.Context(), rb.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after.ResourceVersion != got.ResourceVersion {
		t.Errorf("the refused decision changed the binding (resourceVersion %s → %s)", got.ResourceVersion, after.ResourceVersion)
	}
}
