package tunnel

import (
	"context"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
)

// Connecter implements rest.Connecter for the clusters/{name}/tunnel
// subresource: POST with an upgrade to Protocol, by the cluster's agent
// (Authorize), for a cluster in Pull mode. Use NewConnecter.
type Connecter struct {
	server     *Server
	getCluster func(name string) (*clusterv1alpha1.Cluster, error)
}

var (
	_ rest.Connecter = &Connecter{}
	_ rest.Storage   = &Connecter{}
)

// NewConnecter returns the connecter of s's tunnels. getCluster must return
// an error satisfying apierrors.IsNotFound for a missing cluster.
func NewConnecter(s *Server, getCluster func(name string) (*clusterv1alpha1.Cluster, error)) *Connecter {
	return &Connecter{server: s, getCluster: getCluster}
}

// New returns an empty ClusterProxyOptions; it implements rest.Storage. The
// tunnel takes no options, and reuses the proxy's options kind rather than
// adding an API type.
func (c *Connecter) New() runtime.Object { return &clusterv1alpha1.ClusterProxyOptions{} }

// Destroy implements rest.Storage; the server's shutdown closes the tunnels
// (Server.Close).
func (c *Connecter) Destroy() {}

// NewConnectOptions implements rest.Connecter: no subpath.
func (c *Connecter) NewConnectOptions() (runtime.Object, bool, string) {
	return &clusterv1alpha1.ClusterProxyOptions{}, false, ""
}

// ConnectMethods implements rest.Connecter: agents open tunnels with POST
// (verb create).
func (c *Connecter) ConnectMethods() []string { return []string{http.MethodPost} }

// Connect checks that the requester is the cluster's agent and that the
// cluster is in Pull mode, and returns the handler that upgrades the request
// and serves the tunnel until it closes.
func (c *Connecter) Connect(ctx context.Context, name string, _ runtime.Object, r rest.Responder) (http.Handler, error) {
	u, _ := request.UserFrom(ctx)
	if err := Authorize(u, name); err != nil {
		if c.server.authorizeRelay(u, name) != nil {
			return nil, err
		}
		// Another replica: it may only relay.
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			if !isRelayRequest(req) {
				r.Error(err)
				return
			}
			c.server.serveRelay(w, req, name, r.Error)
		}), nil
	}
	cluster, err := c.getCluster(name)
	if err != nil {
		return nil, err
	}
	if cluster.Spec.SyncMode != clusterv1alpha1.Pull {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("cluster %q is in %s mode; only Pull clusters are reached through a tunnel", name, cluster.Spec.SyncMode))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		c.server.accept(w, req, name, r.Error)
	}), nil
}
