package proxy

import (
	"strings"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/endpoints/request"
)

// joinPath joins the endpoint's path and the proxied path, keeping the
// proxied path's trailing slash. An empty result stays empty, so that the
// upgrade-aware handler redirects GET clusters/x/proxy to clusters/x/proxy/
// as the Kubernetes proxies do.
func joinPath(base, proxyPath string) string {
	p := utilnet.JoinPreservingTrailingSlash(base, proxyPath)
	if p != "" && !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return p
}

// probeSkippedSubresources are the subresources whose object is probed
// instead: they cannot be fetched with a plain GET (Karmada strips exec and
// log only, which makes pods/x/attach or portforward never found).
var probeSkippedSubresources = sets.New("exec", "log", "attach", "portforward", "proxy")

// probePath rebuilds the path of the object a named resource request is
// about, without the query and without subresources that cannot be fetched.
func probePath(info *request.RequestInfo) string {
	parts := []string{"", info.APIPrefix}
	if info.APIGroup != "" {
		parts = append(parts, info.APIGroup)
	}
	parts = append(parts, info.APIVersion)
	if info.Namespace != "" && (info.Resource != "namespaces" || info.Name != info.Namespace) {
		parts = append(parts, "namespaces", info.Namespace)
	}
	parts = append(parts, info.Resource, info.Name)
	if info.Subresource != "" && !probeSkippedSubresources.Has(info.Subresource) {
		parts = append(parts, info.Subresource)
	}
	return strings.Join(parts, "/")
}
