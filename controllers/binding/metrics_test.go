package binding

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	pt "github.com/flotilla-io/flotilla/placement/placementtest"
	"github.com/flotilla-io/flotilla/telemetry"
	"github.com/flotilla-io/flotilla/telemetry/telemetrytest"
)

// Syncing a binding's Works is observed once, written or up to date; a
// binding being deleted is not a sync. Not parallel: the histogram is the
// process's.
func TestReconcileObservesSyncWork(t *testing.T) {
	ab := []*clusterv1alpha1.Cluster{pt.Cluster("a"), pt.Cluster("b")}
	success := map[string]string{"result": "success"}
	for _, tc := range []struct {
		name string
		in   objects
		want float64
	}{
		{name: "Works written", in: objects{templates: []runtime.Object{nginxTemplate()}, bindings: []runtime.Object{newRB()}, clusters: ab}, want: 1},
		{name: "being deleted", in: objects{templates: []runtime.Object{nginxTemplate()}, bindings: []runtime.Object{newRB(deleting)}, clusters: ab}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, _ := telemetrytest.Sample(t, telemetry.BindingSyncWorkDuration, success)
			f := newFixture(t, tc.in, nil)
			if err := f.ctrl.reconcile(context.Background(), "rb/default/nginx-deployment"); err != nil {
				t.Fatal(err)
			}
			if v, _ := telemetrytest.Sample(t, telemetry.BindingSyncWorkDuration, success); v-before != tc.want {
				t.Errorf("%s moved by %v, want %v", telemetry.BindingSyncWorkDuration, v-before, tc.want)
			}
		})
	}
}
