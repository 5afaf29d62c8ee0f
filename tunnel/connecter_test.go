package tunnel

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	members "github.com/flotilla-io/flotilla/member"
	"github.com/flotilla-io/flotilla/names"
	"github.com/flotilla-io/flotilla/proxy"
)

// responder writes what a connecter reports as a JSON status.
type responder struct{ w http.ResponseWriter }

var _ rest.Responder = responder{}

func (r responder) Object(code int, obj runtime.Object) { r.w.WriteHeader(code) }
func (r responder) Error(err error)                     { writeError(r.w, err) }

func clusters(list ...*clusterv1alpha1.Cluster) func(string) (*clusterv1alpha1.Cluster, error) {
	return func(name string) (*clusterv1alpha1.Cluster, error) {
		for _, c := range list {
			if c.Name == name {
				return c, nil
			}
		}
		return nil, apierrors.NewNotFound(schema.GroupResource{Group: clusterv1alpha1.GroupName, Resource: "clusters"}, name)
	}
}

func cluster(name string, mode clusterv1alpha1.ClusterSyncMode) *clusterv1alpha1.Cluster {
	return &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		// An endpoint the control plane cannot reach: a Pull cluster's
		// requests must not try it.
		Spec: clusterv1alpha1.ClusterSpec{SyncMode: mode, APIEndpoint: "https://192.0.2.1:6443"},
		Status: clusterv1alpha1.ClusterStatus{Conditions: []metav1.Condition{
			{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionTrue},
		}},
	}
}

func TestConnecterRefuses(t *testing.T) {
	t.Parallel()
	c := NewConnecter(NewServer(), clusters(cluster("member1", clusterv1alpha1.Push), cluster("member3", clusterv1alpha1.Pull)))
	if m := c.ConnectMethods(); !slices.Equal(m, []string{http.MethodPost}) {
		t.Errorf("ConnectMethods = %v", m)
	}
	agent := func(name string) context.Context {
		return request.WithUser(context.Background(), &user.DefaultInfo{Name: names.AgentUserPrefix + name})
	}
	for _, tc := range []struct {
		name    string
		ctx     context.Context
		cluster string
		check   func(error) bool
	}{
		{"no user", context.Background(), "member3", apierrors.IsUnauthorized},
		{"another agent", agent("member1"), "member3", apierrors.IsForbidden},
		{"an admin", request.WithUser(context.Background(), &user.DefaultInfo{Name: "system:admin", Groups: []string{"system:masters"}}), "member3", apierrors.IsForbidden},
		{"a push cluster", agent("member1"), "member1", apierrors.IsBadRequest},
		{"a missing cluster", agent("member9"), "member9", apierrors.IsNotFound},
	} {
		h, err := c.Connect(tc.ctx, tc.cluster, c.New(), nil)
		if h != nil || !tc.check(err) {
			t.Errorf("%s: Connect = %v, %v", tc.name, h, err)
		}
	}
	if h, err := c.Connect(agent("member3"), "member3", c.New(), nil); h == nil || err != nil {
		t.Errorf("the agent of member3: Connect = %v, %v", h, err)
	}
}

// tom is a user of the control plane proxied to member3.
var tom = &user.DefaultInfo{Name: "tom", UID: "uid-tom", Groups: []string{"dev", user.AllAuthenticated}}

// proxyFront serves clusters/{name}/proxy/... as tom with a cluster proxy
// reaching Pull clusters through cp's tunnels.
func proxyFront(t *testing.T, cp *controlPlane, list ...*clusterv1alpha1.Cluster) *httptest.Server {
	t.Helper()
	noSecrets := func(namespace, name string) (*corev1.Secret, error) {
		t.Errorf("the proxy read secret %s/%s for a Pull cluster", namespace, name)
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, name)
	}
	cache := members.NewCache(noSecrets)
	cache.Tunnel = cp.tunnels.DialContext
	pc := proxy.NewConnecter(clusters(list...), cache, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/clusters/"), "/proxy", 2)
		ctx := request.WithUser(r.Context(), tom)
		h, err := pc.Connect(ctx, parts[0], &clusterv1alpha1.ClusterProxyOptions{Path: parts[1]}, responder{w})
		if err != nil {
			writeError(w, err)
			return
		}
		h.ServeHTTP(w, r.WithContext(ctx))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestClusterProxyThroughTunnel(t *testing.T) {
	t.Parallel()
	cp, m := newControlPlane(t), newMember(t, "member3")
	front := proxyFront(t, cp, cluster("member3", clusterv1alpha1.Pull))

	resp, err := http.Get(front.URL + "/clusters/member3/proxy/api/v1/pods")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("proxy without agent: %s, want 503", resp.Status)
	}

	startAgent(t, cp, "agent-member3", "member3", m)
	eventually(t, "the agent is connected", func() bool { return cp.tunnels.Connected("member3") })

	// GET, impersonated.
	req, _ := http.NewRequest(http.MethodGet, front.URL+"/clusters/member3/proxy/api/v1/namespaces/default/pods?limit=1", nil)
	req.Header.Set("Authorization", "Bearer tom-token")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"member":"member3"`) {
		t.Fatalf("proxied GET: %s %s", resp.Status, body)
	}
	got := m.last(t)
	if got.URL.Path != "/api/v1/namespaces/default/pods" || got.URL.RawQuery != "limit=1" {
		t.Errorf("member saw %s?%s", got.URL.Path, got.URL.RawQuery)
	}
	for key, want := range map[string][]string{
		"Authorization":     {"Bearer member-token-member3"},
		"Impersonate-User":  {"tom"},
		"Impersonate-Group": {"dev"},
		"Impersonate-Uid":   {"uid-tom"},
	} {
		if v := got.Header.Values(key); !slices.Equal(v, want) {
			t.Errorf("member saw %s = %q, want %q", key, v, want)
		}
	}

	// Watch: the first event arrives before the member sends the second.
	resp, err = http.Get(front.URL + "/clusters/member3/proxy/watch")
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	first := make(chan string, 1)
	go func() {
		line, _ := br.ReadString('\n')
		first <- line
	}()
	select {
	case line := <-first:
		if !strings.Contains(line, "ADDED") {
			t.Fatalf("first event = %q", line)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the watch was not flushed through the proxy and the tunnel")
	}
	close(m.release)
	if line, _ := br.ReadString('\n'); !strings.Contains(line, "MODIFIED") {
		t.Errorf("second event = %q", line)
	}
	_ = resp.Body.Close()

	// Exec: an upgrade spliced through the proxy, the tunnel and the agent.
	conn, err := net.Dial("tcp", front.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	_, _ = fmt.Fprintf(conn, "POST /clusters/member3/proxy/api/v1/namespaces/default/pods/p/exec?command=sh HTTP/1.1\r\n"+
		"Host: %s\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n\r\n", front.Listener.Addr())
	cbr := bufio.NewReader(conn)
	up, err := http.ReadResponse(cbr, nil)
	if err != nil {
		t.Fatal(err)
	}
	if up.StatusCode != http.StatusSwitchingProtocols {
		b, _ := io.ReadAll(up.Body)
		t.Fatalf("exec upgrade: %s %s", up.Status, b)
	}
	echo(t, struct {
		io.Reader
		io.Writer
	}{cbr, conn})
	if got := m.last(t); got.Header.Get("Impersonate-User") != "tom" || got.URL.Path != "/api/v1/namespaces/default/pods/p/exec" {
		t.Errorf("member saw the exec as %q on %s", got.Header.Get("Impersonate-User"), got.URL.Path)
	}
}
