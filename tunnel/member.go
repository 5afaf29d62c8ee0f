package tunnel

import (
	"log"
	"net/http"
	"net/http/httputil"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"k8s.io/streaming/pkg/httpstream"
)

// forwardToMember returns the agent's handler of the control plane's
// requests: a reverse proxy to the member's API server with the member
// configuration's credentials. The Impersonate-* headers of a request are
// kept, so the member's RBAC decides on the impersonated user; credentials
// a request carries are dropped, so the member always authenticates the
// agent. Responses are flushed as they come (watch, logs -f) and 101
// upgrades (exec, attach, port-forward) are spliced.
func forwardToMember(member *rest.Config) (http.Handler, error) {
	target, _, err := rest.DefaultServerUrlFor(member)
	if err != nil {
		return nil, err
	}
	plain, err := rest.TransportFor(member)
	if err != nil {
		return nil, err
	}
	// Upgrades need HTTP/1.1 to the member; Go's transport only keeps
	// WebSocket upgrades off HTTP/2 by itself, not SPDY ones.
	h1 := rest.CopyConfig(member)
	h1.NextProtos = []string{"http/1.1"}
	upgrade, err := rest.TransportFor(h1)
	if err != nil {
		return nil, err
	}
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			for k := range pr.Out.Header {
				if credentialHeader(k) {
					pr.Out.Header.Del(k)
				}
			}
		},
		Transport:     &upgradeSplit{plain: plain, upgrade: upgrade},
		FlushInterval: -1,
		ErrorLog:      log.New(klogWriter{component: "tunnel-proxy"}, "", 0),
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			klog.FromContext(r.Context()).V(2).Info("Forwarding to the member failed", "method", r.Method, "path", r.URL.Path, "err", err)
			writeError(w, apierrors.NewServiceUnavailable("the agent cannot reach its member's API server: "+err.Error()))
		},
	}, nil
}

// credentialHeader says whether a request header carries credentials or a
// front proxy's identity claims, which the member must not see from the
// control plane.
func credentialHeader(key string) bool {
	k := strings.ToLower(key)
	return k == "authorization" || k == "proxy-authorization" || strings.HasPrefix(k, "x-remote-")
}

// upgradeSplit sends upgrade requests through an HTTP/1.1-only transport.
type upgradeSplit struct {
	plain, upgrade http.RoundTripper
}

func (u *upgradeSplit) RoundTrip(r *http.Request) (*http.Response, error) {
	if httpstream.IsUpgradeRequest(r) {
		return u.upgrade.RoundTrip(r)
	}
	return u.plain.RoundTrip(r)
}
