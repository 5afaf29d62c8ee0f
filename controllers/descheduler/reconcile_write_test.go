package descheduler

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/failover"
)

// recorder records events as "kind name type reason: message".
func recorder(events *[]string) func(obj runtime.Object, eventtype, reason, message string) {
	return func(obj runtime.Object, eventtype, reason, message string) {
		var kind, name string
		switch o := obj.(type) {
		case *corev1.ObjectReference:
			kind, name = o.Kind+"("+o.APIVersion+", uid "+string(o.UID)+")", o.Namespace+"/"+o.Name
		case *workv1alpha2.ResourceBinding:
			kind, name = "ResourceBinding", o.Namespace+"/"+o.Name
		default:
			kind = fmt.Sprintf("%T", obj)
		}
		*events = append(*events, fmt.Sprintf("%s %s %s %s: %s", kind, name, eventtype, reason, message))
	}
}

func TestWrite(t *testing.T) {
	t.Parallel()
	gr := schema.GroupResource{Group: "work.karmada.io", Resource: "resourcebindings"}
	for _, tc := range []struct {
		name       string
		measured   map[string]failover.Measurement
		patchErr   error
		wantPatch  string // "": none
		wantEvents []string
		wantErr    bool
	}{
		{name: "nothing unschedulable: no write, no event", measured: map[string]failover.Measurement{"m1": {Ready: 2}}},
		{name: "m1 lowered by its unschedulable replicas: one guarded patch, events on the binding and the template",
			measured:  map[string]failover.Measurement{"m1": {Unschedulable: 2, Ready: 2}},
			wantPatch: `ns/web-deployment {"metadata":{"resourceVersion":"42"},"spec":{"clusters":[{"name":"m1","replicas":2},{"name":"m2","replicas":2}]}}`,
			wantEvents: []string{
				"ResourceBinding ns/web-deployment Normal DescheduleBindingSucceed: Binding has been descheduled, 2 total descheduled replica(s), 2 replica(s) in cluster(m1)",
				"Deployment(apps/v1, uid uid-web) ns/web Normal DescheduleBindingSucceed: Binding has been descheduled, 2 total descheduled replica(s), 2 replica(s) in cluster(m1)",
			}},
		{name: "two clusters in one patch",
			measured:  map[string]failover.Measurement{"m1": {Unschedulable: 1, Ready: 3}, "m2": {Unschedulable: 2}},
			wantPatch: `ns/web-deployment {"metadata":{"resourceVersion":"42"},"spec":{"clusters":[{"name":"m1","replicas":3},{"name":"m2"}]}}`,
			wantEvents: []string{
				"ResourceBinding ns/web-deployment Normal DescheduleBindingSucceed: Binding has been descheduled, 3 total descheduled replica(s), 1 replica(s) in cluster(m1), 2 replica(s) in cluster(m2)",
				"Deployment(apps/v1, uid uid-web) ns/web Normal DescheduleBindingSucceed: Binding has been descheduled, 3 total descheduled replica(s), 1 replica(s) in cluster(m1), 2 replica(s) in cluster(m2)",
			}},
		{name: "the write fails: warnings on both, retried",
			measured:  map[string]failover.Measurement{"m1": {Unschedulable: 2, Ready: 2}},
			patchErr:  apierrors.NewForbidden(gr, "web-deployment", errors.New("no")),
			wantPatch: `ns/web-deployment {"metadata":{"resourceVersion":"42"},"spec":{"clusters":[{"name":"m1","replicas":2},{"name":"m2","replicas":2}]}}`,
			wantEvents: []string{
				`ResourceBinding ns/web-deployment Warning DescheduleBindingFailed: resourcebindings.work.karmada.io "web-deployment" is forbidden: no`,
				`Deployment(apps/v1, uid uid-web) ns/web Warning DescheduleBindingFailed: resourcebindings.work.karmada.io "web-deployment" is forbidden: no`,
			},
			wantErr: true},
		{name: "the binding changed meanwhile: retried on the new one, no event",
			measured:  map[string]failover.Measurement{"m1": {Unschedulable: 2, Ready: 2}},
			patchErr:  apierrors.NewConflict(gr, "web-deployment", errors.New("changed")),
			wantPatch: `ns/web-deployment {"metadata":{"resourceVersion":"42"},"spec":{"clusters":[{"name":"m1","replicas":2},{"name":"m2","replicas":2}]}}`,
			wantErr:   true},
		{name: "the binding is gone: nothing to do",
			measured:  map[string]failover.Measurement{"m1": {Unschedulable: 2, Ready: 2}},
			patchErr:  apierrors.NewNotFound(gr, "web-deployment"),
			wantPatch: `ns/web-deployment {"metadata":{"resourceVersion":"42"},"spec":{"clusters":[{"name":"m1","replicas":2},{"name":"m2","replicas":2}]}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var patch string
			var events []string
			r := writeReconciler{
				patch: func(_ context.Context, namespace, name string, body []byte) error {
					if patch != "" {
						t.Error("more than one write")
					}
					patch = namespace + "/" + name + " " + string(body)
					return tc.patchErr
				},
				record: recorder(&events),
			}
			b := rb(dynamicPlacement)
			err := r.reconcile(context.Background(), b, tc.measured)
			if (err != nil) != tc.wantErr {
				t.Errorf("err %v, want error %t", err, tc.wantErr)
			}
			if patch != tc.wantPatch {
				t.Errorf("patch %s\nwant %s", patch, tc.wantPatch)
			}
			if diff := cmp.Diff(tc.wantEvents, events); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if got := b.Spec.Clusters; got[0].Replicas != 4 || got[1].Replicas != 2 {
				t.Errorf("the cached binding was changed: %v", got)
			}
		})
	}
}
