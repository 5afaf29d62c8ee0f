// Package metricsapi serves metrics.k8s.io and custom.metrics.k8s.io for
// the control plane by fanning out to the members.
//
// The members are read with the control plane's credentials, so a caller
// is only shown the members it may reach through clusters/{name}/proxy on
// the control plane, and in each only the metrics the member's own RBAC
// lets it read (package memberaccess, switched off with
// --metrics-member-authorization=false).
package metricsapi
