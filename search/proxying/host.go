package proxying

import (
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"

	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"

	"github.com/flotilla-io/flotilla/proxy"
)

// NewHostHandler returns the control-plane plugin's handler: a reverse
// proxy to the host API server that impersonates the caller (user, UID,
// groups and extras, as proxy/ impersonates them in members) with the
// server's credentials, the client's own credentials and identity headers
// removed, so the host's RBAC decides what the caller may do. The server's credentials need
// "impersonate" on the host.
func NewHostHandler(cfg *rest.Config) (http.Handler, error) {
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("host transport: %w", err)
	}
	target, err := url.Parse(cfg.Host)
	if err != nil {
		return nil, fmt.Errorf("host URL: %w", err)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		u, ok := request.UserFrom(req.Context())
		if !ok || u == nil {
			http.Error(w, "no user in the request context", http.StatusInternalServerError)
			return
		}
		p := &httputil.ReverseProxy{
			Rewrite: func(pr *httputil.ProxyRequest) {
				pr.SetURL(target) // the host's scheme, address, base path and Host header
				pr.Out.Header = proxy.SanitizeHeader(pr.Out.Header)
			},
			Transport:     transport.NewImpersonatingRoundTripper(proxy.ImpersonationFor(u), rt),
			FlushInterval: -1,
		}
		p.ServeHTTP(w, req)
	}), nil
}
