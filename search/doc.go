// Package search serves search.karmada.io's search and proxying endpoints
// from flotilla-apiserver: it assembles the member caches (search/cache),
// their reads with Kubernetes semantics (search/storage), the proxying
// plugins (search/proxying), the full-text index (search/index) and the
// Tables of cached objects (search/table) into the storage the
// search.karmada.io group installs beside resourceregistries, and starts
// the cache in a post-start hook. Every replica of the server runs its own
// cache: it is not leader-elected.
//
// What it owns: the wiring (Options → Config → Complete → New), the
// search/{cache,opensearch,fulltext} endpoints, and the member
// SubjectAccessReviews of the per-user checks.
//
// What it does not own: the ResourceRegistry type and its validation
// (apis/search, registry/), authorization of proxying/proxy and search on
// the control plane (the server's authorizer, before Connect), and the
// member transports of the cluster plugin (proxy/).
package search
