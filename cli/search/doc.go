// Package search is flotillactl search: a full-text query over every
// member object the search cache holds (the objects a ResourceRegistry
// caches), answered by flotilla-apiserver's FullTextPath, printed as a
// table with the counts by cluster, kind and namespace.
//
// It does not own the index nor the endpoint (search/ in flotilla-apiserver).
package search
