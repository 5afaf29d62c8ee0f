// Package storage answers reads of the multi-cluster cache with Kubernetes
// API semantics: get, list (label and field selectors, limit and continue
// across clusters) and watch (from a multi-cluster resourceVersion), as
// JSON, YAML or a Table, filtered by what the caller may read (Access).
//
// The multi-cluster resourceVersion and continue token are Karmada's
// encodings, in rv.go alone.
//
// What it does not own: the stores (search/cache), routing requests to it
// (search/proxying, search), and printing Tables (search/table, behind
// TableConvertor).
package storage
