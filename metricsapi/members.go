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
// each member are built once per connection.
type members struct {
	set     *member.Hub
	timeout time.Duration

	mu      sync.Mutex
	clients map[string]*metricsClients
}

// metricsClients are one member's metrics clients, for one connection.
type metricsClients struct {
	key      string
	resource metricsclient.MetricsV1beta1Interface
	custom   custom_metrics.CustomMetricsClient
	client   *member.Client
}

var _ provider.Members = &members{}

func newMembers(set *member.Hub, timeout time.Duration) *members {
	return &members{set: set, timeout: timeout, clients: map[string]*metricsClients{}}
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

// clientsOf returns the metrics clients of a member, built anew when its
// connection changed.
func (m *members) clientsOf(cluster string) (*metricsClients, error) {
	mem, ok := m.set.Member(cluster)
	if !ok {
		return nil, fmt.Errorf("cluster %q is not ready", cluster)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.clients[cluster]; ok && c.key == mem.Client.Key() {
		return c, nil
	}
	cfg := rest.CopyConfig(mem.Client.Config)
	// The custom metrics client takes no context: its requests end here.
	cfg.Timeout = m.timeout
	// metrics.k8s.io speaks protobuf (metrics-server serves it, the
	// member's aggregator passes it through): decoding a member's thousand
	// PodMetrics costs a fraction of JSON's.
	pcfg := rest.CopyConfig(cfg)
	pcfg.ContentType = runtime.ContentTypeProtobuf
	pcfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	resource, err := metricsclient.NewForConfig(pcfg)
	if err != nil {
		return nil, err
	}
	custom := custom_metrics.NewForConfig(cfg, mem.Client.Mapper, custom_metrics.NewAvailableAPIsGetter(mem.Client.Clientset.Discovery()))
	c := &metricsClients{key: mem.Client.Key(), resource: resource, custom: custom, client: mem.Client}
	m.clients[cluster] = c
	return c, nil
}
