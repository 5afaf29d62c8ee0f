package clusterproxy

import (
	"context"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
)

// Config returns a copy of cp, the control plane's client configuration,
// that reaches cluster's API through clusters/{name}/proxy as cp's user.
func Config(cp *rest.Config, cluster string) *rest.Config {
	c := rest.CopyConfig(cp)
	c.Host = strings.TrimSuffix(cp.Host, "/") + clusterv1alpha1.ProxyPath(cluster)
	return c
}

// Reach asks a member's /version through the proxy (member is Config's),
// so that a caller the control plane refuses the proxy, or a member that
// does not answer, is told so with the control plane's own error
// (Forbidden, NotFound, ServiceUnavailable) before kubectl's discovery
// turns it into "unknown".
func Reach(ctx context.Context, member *rest.Config) error {
	d, err := discovery.NewDiscoveryClientForConfig(member)
	if err != nil {
		return err
	}
	// Error, unlike Raw, decodes the Status of a refusal into its message.
	return d.RESTClient().Get().AbsPath("/version").Do(ctx).Error()
}

// Getter is a genericclioptions.RESTClientGetter of one member, reached
// through the control plane's proxy: the kubeconfig, context and
// namespace flags stay the control plane's.
type Getter struct {
	base    genericclioptions.RESTClientGetter
	cluster string

	once      sync.Once
	config    *rest.Config
	discovery discovery.CachedDiscoveryInterface
	mapper    meta.RESTMapper
	err       error
}

var _ genericclioptions.RESTClientGetter = (*Getter)(nil)

// NewGetter returns the Getter of cluster over base, the control plane's.
func NewGetter(base genericclioptions.RESTClientGetter, cluster string) *Getter {
	return &Getter{base: base, cluster: cluster}
}

// Cluster is the member the Getter reaches.
func (g *Getter) Cluster() string { return g.cluster }

func (g *Getter) init() error {
	g.once.Do(func() {
		cp, err := g.base.ToRESTConfig()
		if err != nil {
			g.err = err
			return
		}
		g.config = Config(cp, g.cluster)
		d, err := discovery.NewDiscoveryClientForConfig(g.config)
		if err != nil {
			g.err = err
			return
		}
		// In memory: a member's discovery is fetched once per command, and
		// never mistaken for the control plane's on disk.
		g.discovery = memory.NewMemCacheClient(d)
		g.mapper = restmapper.NewShortcutExpander(restmapper.NewDeferredDiscoveryRESTMapper(g.discovery), g.discovery, nil)
	})
	return g.err
}

// ToRESTConfig returns the member's configuration.
func (g *Getter) ToRESTConfig() (*rest.Config, error) {
	if err := g.init(); err != nil {
		return nil, err
	}
	return rest.CopyConfig(g.config), nil
}

// ToDiscoveryClient returns the member's discovery, cached in memory.
func (g *Getter) ToDiscoveryClient() (discovery.CachedDiscoveryInterface, error) {
	if err := g.init(); err != nil {
		return nil, err
	}
	return g.discovery, nil
}

// ToRESTMapper maps the member's kinds (short names included).
func (g *Getter) ToRESTMapper() (meta.RESTMapper, error) {
	if err := g.init(); err != nil {
		return nil, err
	}
	return g.mapper, nil
}

// ToRawKubeConfigLoader is the control plane's: the namespace flags and
// the kubeconfig's default namespace apply to the member too.
func (g *Getter) ToRawKubeConfigLoader() clientcmd.ClientConfig {
	return g.base.ToRawKubeConfigLoader()
}
