package eviction

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

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
	app := func(b *workv1alpha2.ResourceBinding) {
		b.Spec.Failover = &policyv1alpha1.FailoverBehavior{Application: &policyv1alpha1.ApplicationFailoverBehavior{
			DecisionConditions: policyv1alpha1.DecisionConditions{TolerationSeconds: ptr.To[int32](60)},
			PurgeMode:          policyv1alpha1.PurgeModeGracefully, GracePeriodSeconds: ptr.To[int32](120),
			StatePreservation: &policyv1alpha1.StatePreservation{Rules: []policyv1alpha1.StatePreservationRule{{AliasLabelName: "example.io/job", JSONPath: "{.jobID}"}}},
		}}
		b.Status.AggregatedStatus = []workv1alpha2.AggregatedStatusItem{
			{ClusterName: "m1", Applied: true, Health: workv1alpha2.ResourceUnhealthy, Status: &runtime.RawExtension{Raw: []byte(`{"jobID":"j-1"}`)}},
			{ClusterName: "m2", Applied: true, Health: workv1alpha2.ResourceHealthy},
		}
	}
	f := newFixture(nil)
	bs, _ := listers(t, rb(app))
	clock := now
	c := &ApplicationFailover{bindings: bs, recorder: f.events, now: func() time.Time { return clock }, write: f.write, requeue: f.requeue,
		unhealthy: map[string]map[string]time.Time{}}
	key := "rb/web/nginx-deployment"
	// First seen unhealthy: looked at again when the toleration ends.
	if err := c.reconcile(context.Background(), key); err != nil {
		t.Fatal(err)
	}
	if len(f.patches) != 0 || fmt.Sprint(f.requeued) != "[1m0s]" {
		t.Fatalf("first look: %d patches, requeued %v; want none and 1m0s", len(f.patches), f.requeued)
	}
	// A minute later: evicted from m1, with its job id preserved.
	clock = now.Add(time.Minute)
	if err := c.reconcile(context.Background(), key); err != nil {
		t.Fatal(err)
	}
	checkPatch(t, f, `{"clusters":[{"name":"m2","replicas":2}],"gracefulEvictionTasks":[{"fromCluster":"m1","purgeMode":"Gracefully","replicas":3,"reason":"ApplicationFailure",`+
		`"message":"the application has been unhealthy in cluster m1 for 1m0s, longer than the 1m0s the policy tolerates; its replicas in m1 stay until it is healthy in the clusters it moves to, at most until 2026-11-27T08:03:00Z","producer":"ResourceBindingApplicationFailoverController",`+
		`"gracePeriodSeconds":120,"preservedLabelState":{"example.io/job":"j-1"},"clustersBeforeFailover":["m1","m2"],"creationTimestamp":"2026-11-27T08:01:00Z"}]}`, "7")
	checkEvent(t, f, "Normal EvictWorkloadFromClusterSucceed Evict from cluster m1 succeed.")
}
