package provider

import (
	"context"
	"sort"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/klog/v2"
	"k8s.io/metrics/pkg/apis/custom_metrics"
	custommetricsv1beta2 "k8s.io/metrics/pkg/apis/custom_metrics/v1beta2"
	cmprovider "sigs.k8s.io/custom-metrics-apiserver/pkg/provider"

	memberaccess "github.com/flotilla-io/flotilla/member/access"
)

// Custom is the custom.metrics.k8s.io provider: every member's custom
// metrics API asked at once (those the caller may read), the values of one
// object summed across them.
type Custom struct {
	Members Members
	Timeout time.Duration
	// Access decides which members the caller may read; nil allows none.
	Access *memberaccess.Checker
	// Mapper maps the resource of a request to its kind (the member
	// clients address objects by kind).
	Mapper meta.RESTMapper
	// ListInterval is how long the union of the members' metrics is
	// reused before it is discovered again.
	ListInterval time.Duration

	mu         sync.Mutex
	listed     []cmprovider.CustomMetricInfo
	byCluster  map[string][]cmprovider.CustomMetricInfo
	listedAt   time.Time
	refreshing bool
}

var _ cmprovider.CustomMetricsProvider = &Custom{}

// GetMetricByName sums one object's metric over every member that has it.
func (p *Custom) GetMetricByName(ctx context.Context, name types.NamespacedName, info cmprovider.CustomMetricInfo, metricSelector labels.Selector) (*custom_metrics.MetricValue, error) {
	gk, err := p.kindOf(info)
	if err != nil {
		return nil, err
	}
	clusters := readable(ctx, p.Access, p.Members.Clusters(), customAttrs(info, name.Namespace, name.Name))
	answers := gather(ctx, clusters, p.Timeout, func(ctx context.Context, cluster string) (*custommetricsv1beta2.MetricValue, error) {
		c, err := p.Members.CustomMetrics(cluster)
		if err != nil {
			return nil, err
		}
		if info.Namespaced {
			return c.NamespacedMetrics(name.Namespace).GetForObject(gk, name.Name, info.Metric, metricSelector)
		}
		return c.RootScopedMetrics().GetForObject(gk, name.Name, info.Metric, metricSelector)
	})
	var sum *custom_metrics.MetricValue
	failed := map[string]error{}
	for _, a := range answers {
		if a.err != nil {
			if !apierrors.IsNotFound(a.err) {
				failed[a.cluster] = a.err
			}
			continue
		}
		var v custom_metrics.MetricValue
		if err := custommetricsv1beta2.Convert_v1beta2_MetricValue_To_custom_metrics_MetricValue(a.value, &v, nil); err != nil {
			return nil, err
		}
		sum = add(sum, &v)
	}
	warnMissing(ctx, failed)
	if sum == nil {
		if len(failed) > 0 {
			return nil, unavailable(failed)
		}
		return nil, cmprovider.NewMetricNotFoundForError(info.GroupResource, info.Metric, name.Name)
	}
	return sum, nil
}

// GetMetricBySelector asks every member for the objects matching selector
// and sums the values of each object (by namespace and name) across them.
func (p *Custom) GetMetricBySelector(ctx context.Context, namespace string, selector labels.Selector, info cmprovider.CustomMetricInfo, metricSelector labels.Selector) (*custom_metrics.MetricValueList, error) {
	gk, err := p.kindOf(info)
	if err != nil {
		return nil, err
	}
	clusters := p.Members.Clusters()
	if info.GroupResource == (schema.GroupResource{Resource: "pods"}) {
		clusters = p.Members.PodClusters(namespace, selector)
	}
	clusters = readable(ctx, p.Access, clusters, customAttrs(info, namespace, "*"))
	answers := gather(ctx, clusters, p.Timeout, func(ctx context.Context, cluster string) (*custommetricsv1beta2.MetricValueList, error) {
		c, err := p.Members.CustomMetrics(cluster)
		if err != nil {
			return nil, err
		}
		if info.Namespaced {
			return c.NamespacedMetrics(namespace).GetForObjects(gk, selector, info.Metric, metricSelector)
		}
		return c.RootScopedMetrics().GetForObjects(gk, selector, info.Metric, metricSelector)
	})
	byObject := map[types.NamespacedName]*custom_metrics.MetricValue{}
	var order []types.NamespacedName
	failed := map[string]error{}
	for _, a := range answers {
		if a.err != nil {
			if !apierrors.IsNotFound(a.err) {
				failed[a.cluster] = a.err
			}
			continue
		}
		for i := range a.value.Items {
			var v custom_metrics.MetricValue
			if err := custommetricsv1beta2.Convert_v1beta2_MetricValue_To_custom_metrics_MetricValue(&a.value.Items[i], &v, nil); err != nil {
				return nil, err
			}
			key := types.NamespacedName{Namespace: v.DescribedObject.Namespace, Name: v.DescribedObject.Name}
			if _, ok := byObject[key]; !ok {
				order = append(order, key)
			}
			byObject[key] = add(byObject[key], &v)
		}
	}
	if len(failed) == len(answers) && len(answers) > 0 {
		return nil, unavailable(failed)
	}
	warnMissing(ctx, failed)
	sort.Slice(order, func(i, j int) bool { return order[i].String() < order[j].String() })
	out := &custom_metrics.MetricValueList{Items: make([]custom_metrics.MetricValue, 0, len(order))}
	for _, k := range order {
		out.Items = append(out.Items, *byObject[k])
	}
	return out, nil
}

// ListAllMetrics returns the union of the metrics the members served when
// last asked; an answer older than ListInterval starts a new round in the
// background, so the call never waits on a member.
func (p *Custom) ListAllMetrics() []cmprovider.CustomMetricInfo {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.refreshing && time.Since(p.listedAt) > p.ListInterval {
		p.refreshing = true
		go p.refresh()
	}
	return p.listed
}

// ListMetricsFor is ListAllMetrics narrowed to the caller in ctx: the
// union of the metrics of the clusters it may reach through
// clusters/{name}/proxy, what the group's discovery shows it. Without a
// caller or an Access, nothing.
func (p *Custom) ListMetricsFor(ctx context.Context) []cmprovider.CustomMetricInfo {
	p.ListAllMetrics() // starts a refresh when the lists are old
	p.mu.Lock()
	byCluster := p.byCluster
	p.mu.Unlock()
	u, ok := genericapirequest.UserFrom(ctx)
	if p.Access == nil || !ok || u == nil || len(byCluster) == 0 {
		return nil
	}
	req := p.Access.Request(u)
	var lists [][]cmprovider.CustomMetricInfo
	for cluster, infos := range byCluster {
		if req.ClusterAllowed(ctx, cluster) {
			lists = append(lists, infos)
		}
	}
	return union(lists...)
}

// Refresh discovers the members' metrics now.
func (p *Custom) refresh() {
	ctx := context.Background()
	answers := gather(ctx, p.Members.Clusters(), p.Timeout, p.Members.CustomMetricInfos)
	byCluster := map[string][]cmprovider.CustomMetricInfo{}
	for _, a := range answers {
		if a.err != nil {
			klog.V(4).InfoS("Listing a member's custom metrics", "cluster", a.cluster, "err", a.err)
			continue
		}
		byCluster[a.cluster] = a.value
	}
	lists := make([][]cmprovider.CustomMetricInfo, 0, len(byCluster))
	for _, l := range byCluster {
		lists = append(lists, l)
	}
	all := union(lists...)
	p.mu.Lock()
	p.listed, p.byCluster, p.listedAt, p.refreshing = all, byCluster, time.Now(), false
	p.mu.Unlock()
}

// union is the metrics of lists, each once, sorted.
func union(lists ...[]cmprovider.CustomMetricInfo) []cmprovider.CustomMetricInfo {
	seen := map[cmprovider.CustomMetricInfo]bool{}
	var out []cmprovider.CustomMetricInfo
	for _, l := range lists {
		for _, info := range l {
			if !seen[info] {
				seen[info] = true
				out = append(out, info)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

func (p *Custom) kindOf(info cmprovider.CustomMetricInfo) (schema.GroupKind, error) {
	gvk, err := p.Mapper.KindFor(info.GroupResource.WithVersion(""))
	if err != nil {
		return schema.GroupKind{}, apierrors.NewBadRequest(err.Error())
	}
	return gvk.GroupKind(), nil
}

// add sums v into sum (nil for the first value): the latest timestamp and
// the widest window win.
func add(sum, v *custom_metrics.MetricValue) *custom_metrics.MetricValue {
	if sum == nil {
		return v
	}
	sum.Value.Add(v.Value)
	if v.Timestamp.After(sum.Timestamp.Time) {
		sum.Timestamp = v.Timestamp
	}
	if v.WindowSeconds != nil && (sum.WindowSeconds == nil || *v.WindowSeconds > *sum.WindowSeconds) {
		sum.WindowSeconds = v.WindowSeconds
	}
	return sum
}
