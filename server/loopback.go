package server

import (
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"

	"github.com/flotilla-io/flotilla/member"
)

// loopbackWatches counts the watches the server's own loopback clients
// hold open on it: one per resource, whatever reads it in the process.
var loopbackWatches = metrics.NewGaugeVec(&metrics.GaugeOpts{
	Namespace: "flotilla", Subsystem: "loopback", Name: "watches",
	Help:           "Watch requests flotilla-apiserver's own loopback clients (member hub, search, embedded controllers) hold open on it, by resource (resource.group).",
	StabilityLevel: metrics.ALPHA,
}, []string{"resource"})

func init() { legacyregistry.MustRegister(loopbackWatches) }

// countLoopbackWatches wraps a loopback client's transport so that its
// watches count in loopbackWatches.
var countLoopbackWatches = member.CountWatches(func(resource string) metrics.GaugeMetric {
	return loopbackWatches.WithLabelValues(resource)
})
