// Package env starts and stops Flotilla's test bed: real Kubernetes control
// planes as local processes on loopback ports, built from the Go module proxy
// by hack/tools (make tools).
//
// An environment is one etcd (each cluster under its own key prefix), a host
// cluster set up as the aggregator (kube-apiserver with the front-proxy
// request-header configuration, and a kube-controller-manager running only
// the namespace, garbage-collector, service-account and cluster-role
// aggregation controllers), and member clusters (kube-apiserver,
// kube-controller-manager, kube-scheduler, kwok with fake nodes on which
// Pods become Running and Ready (except those with an image of
// FakeImageRegistry, whose containers wait in ImagePullBackOff), and
// metrics-server serving metrics.k8s.io
// from kwok's emulated resource usage: a pod uses what its annotations
// kwok.x-k8s.io/usage-cpu and kwok.x-k8s.io/usage-memory say, and
// custom-metrics-emulator serving custom.metrics.k8s.io from pod annotations
// custom-metrics.flotilla.io/<metric>). Trimmed members
// (MemberOptions.Trimmed, TrimmedMembers) run cut down so that twenty fit
// on two cores: a kube-apiserver with minimal admission, a
// kube-controller-manager with the token and namespace controllers only,
// and kwok with one node. Certificates are generated in Go.
//
// The e2e suites start one environment per test binary from TestMain; `make
// up` starts one that outlives it (Options.Detach) and records it in a state
// file that `make down` reads. This package owns processes, certificates and
// readiness. Of Flotilla's own components it only starts flotilla-apiserver
// beside the host (Options.Flotilla) and waits until the host serves its APIs;
// joining members is left to the tests and to `make up`.
package env
