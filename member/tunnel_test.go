package member

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
)

func TestPullClusterThroughTunnel(t *testing.T) {
	t.Parallel()
	// The agent's end of the tunnel: plain HTTP, whatever the host.
	var hosts []string
	agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hosts = append(hosts, r.Host)
		if r.Header.Get("Authorization") != "" {
			t.Errorf("a tunnel request carries credentials: %q", r.Header.Get("Authorization"))
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"major":"1","minor":"36","gitVersion":"v1.36.3"}`)
	}))
	defer agent.Close()
	connected := false
	var d net.Dialer
	c := NewCache(nil) // no secret is ever read
	c.Tunnel = func(cluster string) (DialFunc, bool) {
		if cluster != "member3" {
			t.Errorf("tunnel of %q asked", cluster)
		}
		return func(ctx context.Context, _, _ string) (net.Conn, error) {
			return d.DialContext(ctx, "tcp", agent.Listener.Addr().String())
		}, connected
	}
	pull := &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "member3"},
		Spec:       clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Pull, APIEndpoint: "https://192.0.2.1:6443"},
	}

	if _, err := c.Get(pull); err == nil {
		t.Fatal("a client of a Pull cluster whose agent is not connected")
	}
	connected = true
	cl, err := c.Get(pull)
	if err != nil {
		t.Fatal(err)
	}
	if cl.Config.Host != "http://member3.tunnel" || cl.Config.BearerToken != "" || cl.Key() != tunnelKey {
		t.Errorf("tunnel client: host %q, token %q, key %q", cl.Config.Host, cl.Config.BearerToken, cl.Key())
	}
	v, err := cl.Clientset.Discovery().ServerVersion()
	if err != nil || v.GitVersion != "v1.36.3" {
		t.Fatalf("server version through the tunnel = %v, %v", v, err)
	}
	if len(hosts) == 0 || hosts[0] != "member3.tunnel" {
		t.Errorf("the agent saw hosts %q", hosts)
	}

	// A reconnect does not replace the client (its informers survive).
	connected = false
	if again, err := c.Get(pull); err != nil || again != cl {
		t.Errorf("Get while reconnecting = %p, %v; want the same client", again, err)
	}

	// Push clusters still need their secret.
	push := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member1"}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push}}
	if _, err := c.Get(push); err == nil {
		t.Error("a Push cluster without secretRef got a client")
	}
}
