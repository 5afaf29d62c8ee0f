package tunnel

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"sync"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

// mapDirectory is a Directory in memory, shared by the test's replicas.
type mapDirectory struct {
	mu      sync.Mutex
	holders map[string]string
}

// replicaDirectory is one replica's view of a mapDirectory.
type replicaDirectory struct {
	*mapDirectory
	self string
}

func (d replicaDirectory) Claim(_ context.Context, cluster string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.holders[cluster] = d.self
	return nil
}

func (d replicaDirectory) Release(_ context.Context, cluster string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.holders[cluster] == d.self {
		delete(d.holders, cluster)
	}
	return nil
}

func (d replicaDirectory) Holder(_ context.Context, cluster string) (string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.holders[cluster], nil
}

func (d *mapDirectory) holder(cluster string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.holders[cluster]
}

// replicas starts n control planes relaying to each other through dir; the
// replicas authenticate to each other as identity's token.
func replicas(t *testing.T, n int, token, identity string) ([]*controlPlane, *mapDirectory) {
	t.Helper()
	dir := &mapDirectory{holders: map[string]string{}}
	var cps []*controlPlane
	for range n {
		cp := newControlPlane(t)
		u, err := url.Parse(cp.URL)
		if err != nil {
			t.Fatal(err)
		}
		peer := cp.config(token) // every test control plane serves httptest's one certificate
		if err := cp.tunnels.SetRelay(&Relay{Self: u.Host, Identity: identity, Directory: replicaDirectory{dir, u.Host}, Peer: peer}); err != nil {
			t.Fatal(err)
		}
		cps = append(cps, cp)
	}
	return cps, dir
}

func host(t *testing.T, cp *controlPlane) string {
	t.Helper()
	u, err := url.Parse(cp.URL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// A replica without the agent's tunnel reaches the member through the
// replica holding it, announced in the directory; when the agent leaves,
// the record goes.
func TestRelayThroughHolder(t *testing.T) {
	cps, dir := replicas(t, 2, "admin", "system:admin")
	a, b := cps[0], cps[1]
	m := newMember(t, "member3")
	stop := startAgent(t, a, "agent-member3", "member3", m)
	eventually(t, "the agent's replica is announced", func() bool { return dir.holder("member3") == host(t, a) })

	if _, ok := b.tunnels.DialContext("member3"); !ok {
		t.Error("replica b does not count the agent connected to a as connected")
	}
	if body := get(t, client(t, b.tunnels, "member3"), "member3", "/api/v1/pods"); !strings.Contains(body, `"member":"member3"`) || !strings.Contains(body, `"path":"/api/v1/pods"`) {
		t.Errorf("through the relay: %s", body)
	}
	// The relay adds nothing: the member sees the agent's own credentials.
	if got := m.last(t).Header.Get("Authorization"); got != "Bearer member-token-member3" {
		t.Errorf("the member saw Authorization %q, want the agent's member token", got)
	}

	stop()
	eventually(t, "the record is released", func() bool { return dir.holder("member3") == "" })
	if _, ok := b.tunnels.DialContext("member3"); ok {
		t.Error("replica b counts a disconnected agent as connected")
	}
}

// Only the replicas' identity may relay, a replica relays only its own
// tunnels (no second hop), and a replica never relays to itself.
func TestRelayRefuses(t *testing.T) {
	cps, dir := replicas(t, 2, "admin", "system:admin")
	a, b := cps[0], cps[1]
	m := newMember(t, "member3")
	startAgent(t, a, "agent-member3", "member3", m)
	eventually(t, "the agent's replica is announced", func() bool { return dir.holder("member3") == host(t, a) })

	// Another identity, e.g. the agent of another cluster, may not relay.
	other, err := upgradeClient(a.config("agent-member1"))
	if err != nil {
		t.Fatal(err)
	}
	u, err := tunnelURL(a.config("agent-member1"), "member3")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := upgrade(t.Context(), other, u, RelayProtocol); err == nil || !strings.Contains(err.Error(), "403") || !strings.Contains(err.Error(), "only the control plane's replicas") {
		t.Errorf("relay by the agent of member1: %v, want 403", err)
	}

	// The directory points at b, which has no tunnel: b answers 503 and does not relay on.
	dir.mu.Lock()
	dir.holders["member3"] = host(t, b)
	dir.mu.Unlock()
	c := client(t, a.tunnels, "member3")
	// a has the tunnel itself: it never asks the directory.
	if body := get(t, c, "member3", "/x"); !strings.Contains(body, `"member":"member3"`) {
		t.Errorf("a with its own tunnel: %s", body)
	}
	conn, err := b.tunnels.open(t.Context(), "member3")
	if err == nil {
		_ = conn.Close()
		t.Fatal("b opened a stream to a tunnel the directory says b holds, but b has none")
	}
	var nc *NotConnectedError
	if !errors.As(err, &nc) {
		t.Errorf("b relaying to itself: %v, want NotConnectedError", err)
	}
	// A third replica c, told b holds it, gets b's 503.
	cs, _ := replicas(t, 1, "admin", "system:admin")
	cs[0].tunnels.relay.Directory = replicaDirectory{dir, host(t, cs[0])}
	if _, err := cs[0].tunnels.open(t.Context(), "member3"); err == nil || !strings.Contains(err.Error(), "503") || !strings.Contains(err.Error(), "to this replica") {
		t.Errorf("relay through a replica without the tunnel: %v, want its 503", err)
	}
}

func TestSetRelayValidates(t *testing.T) {
	if err := NewServer().SetRelay(&Relay{Self: "a:1"}); err == nil {
		t.Error("SetRelay took a relay without identity, directory or peer configuration")
	}
}

func TestLeaseDirectory(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewClientset()
	a := &LeaseDirectory{Leases: cs.CoordinationV1(), Namespace: "karmada-system", Self: "10.0.0.1:6443"}
	b := &LeaseDirectory{Leases: cs.CoordinationV1(), Namespace: "karmada-system", Self: "10.0.0.2:6443"}
	holder := func(want string) {
		t.Helper()
		for _, d := range []*LeaseDirectory{a, b} {
			if got, err := d.Holder(ctx, "member3"); err != nil || got != want {
				t.Errorf("%s sees holder %q, %v; want %q", d.Self, got, err, want)
			}
		}
	}
	lease := func() *coordinationv1.Lease {
		t.Helper()
		l, err := cs.CoordinationV1().Leases("karmada-system").Get(ctx, "flotilla-tunnel-member3", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	holder("")
	if err := a.Release(ctx, "member3"); err != nil {
		t.Errorf("release of nothing: %v", err)
	}
	if err := a.Claim(ctx, "member3"); err != nil {
		t.Fatal(err)
	}
	holder("10.0.0.1:6443")
	rv := lease().ResourceVersion
	if err := a.Claim(ctx, "member3"); err != nil {
		t.Fatal(err)
	}
	if lease().ResourceVersion != rv {
		t.Error("a second claim by the holder wrote the Lease")
	}
	if err := b.Claim(ctx, "member3"); err != nil {
		t.Fatal(err)
	}
	holder("10.0.0.2:6443")
	if got := ptr.Deref(lease().Spec.LeaseTransitions, 0); got != 1 {
		t.Errorf("leaseTransitions %d, want 1", got)
	}
	// a's agent session ends after b's began: b's record stays.
	if err := a.Release(ctx, "member3"); err != nil {
		t.Fatal(err)
	}
	holder("10.0.0.2:6443")
	if err := b.Release(ctx, "member3"); err != nil {
		t.Fatal(err)
	}
	holder("")
}
