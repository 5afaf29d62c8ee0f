package security

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// proxyRaw sends method to path under clusters/{cluster}/proxy as cfg's
// user and returns the status code and body.
func proxyRaw(t *testing.T, cfg *rest.Config, cluster, method, path, body string) (int, string) {
	t.Helper()
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, cfg.Host+"/apis/cluster.karmada.io/v1alpha1/clusters/"+cluster+"/proxy"+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }() // best effort: only read from
	// The host's /metrics passes a mebibyte once the suite has run a while.
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	return resp.StatusCode, string(b)
}

// TestProxyHostPathsAsCaller: clusters/*/proxy sends the control plane's
// own non-resource paths to the host as the caller, and only GET and HEAD;
// clusters/member1/proxy sends them to member1 as the caller. A user
// allowed the proxies but nothing on the host or the member cannot read the
// host's /metrics or change anyone's log verbosity.
func TestProxyHostPathsAsCaller(t *testing.T) {
	framework.ProxyServiceAccountConfig(t, "mallory-proxy", "member1")
	mallory := framework.ProxyServiceAccountConfig(t, "mallory-proxy", "*")
	admin, err := framework.Env.Host.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		who          string
		cfg          *rest.Config
		cluster      string
		method, path string
		code         int
		says         string
	}{
		{"mallory", mallory, "*", http.MethodPut, "/debug/flags/v", http.StatusMethodNotAllowed, "non-resource paths are forwarded to the control plane for GET and HEAD only"},
		{"mallory", mallory, "*", http.MethodGet, "/metrics", http.StatusForbidden, `User \"system:serviceaccount:default:mallory-proxy\" cannot get path \"/metrics\"`},
		{"mallory", mallory, "*", http.MethodGet, "/debug/pprof/heap", http.StatusForbidden, "mallory-proxy"},
		{"mallory", mallory, "member1", http.MethodPut, "/debug/flags/v", http.StatusForbidden, `User \"system:serviceaccount:default:mallory-proxy\" cannot put path \"/debug/flags/v\"`},
		{"mallory", mallory, "member1", http.MethodGet, "/metrics", http.StatusForbidden, "mallory-proxy"},
		// Discovery stays open to any authenticated caller, as on the host.
		{"mallory", mallory, "*", http.MethodGet, "/version", http.StatusOK, "gitVersion"},
		{"the admin", admin, "*", http.MethodGet, "/metrics", http.StatusOK, "apiserver_request_total"},
		{"the admin", admin, "*", http.MethodPut, "/debug/flags/v", http.StatusMethodNotAllowed, "GET and HEAD only"},
	} {
		code, body := proxyRaw(t, tc.cfg, tc.cluster, tc.method, tc.path, "10")
		if code != tc.code || !strings.Contains(body, tc.says) {
			t.Errorf("%s: %s clusters/%s/proxy%s: %d %.300s; want %d saying %s", tc.who, tc.method, tc.cluster, tc.path, code, body, tc.code, tc.says)
		}
	}
}

// nodeMetricsRule reads node metrics.
var nodeMetricsRule = rbacv1.PolicyRule{APIGroups: []string{"metrics.k8s.io"}, Resources: []string{"nodes"}, Verbs: []string{"get", "list"}}

// grantNodeMetrics lets the service account default/<sa> of the control
// plane read node metrics in member (it reaches members impersonated).
func grantNodeMetrics(t *testing.T, member kubernetes.Interface, sa string) {
	t.Helper()
	grant(t, member, "node-metrics", user("system:serviceaccount:default:"+sa), nodeMetricsRule)
}

// TestMetricsOnlyReachableMembers: anyone allowed node metrics on the
// control plane sees the nodes of the members they may reach through
// clusters/{name}/proxy, and only where the member lets them read node
// metrics; never another member's node names.
func TestMetricsOnlyReachableMembers(t *testing.T) {
	host := framework.HostClient(t)
	users := map[string][]string{
		// mallory may reach member1 only; both members let her read.
		"mallory-metrics": {"member1"},
		// trudy may reach both; only member1 lets her read.
		"trudy-metrics": {"member1", "member2"},
	}
	configs := map[string]*rest.Config{}
	for sa, clusters := range users {
		for _, c := range clusters {
			configs[sa] = framework.ProxyServiceAccountConfig(t, sa, c)
		}
		grant(t, host, "control-plane-node-metrics", serviceAccount(sa), nodeMetricsRule)
	}
	grantNodeMetrics(t, framework.MemberClient(t, "member1"), "mallory-metrics")
	grantNodeMetrics(t, framework.MemberClient(t, "member2"), "mallory-metrics")
	grantNodeMetrics(t, framework.MemberClient(t, "member1"), "trudy-metrics")

	clustersOf := func(ctx context.Context, cfg *rest.Config) ([]string, error) {
		list, err := metricsclient.NewForConfigOrDie(cfg).MetricsV1beta1().NodeMetricses().List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		var out []string
		for _, n := range list.Items {
			c := n.Annotations["resource.karmada.io/query-from-cluster"]
			if !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
		slices.Sort(out)
		return out, nil
	}
	// The admin sees both members once metrics-server has scraped.
	admin, err := framework.Env.Host.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 2*time.Minute, func(ctx context.Context) string {
		got, err := clustersOf(ctx, admin)
		if err != nil {
			return err.Error()
		}
		if !slices.Equal(got, []string{"member1", "member2"}) {
			return fmt.Sprintf("the admin sees node metrics of %v", got)
		}
		return ""
	})
	for sa, cfg := range configs {
		got, err := clustersOf(t.Context(), cfg)
		if err != nil {
			t.Errorf("%s: %v", sa, err)
			continue
		}
		if !slices.Equal(got, []string{"member1"}) {
			t.Errorf("%s sees node metrics of %v, want member1 only", sa, got)
		}
	}
}
