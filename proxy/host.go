package proxy

import (
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/registry/rest"
	clientrest "k8s.io/client-go/rest"
	clienttransport "k8s.io/client-go/transport"
	"k8s.io/klog/v2"
)

// host is where clusters/*/proxy sends non-resource paths: the host API
// server, reached with flotilla-apiserver's own credentials, which every
// request impersonates the caller with.
type host struct {
	location *url.URL
	// rt carries the server's credentials; it is only ever used wrapped in
	// an impersonating round tripper (serveHost).
	rt http.RoundTripper
}

// WithHost returns the option making clusters/*/proxy forward non-resource
// paths (/version, /apis, /metrics, /debug/pprof/...) to the host API
// server cfg reaches. Each request is sent as the caller: the server's
// credentials (cfg's, which need the impersonate verb on the host for users,
// groups, serviceaccounts, uids and userextras) with the caller's
// Impersonate-User, -Uid, -Group and -Extra-* headers, so the host's RBAC
// decides what the caller may read. Only GET and HEAD are forwarded: the
// non-resource paths that change something (PUT /debug/flags/v sets the log
// level) have nothing to do with members. Without this option those paths
// answer 404.
func WithHost(cfg *clientrest.Config) (Option, error) {
	location, _, err := clientrest.DefaultServerUrlFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("host URL: %w", err)
	}
	rt, err := clientrest.TransportFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("host transport: %w", err)
	}
	h := &host{location: location, rt: rt}
	return func(c *Connecter) { c.host = h }, nil
}

// hostMethods are the methods forwarded to the host.
var hostMethods = map[string]bool{http.MethodGet: true, http.MethodHead: true}

// serveHost forwards a non-resource path to the host as u.
func (c *Connecter) serveHost(w http.ResponseWriter, req *http.Request, u user.Info, p string, r rest.Responder) {
	if c.host == nil {
		r.Error(statusError(http.StatusNotFound, metav1.StatusReasonNotFound, "",
			"path %q is not a resource path; clusters/*/proxy only serves resources", p))
		return
	}
	if !hostMethods[req.Method] {
		r.Error(statusError(http.StatusMethodNotAllowed, metav1.StatusReasonMethodNotAllowed, "",
			"%s %s is not allowed through clusters/*/proxy: non-resource paths are forwarded to the control plane for GET and HEAD only",
			req.Method, p))
		return
	}
	imp := ImpersonationFor(u)
	// Without a user name there is nothing to impersonate, and the host
	// would take the request as the server's own.
	if imp.UserName == "" {
		r.Error(statusError(http.StatusForbidden, metav1.StatusReasonForbidden, "",
			"the request has no user name to send to the control plane as"))
		return
	}
	out := req.Clone(req.Context())
	out.URL.Path, out.URL.RawPath = p, ""
	out.RequestURI = out.URL.RequestURI()
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(c.host.location) // the host's scheme, address, base path and Host header
			// The impersonating round tripper only adds headers a request
			// does not carry: a client's own must never get there.
			pr.Out.Header = SanitizeHeader(pr.Out.Header)
		},
		Transport:     clienttransport.NewImpersonatingRoundTripper(imp, c.host.rt),
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, req *http.Request, err error) {
			klog.FromContext(req.Context()).V(2).Info("Forwarding to the host failed", "path", p, "err", err)
			r.Error(statusError(http.StatusServiceUnavailable, metav1.StatusReasonServiceUnavailable, "",
				"the control plane cannot be reached: %v", err))
		},
	}
	proxy.ServeHTTP(w, out)
}
