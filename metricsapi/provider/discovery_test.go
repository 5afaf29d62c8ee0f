package provider

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	cmprovider "sigs.k8s.io/custom-metrics-apiserver/pkg/provider"

	memberaccess "github.com/flotilla-io/flotilla/member/access"
)

// The custom metrics a caller's discovery lists are those of the clusters
// it may reach through clusters/{name}/proxy; nobody's without a caller.
func TestListMetricsFor(t *testing.T) {
	t.Parallel()
	info := func(metric string) cmprovider.CustomMetricInfo {
		return cmprovider.CustomMetricInfo{GroupResource: schema.GroupResource{Resource: "pods"}, Namespaced: true, Metric: metric}
	}
	p := &Custom{Access: &memberaccess.Checker{Host: hostAllows{"member1"}}, ListInterval: time.Hour, listedAt: time.Now(),
		byCluster: map[string][]cmprovider.CustomMetricInfo{
			"member1": {info("qps"), info("latency")},
			"member2": {info("qps"), info("secret_queue_depth")},
		}}
	for _, tc := range []struct {
		name string
		ctx  context.Context
		want string
	}{
		{"tom, member1 only", genericapirequest.WithUser(context.Background(), &user.DefaultInfo{Name: "tom"}), "[pods/latency(namespaced) pods/qps(namespaced)]"},
		{"someone allowed no cluster", genericapirequest.WithUser(context.Background(), &user.DefaultInfo{Name: "eve"}), "[]"},
		{"no caller", context.Background(), "[]"},
	} {
		if got := fmt.Sprint(p.ListMetricsFor(tc.ctx)); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}
