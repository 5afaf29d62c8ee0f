// Package metricsadapter serves metrics.k8s.io and custom.metrics.k8s.io for
// the control plane by fanning out to the members.
package metricsadapter
