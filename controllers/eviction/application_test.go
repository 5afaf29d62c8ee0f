package eviction

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

func TestPreservedState(t *testing.T) {
	status := []byte(`{"jobID":"j-42","replicas":3,"conditions":[{"type":"Ready"}]}`)
	rules := func(paths ...string) *policyv1alpha1.StatePreservation {
		sp := &policyv1alpha1.StatePreservation{}
		for i, p := range paths {
			sp.Rules = append(sp.Rules, policyv1alpha1.StatePreservationRule{AliasLabelName: fmt.Sprintf("k%d", i), JSONPath: p})
		}
		return sp
	}
	for _, tc := range []struct {
		name    string
		sp      *policyv1alpha1.StatePreservation
		status  []byte
		want    string
		wantErr bool
	}{
		{"two rules", rules("{.jobID}", "{.replicas}"), status, "map[k0:j-42 k1:3]", false},
		{"a list element", rules("{.conditions[0].type}"), status, "map[k0:Ready]", false},
		{"a missing field fails", rules("{.missing}"), status, "", true},
		{"no status fails", rules("{.jobID}"), nil, "", true},
		{"a bad path fails", rules("{.jobID"), status, "", true},
		{"a value that is no label value fails", rules("{.conditions}"), status, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := preservedState(tc.sp, tc.status)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want error %v", err, tc.wantErr)
			}
			if !tc.wantErr && fmt.Sprint(got) != tc.want {
				t.Errorf("got %v, want %s", got, tc.want)
			}
		})
	}
}

func TestApplicationFailoverReconcile(t *testing.T) {
	unhealthyIn := func(health workv1alpha2.ResourceHealth, since string) func(b *workv1alpha2.ResourceBinding) {
		return func(b *workv1alpha2.ResourceBinding) {
			b.Spec.Failover = &policyv1alpha1.FailoverBehavior{Application: &policyv1alpha1.ApplicationFailoverBehavior{
				DecisionConditions: policyv1alpha1.DecisionConditions{TolerationSeconds: ptr.To[int32](60)},
				PurgeMode:          policyv1alpha1.PurgeModeGracefully, GracePeriodSeconds: ptr.To[int32](120),
				StatePreservation: &policyv1alpha1.StatePreservation{Rules: []policyv1alpha1.StatePreservationRule{{AliasLabelName: "example.io/job", JSONPath: "{.jobID}"}}},
			}}
			b.Status.AggregatedStatus = []workv1alpha2.AggregatedStatusItem{
				{ClusterName: "m1", Applied: true, Health: health, Status: &runtime.RawExtension{Raw: []byte(`{"jobID":"j-1"}`)}},
				{ClusterName: "m2", Applied: true, Health: workv1alpha2.ResourceHealthy},
			}
			if since != "" {
				b.Annotations = map[string]string{flotillav1alpha1.UnhealthySinceAnnotation: since}
			}
		}
	}
	recorded := `{"m1":"2026-11-27T08:00:00Z"}`
	key := "rb/web/nginx-deployment"
	type step struct {
		binding *workv1alpha2.ResourceBinding
		at      time.Duration // after now
	}
	for _, tc := range []struct {
		name string
		// steps run on one controller (its memory kept between them); the
		// writes and requeues of the last are checked.
		steps       []step
		wantRecord  any // the annotation the last patch writes: a string, nil to remove; "-" for none
		wantSpec    bool
		wantRequeue string
	}{
		{name: "first seen unhealthy: recorded on the binding, looked at again when the toleration ends",
			steps: []step{{rb(unhealthyIn(workv1alpha2.ResourceUnhealthy, "")), 0}}, wantRecord: recorded, wantRequeue: "[1m0s]"},
		{name: "looked at again before the cache has the record: nothing written",
			steps:       []step{{rb(unhealthyIn(workv1alpha2.ResourceUnhealthy, "")), 0}, {rb(unhealthyIn(workv1alpha2.ResourceUnhealthy, "")), 10 * time.Second}},
			wantRecord:  "-",
			wantRequeue: "[50s]"},
		{name: "a new leader halfway: continues the recorded count, writes nothing",
			steps: []step{{rb(unhealthyIn(workv1alpha2.ResourceUnhealthy, recorded)), 30 * time.Second}}, wantRecord: "-", wantRequeue: "[30s]"},
		{name: "a new leader at the recorded deadline: evicts at once, the record cleared in the same patch",
			steps: []step{{rb(unhealthyIn(workv1alpha2.ResourceUnhealthy, recorded)), time.Minute}}, wantRecord: nil, wantSpec: true, wantRequeue: "[]"},
		{name: "healthy again: the record removed",
			steps: []step{{rb(unhealthyIn(workv1alpha2.ResourceHealthy, recorded)), 10 * time.Second}}, wantRecord: nil, wantRequeue: "[]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var f *fixture
			c := &ApplicationFailover{unhealthy: map[string]map[string]time.Time{}, written: map[string]string{}}
			for _, s := range tc.steps {
				f = newFixture(nil)
				bs, _ := listers(t, s.binding)
				clock := now.Add(s.at)
				c.bindings, c.recorder, c.now, c.write = bs, f.events, func() time.Time { return clock }, f.write
				var requeued []time.Duration
				c.requeue = func(_ string, d time.Duration) { requeued = append(requeued, d) }
				if err := c.reconcile(context.Background(), key); err != nil {
					t.Fatal(err)
				}
				f.requeued = append(f.requeued, requeued...)
			}
			if tc.wantRecord == "-" {
				if len(f.patches) != 0 {
					t.Errorf("wrote %v, want nothing", f.patches)
				}
			} else {
				if len(f.patches) != 1 {
					t.Fatalf("%d patches, want 1", len(f.patches))
				}
				annotations, _ := f.patches[0]["metadata"].(map[string]any)["annotations"].(map[string]any)
				if got, ok := annotations[flotillav1alpha1.UnhealthySinceAnnotation]; !ok || got != tc.wantRecord {
					t.Errorf("the patch records %v (present %v), want %v: %v", got, ok, tc.wantRecord, f.patches[0])
				}
				if _, spec := f.patches[0]["spec"]; spec != tc.wantSpec {
					t.Errorf("the patch changes the spec: %v, want %v", spec, tc.wantSpec)
				}
			}
			if tc.wantSpec {
				checkPatch(t, f, `{"clusters":[{"name":"m2","replicas":2}],"gracefulEvictionTasks":[{"fromCluster":"m1","purgeMode":"Gracefully","replicas":3,"reason":"ApplicationFailure",`+
					`"message":"the application has been unhealthy in cluster m1 for 1m0s, longer than the 1m0s the policy tolerates; its replicas in m1 stay until it is healthy in the clusters it moves to, at most until 2026-11-27T08:03:00Z","producer":"ResourceBindingApplicationFailoverController",`+
					`"gracePeriodSeconds":120,"preservedLabelState":{"example.io/job":"j-1"},"clustersBeforeFailover":["m1","m2"],"creationTimestamp":"2026-11-27T08:01:00Z"}]}`, "7")
				checkEvent(t, f, "Normal EvictWorkloadFromClusterSucceed Evict from cluster m1 succeed.")
			}
			if got := fmt.Sprint(f.requeued); got != tc.wantRequeue {
				t.Errorf("requeued %s, want %s", got, tc.wantRequeue)
			}
		})
	}
}
