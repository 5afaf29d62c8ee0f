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
// a member's objects of a kind, the hub's informers read that copy
// (Shared) instead of watching the member a second time. Readers register
// other kinds with AddResource, or Handle for a reader that stops (the
// multi-cluster services controllers: ServiceExports, ServiceImports,
// EndpointSlices, Services; the execution controller: every kind it
// applies): the hub runs one informer per member and kind for all of
// them, in the members that serve the kind or, on demand, from a reader's
// first Watch in a member and again whenever that member starts
// (resources.go). The informer selects what its readers select (a label
// selector when they all have the same one, else everything, each
// reader's handler then seeing only its own) and holds objects compact
// (Compact: metadata and JSON) when they all read them so. WatchObject
// watches single objects no selector reaches (execution's objects taken
// over untouched).
//
// State that depends on a member's connection (its endpoint, proxy, TLS
// settings, credentials or tunnel: Client.Key) is a PerMember: built when
// the member arrives, built again when the connection changes, stopped
// when the member leaves, left alone otherwise. The hub keeps its own
// informers so, and drives the PerMembers readers Register (the metrics
// adapter's metrics clients, execution's watches of untouched objects)
// with the members it runs: the Ready ones and those a reader asked for
// with Ensure. The search cache drives its own (its stores, per member)
// with Sync, from the members its ResourceRegistries select.
//
// The names members, agents and the control plane share (Secret keys, the
// cluster namespace, the agent user prefix, the tunnel host) are declared
// once, in names.go.
package member
