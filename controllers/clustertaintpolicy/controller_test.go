package clustertaintpolicy

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	clusterlisters "github.com/flotilla-io/flotilla/apis/generated/listers/cluster/v1alpha1"
	policylisters "github.com/flotilla-io/flotilla/apis/generated/listers/policy/v1alpha1"
)

func TestReconcile(t *testing.T) {
	notReady := cond("Ready", "False")
	for _, tc := range []struct {
		name      string
		taintsNow bool // the cluster already carries the policy's taint
		patchErr  error
		wantPatch bool
		wantErr   bool
		wantEvent string
	}{
		{name: "adds the taint in one guarded patch", wantPatch: true, wantEvent: "Normal TaintClusterSucceed Update Cluster(m1) with taints(flotilla.io/down=:NoSchedule) succeed"},
		{name: "nothing to change: no write", taintsNow: true},
		{name: "conflict: retried, no event", wantPatch: true, patchErr: apierrors.NewConflict(schema.GroupResource{Resource: "clusters"}, "m1", errors.New("changed")), wantErr: true},
		{name: "failure: TaintClusterFailed", wantPatch: true, patchErr: errors.New("boom"), wantErr: true, wantEvent: "Warning TaintClusterFailed boom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := cluster("m1", nil, nil, notReady)
			cl.ResourceVersion = "7"
			if tc.taintsNow {
				cl.Spec.Taints = append(cl.Spec.Taints, taint(noSched, t0))
			}
			clusters := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
			policies := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
			_ = clusters.Add(cl)
			_ = policies.Add(policy("p", t0, nil, inFalse, inTrue, noSched))
			rec := record.NewFakeRecorder(10)
			var patched []byte
			c := &Controller{clusters: clusterlisters.NewClusterLister(clusters), policies: policylisters.NewClusterTaintPolicyLister(policies),
				recorder: rec, now: now.Local,
				patch: func(_ context.Context, name string, body []byte) error { patched = body; return tc.patchErr }}
			err := c.reconcile(context.Background(), "m1")
			if (err != nil) != tc.wantErr {
				t.Fatalf("reconcile: %v, want error %v", err, tc.wantErr)
			}
			if (patched != nil) != tc.wantPatch {
				t.Fatalf("patched %s, want a patch %v", patched, tc.wantPatch)
			}
			if patched != nil {
				var p struct {
					Metadata struct{ ResourceVersion string }
					Spec     struct{ Taints []map[string]any }
				}
				if err := json.Unmarshal(patched, &p); err != nil {
					t.Fatal(err)
				}
				if p.Metadata.ResourceVersion != "7" || len(p.Spec.Taints) != 1 || p.Spec.Taints[0]["key"] != "flotilla.io/down" || p.Spec.Taints[0]["timeAdded"] == nil {
					t.Errorf("patch %s, want the taint with timeAdded, guarded by resourceVersion 7", patched)
				}
			}
			var events []string
			for len(rec.Events) > 0 {
				events = append(events, <-rec.Events)
			}
			if got := strings.Join(events, "; "); got != tc.wantEvent {
				t.Errorf("events %q, want %q", got, tc.wantEvent)
			}
		})
	}
}
