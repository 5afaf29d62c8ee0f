package inprocess

import (
	"errors"
	"strconv"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

var (
	// requests counts in-process requests with apiserver_request_total's
	// labels, so that one query over both counts every request the
	// server's storage served.
	requests = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace: "flotilla", Subsystem: "inprocess", Name: "requests_total",
		Help:           "Requests code inside flotilla-apiserver (the embedded controllers, the member hub, search) made to the server's storage in process, by verb, group, version, resource, subresource and HTTP code of the answer.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"verb", "group", "version", "resource", "subresource", "code"})
	duration = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Namespace: "flotilla", Subsystem: "inprocess", Name: "request_duration_seconds",
		Help:           "How long in-process requests to flotilla-apiserver's storage took, by verb and resource (watches: until they were established).",
		Buckets:        []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5},
		StabilityLevel: metrics.ALPHA,
	}, []string{"verb", "resource"})
	// watches counts the open in-process watches, by resource.group.
	watches = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Namespace: "flotilla", Subsystem: "inprocess", Name: "watches",
		Help:           "Watches code inside flotilla-apiserver holds open on the server's storage in process, by resource (resource.group).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"resource"})
)

func init() { legacyregistry.MustRegister(requests, duration, watches) }

// record returns what counts a request when it ends.
func (s *Storage) record(verb string, gvr schema.GroupVersionResource, sub string, start time.Time) func(error) {
	return func(err error) {
		code := 200
		if verb == "POST" {
			code = 201
		}
		var st apierrors.APIStatus
		switch {
		case err == nil:
		case errors.As(err, &st):
			code = int(st.Status().Code)
		default:
			code = 500
		}
		requests.WithLabelValues(verb, gvr.Group, gvr.Version, gvr.Resource, sub, strconv.Itoa(code)).Inc()
		duration.WithLabelValues(verb, gvr.Resource).Observe(time.Since(start).Seconds())
	}
}

// countedWatch takes itself out of the watches gauge when stopped.
type countedWatch struct {
	watch.Interface
	once *sync.Once
	done func()
}

func (w countedWatch) Stop() {
	w.Interface.Stop()
	w.once.Do(w.done)
}
