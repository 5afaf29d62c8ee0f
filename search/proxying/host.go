package proxying

import (
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"
)

// NewHostHandler returns the control-plane plugin's handler: a reverse
// proxy to the host API server that impersonates the caller (user, UID,
// groups and extras) with the server's credentials, so the host's RBAC
// decides what the caller may do. The server's credentials need
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
				pr.SetURL(target)
				pr.Out.URL.Path, pr.Out.URL.RawPath = joinURLPath(target.Path, req.URL.Path), ""
				pr.Out.Host = target.Host
				for k := range pr.Out.Header {
					if strippedHeader(k) {
						pr.Out.Header.Del(k)
					}
				}
			},
			Transport:     transport.NewImpersonatingRoundTripper(impersonation(u), rt),
			FlushInterval: -1,
		}
		p.ServeHTTP(w, req)
	}), nil
}

func impersonation(u user.Info) transport.ImpersonationConfig {
	groups := make([]string, 0, len(u.GetGroups()))
	for _, g := range u.GetGroups() {
		if g != user.AllAuthenticated && g != user.AllUnauthenticated {
			groups = append(groups, g)
		}
	}
	return transport.ImpersonationConfig{UserName: u.GetName(), UID: u.GetUID(), Groups: groups, Extra: u.GetExtra()}
}

// strippedHeader says whether a client header must not reach the host:
// credentials and identity claims.
func strippedHeader(key string) bool {
	k := strings.ToLower(key)
	return k == "authorization" || k == "proxy-authorization" ||
		strings.HasPrefix(k, "impersonate-") || strings.HasPrefix(k, "x-remote-")
}

func joinURLPath(base, p string) string {
	return strings.TrimSuffix(base, "/") + p
}
