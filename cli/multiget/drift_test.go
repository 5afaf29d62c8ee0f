package multiget

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	"github.com/flotilla-io/flotilla/names"
)

// TestMarkDrift: a member row the control plane applied shows what its
// Work records (the Work of the namesake template, in the cluster's
// execution namespace): Open, Corrected or No; other rows, and rows whose
// Work cannot be read, show -. Each Work is read once.
func TestMarkDrift(t *testing.T) {
	t.Parallel()
	decode := func(rows ...row) *metav1.Table {
		table, err := DecodeTable(serverTable(t, deploymentColumns, rows...), time.Now(), false)
		if err != nil {
			t.Fatal(err)
		}
		return table
	}
	cells := []interface{}{"1/1", "5m", "nginx"}
	work := func(open bool, drifted ...string) *workv1alpha1.Work {
		w := &workv1alpha1.Work{}
		status := metav1.ConditionFalse
		if open {
			status = metav1.ConditionTrue
		}
		w.Status.Conditions = []metav1.Condition{{Type: workv1alpha1.WorkDrifted, Status: status}}
		for _, n := range []string{"web", "api", "db"} {
			ms := workv1alpha1.ManifestStatus{Identifier: workv1alpha1.ResourceIdentifier{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "ns", Name: n}}
			for _, d := range drifted {
				if d == n {
					ms.Drift = []workv1alpha1.DriftedField{{Path: "spec.replicas", ValueInMember: "5", ValueApplied: "3"}}
				}
			}
			w.Status.ManifestStatuses = append(w.Status.ManifestStatuses, ms)
		}
		return w
	}
	works := map[string]*workv1alpha1.Work{
		names.ExecutionNamespace("member1") + "/" + names.WorkName("Deployment", "web", "ns"): work(true, "web"),
		names.ExecutionNamespace("member2") + "/" + names.WorkName("Deployment", "web", "ns"): work(false, "web"),
		names.ExecutionNamespace("member2") + "/" + names.WorkName("Deployment", "api", "ns"): work(false),
	}
	var reads []string
	l := driftLookup{work: func(_ context.Context, namespace, name string) (*workv1alpha1.Work, error) {
		reads = append(reads, namespace+"/"+name)
		if w, ok := works[namespace+"/"+name]; ok {
			return w, nil
		}
		return nil, errors.New("forbidden")
	}}
	parts := []Part{
		{Cluster: ControlPlaneName, ControlPlane: true, Mapping: deployments, Table: decode(row{namespace: "ns", name: "web", cells: cells})},
		{Cluster: "member1", Mapping: deployments, Table: decode(row{namespace: "ns", name: "web", labels: managed, cells: cells},
			row{namespace: "ns", name: "local", cells: cells})},
		{Cluster: "member2", Mapping: deployments, Table: decode(row{namespace: "ns", name: "web", labels: managed, cells: cells},
			row{namespace: "ns", name: "api", labels: managed, cells: cells}, row{namespace: "ns", name: "db", labels: managed, cells: cells})},
	}
	l.markDrift(t.Context(), parts)
	var got []string
	for _, m := range Merge(parts) {
		for _, r := range m.Table.Rows {
			got = append(got, r.Cells[0].(string)+"@"+r.Cells[1].(string)+"="+r.Cells[len(r.Cells)-1].(string))
		}
	}
	want := []string{"web@" + ControlPlaneName + "=-", "web@member1=Open", "local@member1=-", "web@member2=Corrected", "api@member2=No", "db@member2=-"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	if len(reads) != 4 {
		t.Errorf("Works read %v, want one for each managed member row", reads)
	}
}
