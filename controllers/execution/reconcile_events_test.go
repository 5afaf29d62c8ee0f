package execution

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
)

func TestEventsReconciler(t *testing.T) {
	t.Parallel()
	manifest := func(name string, template bool) *unstructured.Unstructured {
		m := memberObject(configMap(name, nil, nil))
		if !template {
			a := m.GetAnnotations()
			delete(a, "resourcetemplate.karmada.io/uid")
			m.SetAnnotations(a)
		}
		return m
	}
	tests := []struct {
		name     string
		outcomes []outcome
		applyErr error
		want     []string
	}{
		{name: "nothing written: no event", outcomes: []outcome{{desired: manifest("a", true)}}},
		{name: "written: on the template and the Work", outcomes: []outcome{{desired: manifest("a", true), wrote: true}, {desired: manifest("b", true)}},
			want: []string{
				"ConfigMap/a@template-uid Normal SyncSucceed Successfully applied resource(default/a) to cluster member1",
				"Work/w Normal SyncSucceed Sync work(karmada-es-member1/w) to cluster(member1) successful.",
			}},
		{name: "failed: on the template and the Work, even with another written",
			outcomes: []outcome{{desired: manifest("a", true), err: errors.New("boom")}, {desired: manifest("b", true), wrote: true}},
			applyErr: errors.New("boom"),
			want: []string{
				"ConfigMap/a@template-uid Warning SyncFailed Failed to create or update resource(default/a) in member cluster(member1): boom",
				"ConfigMap/b@template-uid Normal SyncSucceed Successfully applied resource(default/b) to cluster member1",
				"Work/w Warning SyncFailed Failed to sync work(karmada-es-member1/w) to cluster(member1), err: boom",
			}},
		{name: "no template uid, an unreadable manifest: only the Work",
			outcomes: []outcome{{desired: manifest("a", false), wrote: true}, {err: errors.New("decoding")}},
			applyErr: errors.New("decoding"),
			want:     []string{"Work/w Warning SyncFailed Failed to sync work(karmada-es-member1/w) to cluster(member1), err: decoding"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			events := &fakeEvents{}
			r := eventsReconciler{event: events.event}
			r.reconcile(&workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: testNS}}, testCluster, tc.outcomes, tc.applyErr)
			if diff := cmp.Diff(tc.want, events.events); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}
