package proxy

import (
	"errors"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	utilproxy "k8s.io/apimachinery/pkg/util/proxy"
	clienttransport "k8s.io/client-go/transport"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/member"
)

// target is one cluster to proxy to, with its transport from the process's
// member.Cache (an immutable snapshot).
type target struct {
	cluster string
	*member.Transport
}

// roundTripper returns the round tripper for a request made on behalf of the
// impersonated user: impersonation headers, then the impersonator's bearer
// token, then the cluster's transport. Both wrappers only add headers the
// request does not carry, which is why the client's own are stripped first.
func (t *target) roundTripper(imp clienttransport.ImpersonationConfig) http.RoundTripper {
	return clienttransport.NewImpersonatingRoundTripper(imp, t.withToken(t.RoundTripper))
}

// withToken adds the impersonator's bearer token, when the target has one
// (a tunnel target has none: the agent authenticates to its member).
func (t *target) withToken(rt http.RoundTripper) http.RoundTripper {
	if t.Token == "" {
		return rt
	}
	return clienttransport.NewBearerAuthRoundTripper(t.Token, rt)
}

// upgradeRoundTripper returns the upgrade transport for the upgrade-aware
// handler: the same headers as roundTripper are written onto the upgrade
// request (MirrorRequest hands the decorated request back), and the
// connection is dialed with the Upgrade transport's dialer and TLS config.
func (t *target) upgradeRoundTripper(imp clienttransport.ImpersonationConfig) utilproxy.UpgradeRequestRoundTripper {
	return utilproxy.NewUpgradeRequestRoundTripper(t.Upgrade,
		clienttransport.NewImpersonatingRoundTripper(imp, t.withToken(utilproxy.MirrorRequest)))
}

// target returns the target of the named cluster, which must exist and be
// Ready.
func (c *Connecter) target(name string) (*target, error) {
	cluster, err := c.getCluster(name)
	if err != nil {
		if apierrors.IsNotFound(err) {
			c.members.Forget(name)
			return nil, errClusterNotFound(name)
		}
		return nil, apierrors.NewInternalError(fmt.Errorf("getting cluster %q: %w", name, err))
	}
	if cluster == nil {
		return nil, errClusterNotFound(name)
	}
	return c.targetFor(cluster)
}

// targetFor returns the target of a cluster object, which must be Ready.
func (c *Connecter) targetFor(cluster *clusterv1alpha1.Cluster) (*target, error) {
	if !meta.IsStatusConditionTrue(cluster.Status.Conditions, clusterv1alpha1.ClusterConditionReady) {
		return nil, errClusterNotReady(cluster.Name)
	}
	tr, err := c.members.Transport(cluster)
	if err != nil {
		return nil, transportError(cluster.Name, err)
	}
	return &target{cluster: cluster.Name, Transport: tr}, nil
}

// transportError turns the member cache's error into the status the client
// sees.
func transportError(cluster string, err error) error {
	var settings *member.SettingsError
	switch {
	case errors.As(err, &settings):
		return errClusterUnusable(cluster, "%s", settings.Reason)
	case errors.Is(err, member.ErrAgentNotConnected):
		return errAgentNotConnected(cluster)
	}
	return apierrors.NewInternalError(err)
}
