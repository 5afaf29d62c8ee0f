package metricsapi

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned/typed/metrics/v1beta1"
	"k8s.io/metrics/pkg/client/custom_metrics"
	cmprovider "sigs.k8s.io/custom-metrics-apiserver/pkg/provider"

	"github.com/flotilla-io/flotilla/member"
	"github.com/flotilla-io/flotilla/metricsapi/provider"
)

// members is provider.Members over the member informers: they say which
// members have the pods and nodes a request names; the metrics clients of
// each member are built on first use, per connection (a PerMember the hub
// drives: built again when the member's connection changes, dropped when
// it stops).
type members struct {
	set     *member.Hub
	clients *member.PerMember[*metricsClients]
}

// metricsClients are one member's metrics clients, for one connection,
// built on first use.
type metricsClients struct {
	client  *member.Client
	timeout time.Duration

	once     sync.Once
	err      error
	resource metricsclient.MetricsV1beta1Interface
	custom   custom_metrics.CustomMetricsClient
}

var _ provider.Members = &members{}

func newMembers(set *member.Hub, timeout time.Duration) *members {
	m := &members{set: set, clients: member.NewPerMember(func(_ string, cl *member.Client) (*metricsClients, func()) {
		return &metricsClients{client: cl, timeout: timeout}, nil
	})}
	set.Register(context.Background(), m.clients)
	return m
}

func (m *members) Clusters() []string {
	return m.pick(func(member.Member) bool { return true })
}

func (m *members) PodClusters(namespace string, selector labels.Selector) []string {
	return m.pick(func(mem member.Member) bool { return mem.HasPods(namespace, selector) })
}

func (m *members) PodClustersNamed(namespace, name string) []string {
	return m.pick(func(mem member.Member) bool { return mem.HasPod(namespace, name) })
}

func (m *members) NodeClusters(selector labels.Selector) []string {
	return m.pick(func(mem member.Member) bool { return mem.HasNodes(selector) })
}

func (m *members) NodeClustersNamed(name string) []string {
	return m.pick(func(mem member.Member) bool { return mem.HasNode(name) })
}

// pick returns the sorted names of the members keep accepts.
func (m *members) pick(keep func(member.Member) bool) []string {
	var out []string
	for _, mem := range m.set.Members() {
		if keep(mem) {
			out = append(out, mem.Name)
		}
	}
	sort.Strings(out)
	return out
}

func (m *members) ResourceMetrics(cluster string) (metricsclient.MetricsV1beta1Interface, error) {
	c, err := m.clientsOf(cluster)
	if err != nil {
		return nil, err
	}
	return c.resource, nil
}

func (m *members) CustomMetrics(cluster string) (custom_metrics.CustomMetricsClient, error) {
	c, err := m.clientsOf(cluster)
	if err != nil {
		return nil, err
	}
	return c.custom, nil
}

// CustomMetricInfos reads the member's custom.metrics.k8s.io discovery:
// each resource is named "<resource>[.<group>]/<metric>".
func (m *members) CustomMetricInfos(_ context.Context, cluster string) ([]cmprovider.CustomMetricInfo, error) {
	c, err := m.clientsOf(cluster)
	if err != nil {
		return nil, err
	}
	var list []cmprovider.CustomMetricInfo
	for _, v := range []string{"v1beta2", "v1beta1"} {
		res, err := c.client.Clientset.Discovery().ServerResourcesForGroupVersion("custom.metrics.k8s.io/" + v)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, r := range res.APIResources {
			resource, metric, ok := strings.Cut(r.Name, "/")
			if !ok {
				continue
			}
			list = append(list, cmprovider.CustomMetricInfo{GroupResource: schema.ParseGroupResource(resource), Namespaced: r.Namespaced, Metric: metric})
		}
		return list, nil
	}
	return nil, nil
}

// clientsOf returns the metrics clients of a member.
func (m *members) clientsOf(cluster string) (*metricsClients, error) {
	c, ok := m.clients.Get(cluster)
	if !ok {
		return nil, fmt.Errorf("cluster %q is not ready", cluster)
	}
	c.once.Do(c.build)
	return c, c.err
}

func (c *metricsClients) build() {
	cfg := rest.CopyConfig(c.client.Config)
	// The custom metrics client takes no context: its requests end here.
	cfg.Timeout = c.timeout
	// metrics.k8s.io speaks protobuf (metrics-server serves it, the
	// member's aggregator passes it through): decoding a member's thousand
	// PodMetrics costs a fraction of JSON's.
	pcfg := rest.CopyConfig(cfg)
	pcfg.ContentType = runtime.ContentTypeProtobuf
	pcfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	if c.resource, c.err = metricsclient.NewForConfig(pcfg); c.err != nil {
		return
	}
	c.custom = custom_metrics.NewForConfig(cfg, c.client.Mapper, custom_metrics.NewAvailableAPIsGetter(c.client.Clientset.Discovery()))
}
