package provider

import (
	"context"
	"sync"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/metrics/pkg/apis/custom_metrics"
	"k8s.io/metrics/pkg/apis/metrics"
	cmprovider "sigs.k8s.io/custom-metrics-apiserver/pkg/provider"

	memberaccess "github.com/flotilla-io/flotilla/member/access"
)

// The members are read with the control plane's credentials, so each
// request is narrowed to what its caller could read itself: the clusters
// it may reach through clusters/{name}/proxy on the control plane, and in
// each the metrics the member's RBAC lets it read, checked with the
// attributes the member's own metrics API would check for the same
// request. A caller allowed nothing gets an empty list (or NotFound), and
// the warnings and errors of a response only name clusters it may read.

// readable returns, in order, the clusters of candidates whose member lets
// the caller in ctx do attrs. It fails closed: without an Access or a user,
// nothing is readable.
func readable(ctx context.Context, access *memberaccess.Checker, candidates []string, attrs authorizationv1.ResourceAttributes) []string {
	if access == nil || len(candidates) == 0 {
		return nil
	}
	u, ok := genericapirequest.UserFrom(ctx)
	if !ok || u == nil {
		return nil
	}
	req := access.Request(u)
	keep := make([]bool, len(candidates))
	var wg sync.WaitGroup
	for i, c := range candidates {
		wg.Go(func() { keep[i] = req.Allows(ctx, c, attrs) })
	}
	wg.Wait()
	out := make([]string, 0, len(candidates))
	for i, c := range candidates {
		if keep[i] {
			out = append(out, c)
		}
	}
	return out
}

// metricsAttrs are the attributes of a metrics.k8s.io request: verb get or
// list of pods or nodes, in a namespace for pods ("" for all namespaces,
// which the member only allows with a cluster-wide grant).
func metricsAttrs(verb, resource, namespace, name string) authorizationv1.ResourceAttributes {
	return authorizationv1.ResourceAttributes{
		Verb: verb, Group: metrics.GroupName, Version: "v1beta1", Resource: resource, Namespace: namespace, Name: name,
	}
}

// customAttrs are the attributes a member's API server authorizes a
// custom.metrics.k8s.io request with: verb get, the described objects'
// resource ("pods", "deployments.apps"), the metric as subresource, and
// the object's name ("*" for a selector).
func customAttrs(info cmprovider.CustomMetricInfo, namespace, name string) authorizationv1.ResourceAttributes {
	if info.GroupResource == (schema.GroupResource{Resource: "namespaces"}) && name != "*" {
		// A namespace's own metric is served at /namespaces/{name}/metrics/{metric}.
		return authorizationv1.ResourceAttributes{
			Verb: "get", Group: custom_metrics.GroupName, Resource: "metrics", Namespace: name, Name: info.Metric,
		}
	}
	if !info.Namespaced {
		namespace = ""
	}
	return authorizationv1.ResourceAttributes{
		Verb: "get", Group: custom_metrics.GroupName, Resource: info.GroupResource.String(), Subresource: info.Metric,
		Namespace: namespace, Name: name,
	}
}
