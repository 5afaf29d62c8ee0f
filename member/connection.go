package member

import (
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// ProxyURL parses spec.proxyURL (http, https or socks5).
func ProxyURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("spec.proxyURL: %w", err)
	}
	switch u.Scheme {
	case "http", "https", "socks5", "socks5h":
	default:
		return nil, fmt.Errorf("spec.proxyURL %q: scheme must be http, https or socks5", u.Redacted())
	}
	if u.Host == "" {
		return nil, fmt.Errorf("spec.proxyURL %q has no host", u.Redacted())
	}
	return u, nil
}

// ProxyHeader turns spec.proxyHeader into the headers of a CONNECT
// request; a value may hold several values separated by commas.
func ProxyHeader(in map[string]string) http.Header {
	if len(in) == 0 {
		return nil
	}
	out := make(http.Header, len(in))
	for k, v := range in {
		for _, part := range strings.Split(v, ",") {
			if part = strings.TrimSpace(part); part != "" {
				out.Add(k, part)
			}
		}
	}
	return out
}

// withProxyConnectHeader sends h on the CONNECT requests of the transport
// client-go builds for a configuration with a Proxy (spec.proxyHeader:
// the proxy in front of a member may want credentials or routing headers).
// client-go never caches a transport with a Proxy, so the one it hands
// here belongs to this configuration alone.
func withProxyConnectHeader(h http.Header) func(http.RoundTripper) http.RoundTripper {
	return func(rt http.RoundTripper) http.RoundTripper {
		if t, ok := rt.(*http.Transport); ok {
			t.ProxyConnectHeader = h.Clone()
		}
		return rt
	}
}

// proxyHeaderKey is spec.proxyHeader in a stable order, for connection keys.
func proxyHeaderKey(h map[string]string) string {
	keys := slices.Sorted(maps.Keys(h))
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%q:%q;", k, h[k])
	}
	return b.String()
}
