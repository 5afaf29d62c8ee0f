package cache

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/rest"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	searchv1alpha1 "github.com/flotilla-io/flotilla/apis/search/v1alpha1"
	"github.com/flotilla-io/flotilla/member"
)

// resettable is a static mapper with the Reset members' mappers have.
type resettable struct{ *meta.DefaultRESTMapper }

func (resettable) Reset() {}

func testClient() *member.Client {
	m := meta.NewDefaultRESTMapper(nil)
	m.Add(schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, meta.RESTScopeNamespace)
	m.Add(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, meta.RESTScopeNamespace)
	m.Add(schema.GroupVersionKind{Version: "v1", Kind: "Node"}, meta.RESTScopeRoot)
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		{Version: "v1", Resource: "pods"}: "PodList", {Group: "apps", Version: "v1", Resource: "deployments"}: "DeploymentList", {Version: "v1", Resource: "nodes"}: "NodeList",
	})
	return &member.Client{Dynamic: dyn, Mapper: resettable{m}}
}

func testCluster(name string, ready bool) *clusterv1alpha1.Cluster {
	status := metav1.ConditionFalse
	if ready {
		status = metav1.ConditionTrue
	}
	return &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"env": "prod"}},
		Status: clusterv1alpha1.ClusterStatus{Conditions: []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady, Status: status}}}}
}

func TestManagerSync(t *testing.T) {
	t.Parallel()
	clusters := []*clusterv1alpha1.Cluster{testCluster("member1", true), testCluster("member2", true), testCluster("member3", false)}
	registries := []*searchv1alpha1.ResourceRegistry{
		{ObjectMeta: metav1.ObjectMeta{Name: "pods-in-a", Generation: 1}, Spec: searchv1alpha1.ResourceRegistrySpec{
			TargetCluster:     policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}},
			ResourceSelectors: []searchv1alpha1.ResourceSelector{{APIVersion: "v1", Kind: "Pod", Namespace: "a"}},
		}},
		{ObjectMeta: metav1.ObjectMeta{Name: "pods-in-b", Generation: 1}, Spec: searchv1alpha1.ResourceRegistrySpec{
			TargetCluster:     policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}},
			ResourceSelectors: []searchv1alpha1.ResourceSelector{{APIVersion: "v1", Kind: "Pod", Namespace: "b"}},
		}},
		{ObjectMeta: metav1.ObjectMeta{Name: "prod", Generation: 2}, Spec: searchv1alpha1.ResourceRegistrySpec{
			TargetCluster: policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}},
			ResourceSelectors: []searchv1alpha1.ResourceSelector{
				{APIVersion: "apps/v1", Kind: "Deployment"}, {APIVersion: "v1", Kind: "Node", Namespace: "ignored"}, {APIVersion: "example.com/v1", Kind: "Gizmo"},
			},
		}},
	}
	written := map[string]metav1.Condition{}
	m := NewManager(Config{
		Clusters:   func() ([]*clusterv1alpha1.Cluster, error) { return clusters, nil },
		Registries: func() ([]*searchv1alpha1.ResourceRegistry, error) { return registries, nil },
		Client:     func(*clusterv1alpha1.Cluster) (*member.Client, error) { return testClient(), nil },
		WriteStatus: func(_ context.Context, r *searchv1alpha1.ResourceRegistry, conds []metav1.Condition) error {
			written[r.Name] = *meta.FindStatusCondition(conds, ConditionReady)
			return nil
		},
	})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	if err := m.sync(ctx); err != nil {
		t.Fatal(err)
	}
	got := runningStores(m)
	want := []string{
		"member1 /v1, Resource=nodes *",
		"member1 /v1, Resource=pods a,b", // the union of the registries' namespaces
		"member1 apps/v1, Resource=deployments *",
		"member2 /v1, Resource=nodes *",
		"member2 apps/v1, Resource=deployments *",
	} // member3 is not Ready
	if !slices.Equal(got, want) {
		t.Errorf("stores:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if c := written["prod"]; c.Status != metav1.ConditionFalse || c.Reason != ReasonCacheFailed || c.ObservedGeneration != 2 ||
		!strings.Contains(c.Message, "example.com/v1 Gizmo in member1: the cluster does not serve this kind") {
		t.Errorf("prod's condition %+v", c)
	}
	// Once listed, the registries without failures are Ready.
	err := waitFor(func() bool {
		for _, r := range m.AllStores() {
			if !r.Synced() {
				return false
			}
		}
		return true
	})
	if err != nil {
		t.Fatal("the stores never listed")
	}
	if err := m.sync(ctx); err != nil {
		t.Fatal(err)
	}
	if c := written["pods-in-a"]; c.Status != metav1.ConditionTrue || c.Message != "cached: v1/pods in member1" {
		t.Errorf("pods-in-a's condition %+v", c)
	}
	// Deleting a registry narrows the namespaces: the store restarts; the
	// last registry of a resource gone, its store stops.
	registries = registries[1:2]
	if err := m.sync(ctx); err != nil {
		t.Fatal(err)
	}
	got = runningStores(m)
	if !slices.Equal(got, []string{"member1 /v1, Resource=pods b"}) {
		t.Errorf("stores after deleting two registries: %v", got)
	}
}

// runningStores lists the running stores as "cluster resource namespaces".
func runningStores(m *Manager) []string {
	var got []string
	m.eachStore(func(id storeID, r *running) {
		got = append(got, id.cluster+" "+id.gvr.String()+" "+r.key)
	})
	slices.Sort(got)
	return got
}

// A member's stores are built on its connection: they keep running while
// it stays, all restart when it changes (a new Secret, endpoint or
// tunnel), and stop when the member is no longer cached.
func TestManagerStoresFollowTheConnection(t *testing.T) {
	t.Parallel()
	clusters := []*clusterv1alpha1.Cluster{testCluster("member1", true), testCluster("member2", true)}
	registries := []*searchv1alpha1.ResourceRegistry{{ObjectMeta: metav1.ObjectMeta{Name: "all"}, Spec: searchv1alpha1.ResourceRegistrySpec{
		ResourceSelectors: []searchv1alpha1.ResourceSelector{{APIVersion: "v1", Kind: "Pod"}, {APIVersion: "v1", Kind: "Node"}},
	}}}
	clients := map[string]*member.Client{"member1": testClientOn("https://a"), "member2": testClientOn("https://b")}
	m := NewManager(Config{
		Clusters:    func() ([]*clusterv1alpha1.Cluster, error) { return clusters, nil },
		Registries:  func() ([]*searchv1alpha1.ResourceRegistry, error) { return registries, nil },
		Client:      func(c *clusterv1alpha1.Cluster) (*member.Client, error) { return clients[c.Name], nil },
		WriteStatus: func(context.Context, *searchv1alpha1.ResourceRegistry, []metav1.Condition) error { return nil },
	})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	stores := func() map[string]*Store {
		m.mu.RLock()
		defer m.mu.RUnlock()
		out := map[string]*Store{}
		m.eachStore(func(id storeID, r *running) { out[id.cluster+" "+id.gvr.Resource] = r.store })
		return out
	}
	for _, step := range []struct {
		name      string
		change    func()
		want      []string // the stores running after the change
		restarted []string // those of them started anew
	}{
		{name: "first sync", change: func() {},
			want: []string{"member1 nodes", "member1 pods", "member2 nodes", "member2 pods"}, restarted: []string{"member1 nodes", "member1 pods", "member2 nodes", "member2 pods"}},
		{name: "nothing changed", change: func() {},
			want: []string{"member1 nodes", "member1 pods", "member2 nodes", "member2 pods"}},
		{name: "member1's connection changed", change: func() { clients["member1"] = testClientOn("https://a2") },
			want: []string{"member1 nodes", "member1 pods", "member2 nodes", "member2 pods"}, restarted: []string{"member1 nodes", "member1 pods"}},
		{name: "member2 no longer Ready", change: func() { clusters[1] = testCluster("member2", false) },
			want: []string{"member1 nodes", "member1 pods"}},
	} {
		before := stores()
		step.change()
		if err := m.sync(ctx); err != nil {
			t.Fatal(err)
		}
		after := stores()
		var names, restarted []string
		for name, st := range after {
			names = append(names, name)
			if before[name] != st {
				restarted = append(restarted, name)
			}
		}
		slices.Sort(names)
		slices.Sort(restarted)
		if !slices.Equal(names, step.want) || !slices.Equal(restarted, step.restarted) {
			t.Errorf("%s: running %v, started anew %v; want %v and %v", step.name, names, restarted, step.want, step.restarted)
		}
		for name, st := range before {
			if after[name] != st {
				st.mu.RLock()
				stopped := st.stopped
				st.mu.RUnlock()
				if !stopped {
					t.Errorf("%s: the store %s replaced or dropped still runs", step.name, name)
				}
			}
		}
	}
}

// testClientOn is testClient on the connection named by host.
func testClientOn(host string) *member.Client {
	cl, err := member.NewClient(&rest.Config{Host: host})
	if err != nil {
		panic(err)
	}
	t := testClient()
	cl.Dynamic, cl.Mapper = t.Dynamic, t.Mapper
	return cl
}

func waitFor(cond func() bool) error {
	for range 100 {
		if cond() {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return context.DeadlineExceeded
}
