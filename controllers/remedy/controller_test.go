package remedy

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	clusterlisters "github.com/flotilla-io/flotilla/apis/generated/listers/cluster/v1alpha1"
	remedylisters "github.com/flotilla-io/flotilla/apis/generated/listers/remedy/v1alpha1"
	remedyv1alpha1 "github.com/flotilla-io/flotilla/apis/remedy/v1alpha1"
)

// newController is the controller over caches holding clusters and
// remedies; patch records the bodies it is given and answers patchErr.
func newController(t *testing.T, clusters []*clusterv1alpha1.Cluster, remedies []*remedyv1alpha1.Remedy, patchErr error) (*Controller, *[]string) {
	t.Helper()
	ci := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	ri := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, c := range clusters {
		if err := ci.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range remedies {
		if err := ri.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	var patches []string
	return &Controller{clusters: clusterlisters.NewClusterLister(ci), remedies: remedylisters.NewRemedyLister(ri),
		patch: func(_ context.Context, name string, body []byte) error {
			patches = append(patches, name+" "+string(body))
			return patchErr
		}}, &patches
}

func TestReconcile(t *testing.T) {
	t.Parallel()
	ready := cond("Ready", metav1.ConditionTrue)
	withActions := func(c *clusterv1alpha1.Cluster, actions ...string) *clusterv1alpha1.Cluster {
		c.ResourceVersion = "7"
		c.Status.RemedyActions = actions
		return c
	}
	readyRemedy := remedy("r", []string{"m1"}, matches(match("Ready", equal, "True")), traffic)
	conflict := apierrors.NewConflict(schema.GroupResource{Resource: "clusters"}, "m1", errors.New("changed"))
	for _, tc := range []struct {
		name     string
		cluster  *clusterv1alpha1.Cluster
		remedies []*remedyv1alpha1.Remedy
		patchErr error
		// wantPatch is the body written to m1's status ("": no write).
		wantPatch string
		wantErr   bool
	}{
		{name: "a matching remedy: actions set in one guarded status patch", cluster: withActions(cluster("m1", ready)),
			remedies:  []*remedyv1alpha1.Remedy{readyRemedy},
			wantPatch: `m1 {"metadata":{"resourceVersion":"7"},"status":{"remedyActions":["TrafficControl"]}}`},
		{name: "already carried: no write", cluster: withActions(cluster("m1", ready), "TrafficControl"),
			remedies: []*remedyv1alpha1.Remedy{readyRemedy}},
		{name: "nothing matches any more: the field removed", cluster: withActions(cluster("m1", cond("Ready", metav1.ConditionFalse)), "TrafficControl"),
			remedies:  []*remedyv1alpha1.Remedy{readyRemedy},
			wantPatch: `m1 {"metadata":{"resourceVersion":"7"},"status":{"remedyActions":null}}`},
		{name: "remedy gone: the field removed", cluster: withActions(cluster("m1", ready), "TrafficControl"),
			wantPatch: `m1 {"metadata":{"resourceVersion":"7"},"status":{"remedyActions":null}}`},
		{name: "no actions and none due: no write", cluster: withActions(cluster("m1", ready)),
			remedies: []*remedyv1alpha1.Remedy{remedy("r", []string{"m2"}, nil, traffic)}},
		{name: "actions of another writer replaced, sorted", cluster: withActions(cluster("m1", ready), "TrafficControl", "Manual"),
			remedies:  []*remedyv1alpha1.Remedy{readyRemedy, remedy("s", nil, nil, other)},
			wantPatch: `m1 {"metadata":{"resourceVersion":"7"},"status":{"remedyActions":["Another","TrafficControl"]}}`},
		{name: "conflict: retried", cluster: withActions(cluster("m1", ready)), remedies: []*remedyv1alpha1.Remedy{readyRemedy},
			patchErr: conflict, wantErr: true,
			wantPatch: `m1 {"metadata":{"resourceVersion":"7"},"status":{"remedyActions":["TrafficControl"]}}`},
		{name: "cluster being deleted: nothing", remedies: []*remedyv1alpha1.Remedy{readyRemedy},
			cluster: func() *clusterv1alpha1.Cluster {
				c := withActions(cluster("m1", ready))
				c.DeletionTimestamp = &metav1.Time{Time: time.Now()}
				return c
			}()},
		{name: "cluster gone: nothing", remedies: []*remedyv1alpha1.Remedy{readyRemedy}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var clusters []*clusterv1alpha1.Cluster
			if tc.cluster != nil {
				clusters = append(clusters, tc.cluster)
			}
			c, patches := newController(t, clusters, tc.remedies, tc.patchErr)
			err := c.reconcile(context.Background(), "m1")
			if (err != nil) != tc.wantErr {
				t.Fatalf("reconcile: %v, want error %t", err, tc.wantErr)
			}
			var want []string
			if tc.wantPatch != "" {
				want = []string{tc.wantPatch}
			}
			if diff := cmp.Diff(want, *patches); diff != "" {
				t.Errorf("patches (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSelected(t *testing.T) {
	t.Parallel()
	clusters := []*clusterv1alpha1.Cluster{cluster("m1"), cluster("m2"), cluster("m3")}
	for _, tc := range []struct {
		name     string
		remedies []*remedyv1alpha1.Remedy
		want     []string
	}{
		{"the clusters named", []*remedyv1alpha1.Remedy{remedy("r", []string{"m2", "m1"}, nil)}, []string{"m1", "m2"}},
		{"a name not (yet) a cluster too", []*remedyv1alpha1.Remedy{remedy("r", []string{"m9"}, nil)}, []string{"m9"}},
		{"old and new affinity: the union", []*remedyv1alpha1.Remedy{remedy("r", []string{"m1", "m2"}, nil), remedy("r", []string{"m2", "m3"}, nil)},
			[]string{"m1", "m2", "m3"}},
		{"no affinity: every cluster", []*remedyv1alpha1.Remedy{remedy("r", nil, nil)}, []string{"m1", "m2", "m3"}},
		{"affinity before, none now: every cluster", []*remedyv1alpha1.Remedy{remedy("r", []string{"m1"}, nil), remedy("r", nil, nil)},
			[]string{"m1", "m2", "m3"}},
		{"an affinity naming none: none", []*remedyv1alpha1.Remedy{remedy("r", []string{}, nil)}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, _ := newController(t, clusters, nil, nil)
			if diff := cmp.Diff(tc.want, c.selected(tc.remedies)); diff != "" {
				t.Errorf("clusters (-want +got):\n%s", diff)
			}
		})
	}
}

func TestClusterChanged(t *testing.T) {
	t.Parallel()
	base := func(mod func(*clusterv1alpha1.Cluster)) *clusterv1alpha1.Cluster {
		c := cluster("m1", cond("Ready", metav1.ConditionTrue))
		c.Status.RemedyActions = []string{"TrafficControl"}
		c.Status.KubernetesVersion = "v1.31.0"
		if mod != nil {
			mod(c)
		}
		return c
	}
	for _, tc := range []struct {
		name string
		mod  func(*clusterv1alpha1.Cluster)
		want bool
	}{
		{"nothing changed", nil, false},
		{"another status field changed", func(c *clusterv1alpha1.Cluster) { c.Status.KubernetesVersion = "v1.32.0" }, false},
		{"a condition changed", func(c *clusterv1alpha1.Cluster) { c.Status.Conditions[0].Status = metav1.ConditionFalse }, true},
		{"a condition added", func(c *clusterv1alpha1.Cluster) {
			c.Status.Conditions = append(c.Status.Conditions, cond(dns, "False"))
		}, true},
		{"the actions changed", func(c *clusterv1alpha1.Cluster) { c.Status.RemedyActions = nil }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := clusterChanged(base(nil), base(tc.mod)); got != tc.want {
				t.Errorf("changed %t, want %t", got, tc.want)
			}
		})
	}
}
