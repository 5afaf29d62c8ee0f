// Package proxy forwards requests to member clusters: clusters/{name}/proxy
// with the caller's identity impersonated on the member, per-cluster
// transports, and upgraded streams. It has no storage and no informers.
package proxy
