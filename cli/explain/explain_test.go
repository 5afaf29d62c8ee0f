package explain

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
)

func TestPrint(t *testing.T) {
	t.Parallel()
	ten, two := int64(10), int64(2)
	e := &flotillav1alpha1.PlacementExplanation{
		Template: "apps/v1 Deployment default/web", Scheduled: true, Message: "Binding has been scheduled successfully.",
		Estimator: flotillav1alpha1.EstimatorAccurate,
		Division:  &flotillav1alpha1.ReplicaDivision{Replicas: 4, Scheduling: "Divided", Preference: "StaticWeight"},
		Clusters: []flotillav1alpha1.ClusterPlacement{
			{Name: "member1", Selected: true, Replicas: 4, Message: "Selected: 4 of 4 replicas (available 10)", AvailableReplicas: &ten, Weight: &two},
			{Name: "member3", Reason: flotillav1alpha1.ReasonTaintNotTolerated, Message: "cluster(s) had untolerated taint {dedicated=gpu:NoSchedule}"},
		},
	}
	var b bytes.Buffer
	if err := Print(&b, e, ""); err != nil {
		t.Fatal(err)
	}
	want := `Template:    apps/v1 Deployment default/web
Scheduled:   True   Binding has been scheduled successfully.
Replicas:    4 (Divided, StaticWeight)
Estimator:   Accurate

CLUSTER   SELECTED   REPLICAS   AVAILABLE   WEIGHT   REASON              MESSAGE
member1   Yes        4          10          2        -                   Selected: 4 of 4 replicas (available 10)
member3   No         -          -           -        TaintNotTolerated   cluster(s) had untolerated taint {dedicated=gpu:NoSchedule}
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	if err := Print(&bytes.Buffer{}, e, "wide"); err == nil {
		t.Error("-o wide printed")
	}
}
