package member

import (
	"io"
	"net/http"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// watchesGauge counts the watches this process holds open on each member,
// by resource: with one hub and one client cache per process, at most one
// per (member, resource) for every reader together.
var watchesGauge = metrics.NewGaugeVec(&metrics.GaugeOpts{
	Namespace: "flotilla", Subsystem: "member", Name: "watches",
	Help:           "Watch requests this process holds open on each member cluster, by resource (resource.group).",
	StabilityLevel: metrics.ALPHA,
}, []string{"cluster", "resource"})

func init() { legacyregistry.MustRegister(watchesGauge) }

// requestInfo parses member request paths as the member's API server does.
var requestInfo = &request.RequestInfoFactory{APIPrefixes: sets.NewString("api", "apis"), GrouplessAPIPrefixes: sets.NewString("api")}

// countWatches wraps a member client's transport so that each watch it
// opens on cluster counts in watchesGauge until its body is closed.
func countWatches(cluster string) func(http.RoundTripper) http.RoundTripper {
	return CountWatches(func(resource string) metrics.GaugeMetric { return watchesGauge.WithLabelValues(cluster, resource) })
}

// CountWatches wraps a client's transport so that each watch it opens
// counts in gauge(resource) (resource.group) until its body is closed: the
// member clients count in flotilla_member_watches, the server's own
// loopback clients in theirs.
func CountWatches(gauge func(resource string) metrics.GaugeMetric) func(http.RoundTripper) http.RoundTripper {
	return func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			// Only a request asking to watch is parsed: this wraps every
			// request of the client.
			if !strings.Contains(req.URL.RawQuery, "watch=") {
				return rt.RoundTrip(req)
			}
			info, err := requestInfo.NewRequestInfo(req)
			if err != nil || info.Verb != "watch" || !info.IsResourceRequest {
				return rt.RoundTrip(req)
			}
			resp, err := rt.RoundTrip(req)
			if err != nil || resp.StatusCode != http.StatusOK {
				return resp, err
			}
			g := gauge(schema.GroupResource{Group: info.APIGroup, Resource: info.Resource}.String())
			g.Inc()
			resp.Body = &countedBody{ReadCloser: resp.Body, done: g.Dec}
			return resp, nil
		})
	}
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// countedBody calls done once, when the watch's body is closed.
type countedBody struct {
	io.ReadCloser
	once sync.Once
	done func()
}

func (b *countedBody) Close() error {
	b.once.Do(b.done)
	return b.ReadCloser.Close()
}
