package member

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
)

// builds records what a PerMember built and stopped, as "build m1@a" and
// "stop m1@a" (member @ connection).
type builds struct{ log []string }

func (b *builds) build(name string, cl *Client) (string, func()) {
	id := name + "@" + cl.Key()
	b.log = append(b.log, "build "+id)
	return id, func() { b.log = append(b.log, "stop "+id) }
}

func (b *builds) take() []string {
	out := b.log
	b.log = nil
	slices.Sort(out)
	return out
}

func clientOn(t *testing.T, host string) *Client {
	t.Helper()
	cl, err := NewClient(&rest.Config{Host: host})
	if err != nil {
		t.Fatal(err)
	}
	cl.Clientset = fake.NewClientset()
	return cl
}

// A PerMember builds a member's state when the member arrives, builds it
// again (after stopping the old one) when its connection changes, stops
// it when the member leaves, and leaves it alone otherwise.
func TestPerMember(t *testing.T) {
	t.Parallel()
	a, a2, b := clientOn(t, "a"), clientOn(t, "a2"), clientOn(t, "b")
	sameAsA := clientOn(t, "a") // another client on the same connection
	rec := &builds{}
	p := NewPerMember(rec.build)
	for _, step := range []struct {
		name  string
		do    func()
		log   []string
		state map[string]string
	}{
		{name: "members arrive", do: func() { p.Sync(map[string]*Client{"m1": a, "m2": b}) },
			log: []string{"build m1@a", "build m2@b"}, state: map[string]string{"m1": "m1@a", "m2": "m2@b"}},
		{name: "nothing changed", do: func() { p.Sync(map[string]*Client{"m1": a, "m2": b}) },
			state: map[string]string{"m1": "m1@a", "m2": "m2@b"}},
		{name: "a new client on the same connection", do: func() { p.Sync(map[string]*Client{"m1": sameAsA, "m2": b}) },
			state: map[string]string{"m1": "m1@a", "m2": "m2@b"}},
		{name: "m1's connection changed", do: func() { p.Sync(map[string]*Client{"m1": a2, "m2": b}) },
			log: []string{"build m1@a2", "stop m1@a"}, state: map[string]string{"m1": "m1@a2", "m2": "m2@b"}},
		{name: "m2 leaves", do: func() { p.Sync(map[string]*Client{"m1": a2}) },
			log: []string{"stop m2@b"}, state: map[string]string{"m1": "m1@a2"}},
		{name: "ensured on its connection", do: func() { p.Ensure("m1", a2) },
			state: map[string]string{"m1": "m1@a2"}},
		{name: "ensured on another", do: func() { p.Ensure("m1", a) },
			log: []string{"build m1@a", "stop m1@a2"}, state: map[string]string{"m1": "m1@a"}},
		{name: "ensured anew", do: func() { p.Ensure("m3", b) },
			log: []string{"build m3@b"}, state: map[string]string{"m1": "m1@a", "m3": "m3@b"}},
		{name: "deleted", do: func() { p.Delete("m3"); p.Delete("unknown") },
			log: []string{"stop m3@b"}, state: map[string]string{"m1": "m1@a"}},
		{name: "all leave", do: func() { p.Sync(nil) },
			log: []string{"stop m1@a"}, state: map[string]string{}},
	} {
		step.do()
		if got := rec.take(); !slices.Equal(got, step.log) {
			t.Errorf("%s: %v, want %v", step.name, got, step.log)
		}
		got := map[string]string{}
		for _, name := range p.Names() {
			v, _ := p.Get(name)
			got[name] = v
		}
		if len(got) != len(step.state) {
			t.Errorf("%s: states %v, want %v", step.name, got, step.state)
		}
		for name, want := range step.state {
			if got[name] != want {
				t.Errorf("%s: state of %s %q, want %q", step.name, name, got[name], want)
			}
		}
	}
}

// The hub drives a registered PerMember with its own members: built for
// those running at registration and those that start, again when a
// member's connection changes, stopped when a member stops (its Cluster
// gone or no longer Ready) and for all when the registration's context
// ends.
func TestHubRegister(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := func(name string) *clusterv1alpha1.Cluster {
		return &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: clusterv1alpha1.ClusterStatus{
			Conditions: []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionTrue}}}}
	}
	clusters := []*clusterv1alpha1.Cluster{ready("m1")}
	clients := map[string]*Client{"m1": clientOn(t, "a"), "m2": clientOn(t, "b")}
	s := NewHub(func() ([]*clusterv1alpha1.Cluster, error) { return clusters, nil },
		func(c *clusterv1alpha1.Cluster) (*Client, error) { return clients[c.Name], nil })
	s.runCtx = ctx
	if err := s.sync(ctx); err != nil {
		t.Fatal(err)
	}
	rec := &builds{}
	p := NewPerMember(rec.build)
	regCtx, unregister := context.WithCancel(ctx)
	s.Register(regCtx, p)
	for _, step := range []struct {
		name   string
		change func()
		log    []string
	}{
		{name: "registered", change: func() {}, log: []string{"build m1@a"}},
		{name: "a member starts", change: func() { clusters = append(clusters, ready("m2")) }, log: []string{"build m2@b"}},
		{name: "nothing changed", change: func() {}},
		{name: "m1's Secret changed", change: func() { clients["m1"] = clientOn(t, "a2") }, log: []string{"build m1@a2", "stop m1@a"}},
		{name: "m2 no longer Ready", change: func() { clusters[1] = &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "m2"}} },
			log: []string{"stop m2@b"}},
		{name: "m1 removed", change: func() { clusters = clusters[1:] }, log: []string{"stop m1@a2"}},
		{name: "m1 back", change: func() { clusters = append(clusters, ready("m1")) }, log: []string{"build m1@a2"}},
	} {
		step.change()
		if err := s.sync(ctx); err != nil {
			t.Fatal(err)
		}
		if got := rec.take(); !slices.Equal(got, step.log) {
			t.Errorf("%s: %v, want %v", step.name, got, step.log)
		}
		for _, name := range p.Names() {
			if _, ok := s.Member(name); !ok {
				t.Errorf("%s: state for %s, whose informers do not run", step.name, name)
			}
		}
	}
	// Ensure builds it too; the registration ending stops every state.
	s.Ensure("m9", clientOn(t, "z"))
	if got := rec.take(); !slices.Equal(got, []string{"build m9@z"}) {
		t.Errorf("Ensure: %v, want [build m9@z]", got)
	}
	unregister()
	deadline := time.Now().Add(5 * time.Second)
	for len(p.Names()) > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	s.mu.Lock()
	got := rec.take()
	s.mu.Unlock()
	if strings.Join(got, ",") != "stop m1@a2,stop m9@z" {
		t.Errorf("after the registration ended: %v, want m1 and m9 stopped", got)
	}
	if err := s.sync(ctx); err != nil {
		t.Fatal(err)
	}
	if got := rec.take(); len(got) != 0 {
		t.Errorf("a sync after the registration ended: %v", got)
	}
}
