// Package search serves search.karmada.io: ResourceRegistry-driven caches of
// member objects, their full-text index, and the search and proxying REST.
package search
