package server

import (
	"context"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/flotilla-io/flotilla/tunnel"
)

// TunnelRelayOptions let several replicas serve every Pull cluster: a
// request for a cluster whose agent is connected to another replica goes
// through that replica (tunnel.Relay).
type TunnelRelayOptions struct {
	// Address is where the other replicas reach this one (host:port of its
	// secure port). Empty: no relay, for a single replica.
	Address string
}

// installTunnelRelay sets up the relay once the server serves: it learns
// the name the host gives this server's credentials (a SelfSubjectReview),
// which is the only identity the replicas accept relays from, and reaches
// the others with those credentials, verifying their serving certificate
// against this server's CA bundle (so every replica must share it, as the
// chart's generated certificate is).
func (c CompletedConfig) installTunnelRelay(g *genericapiserver.GenericAPIServer, tunnels *tunnel.Server) error {
	if c.TunnelRelay.Address == "" || c.HostConfig == nil {
		return nil
	}
	ca, err := caBundle(c.APIService, c.Serving)
	if err != nil {
		return fmt.Errorf("tunnel relay: the CA of the other replicas: %w", err)
	}
	peer := rest.CopyConfig(c.HostConfig)
	peer.CAFile, peer.CAData = "", ca
	peer.Insecure = false
	peer.ServerName = c.APIService.ServiceName + "." + c.APIService.ServiceNamespace + ".svc"
	host, err := kubernetes.NewForConfig(c.HostConfig)
	if err != nil {
		return err
	}
	dir := &tunnel.LeaseDirectory{Leases: host.CoordinationV1(), Namespace: c.APIService.ServiceNamespace, Self: c.TunnelRelay.Address}
	return g.AddPostStartHook("start-tunnel-relay", func(hctx genericapiserver.PostStartHookContext) error {
		go func() {
			logger := klog.FromContext(hctx)
			var identity string
			_ = wait.PollUntilContextCancel(hctx, time.Second, true, func(ctx context.Context) (bool, error) {
				r, err := host.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
				if err != nil {
					logger.Error(err, "Learning this server's name on the host for the tunnel relay; retrying")
					return false, nil
				}
				identity = r.Status.UserInfo.Username
				return true, nil
			})
			if identity == "" {
				return
			}
			if err := tunnels.SetRelay(&tunnel.Relay{Self: c.TunnelRelay.Address, Identity: identity, Directory: dir, Peer: peer}); err != nil {
				logger.Error(err, "Starting the tunnel relay")
				return
			}
			logger.Info("Tunnel relay started", "address", c.TunnelRelay.Address, "identity", identity)
		}()
		return nil
	})
}
