// Package member is the one place Flotilla reaches member clusters from.
//
// Cache builds one client per member: a Push member through its Cluster
// and the control plane's credential Secret (token, caBundle,
// insecureSkipTLSVerification, proxyURL and proxyHeader honoured), a Pull
// member through its agent's tunnel; the client is rebuilt only when those
// connection settings change. Every reader (cluster status, execution,
// search, the proxy, the metrics adapter, the scheduler's estimate,
// FederatedHPA) gets its member clients here. The same Cache holds the
// transport clusters/proxy and proxying/proxy forward users' requests on
// (Transport, transport.go): one immutable snapshot per member with the
// impersonator's token, TLS 1.3 and keep-alives, swapped (and its idle
// connections closed) when the Cluster's connection settings or its
// Secrets change, and an upgrade dialer that tunnels exec, attach and
// port-forward streams through spec.proxyURL (dial.go).
//
// Hub runs one set of informers per member (pods, nodes and
// ResourceQuotas, trimmed once to what their readers need) and serves them
// to every reader in the process: cluster status summaries, the
// scheduler's replica estimate (MaxReplicas; the estimator package does
// the arithmetic), FederatedHPA's pods of a workload, and the metrics
// adapter's choice of members to ask. Where the search cache already holds
// a member's pods or nodes, the hub's informers read that copy (Shared)
// instead of watching the member a second time. Readers register other
// kinds with AddResource (the multi-cluster services controllers:
// ServiceExports, ServiceImports, EndpointSlices): the hub runs one
// informer per member and kind for all of them, in the members that serve
// the kind or, on demand, from a reader's first Watch (resources.go).
//
// The names members, agents and the control plane share (Secret keys, the
// cluster namespace, the agent user prefix, the tunnel host) are declared
// once, in names.go.
package member
