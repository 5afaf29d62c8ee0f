// Package index is the full-text index of the objects that the search cache
// holds for member clusters: Pods, Deployments, Nodes and any other resource,
// built on bleve v2 (scorch).
//
// # What it owns
//
// The package owns the bleve index, its mapping, the extraction of index
// fields from an unstructured object, the asynchronous batched writer that
// applies Put, Delete and DeleteResource in order, and the translation of a
// query string plus search scopes into a bleve search with ranking, paging
// and facets.
//
// # What it does not own
//
// It stores no object content: fields are indexed, not stored, and a search
// returns only Keys, which the caller resolves against its own object cache.
// It knows nothing about client-go, informers, ResourceRegistries or
// authorization: the caller turns those into Put and Delete calls and into
// Request.Scopes. It keeps nothing across restarts: Open deletes an index
// left in Options.Dir, because the cache refills from the members on every
// start.
//
// # Document fields
//
// Each object is one document, with the id Key.ID. Its fields are:
//
//   - cluster, group, version, resource, kind, namespace, name, apiVersion:
//     keyword fields from the Key (group is "core" for the core API group;
//     namespace is absent for cluster-scoped objects).
//   - label and annotation: one "key=value" term per label or annotation.
//     labels.KEY and annotations.KEY: one field per key holding its value,
//     so labels.app:web and labels.app.kubernetes.io/name:web work. The
//     kubectl last-applied-configuration annotation is left out.
//   - image: every container image of spec, spec.template.spec and
//     spec.jobTemplate.spec.template.spec (containers, initContainers and
//     ephemeralContainers). A reference is indexed as each of its path
//     suffixes, each with and without its tag or digest:
//     docker.io/library/nginx:1.19 gives docker.io/library/nginx:1.19,
//     docker.io/library/nginx, library/nginx:1.19, library/nginx,
//     nginx:1.19 and nginx. So image:nginx (any tag), image:nginx*,
//     image:library/nginx*, image:docker.io/* and image:"nginx:1.19" all
//     match it.
//   - node: spec.nodeName, and the name of a Node.
//   - phase: status.phase.
//   - condition: "Type=Status" per entry of status.conditions.
//   - text, the default field: every string value of the object (values, not
//     keys) plus the Key's name, namespace and kind, through bleve's standard
//     analyzer (Unicode words, lower-cased, English stop words dropped),
//     without positions, which would triple the index. Left out: metadata.managedFields, the
//     last-applied annotation, data and stringData of core Secrets and
//     binaryData of ConfigMaps. A value is cut to 4 KiB, an object's text to
//     64 KiB.
//
// Keyword terms are cut to 256 bytes and lower-cased, both when indexed and
// when queried, so kind:pod and kind:Pod are the same query.
//
// # Query language
//
// Request.Query is bleve's query-string syntax, with these rules:
//
//   - "" and "*" match everything.
//   - Clauses are ANDed: a clause without + or - is required (bleve would
//     make it optional); -clause excludes. There is no OR and no grouping:
//     the terms AND, OR, NOT, && and || and unescaped parentheses outside a
//     regular expression are errors, not words to search for (bleve would
//     quietly search for them). A regular expression expresses alternatives
//     within a field: kind:/(pod|node)/.
//   - Field names are case-insensitive and must be one of the fields above;
//     labels, annotations, images and conditions are accepted for label,
//     annotation, image and condition, and label.KEY and annotation.KEY for
//     labels.KEY and annotations.KEY (the KEY part keeps its case). An
//     unknown field is an error rather than a silent empty result.
//   - A keyword value matches a whole term: name:web matches web, not web-1.
//     Wildcards (* and ?) and regular expressions (/re/, matching a whole
//     term) are lower-cased; label:app=* asks for any value of label app.
//   - A value with a colon is quoted or escaped: image:"nginx:1.19" or
//     image:nginx\:1.19. A quoted keyword value is one exact term.
//   - Text matches words, not phrases: a word the analyzer splits, such as
//     kube-system, and "quoted words" match objects that have all those
//     words, in any order. For an exact value use its keyword field
//     (namespace:kube-system). word~1 is a fuzzy match.
//   - Numeric and date ranges (field:>5) are errors: the index has none of
//     those fields.
//
// A malformed query is a *QueryError with the byte offset of the offending
// token. bleve's parser decides what parses; this package re-reads the query
// with the same grammar only to place the error.
//
// # Bounds
//
// Every search does bounded work, whatever its query (limits.go): a query
// is at most MaxQueryBytes long with at most MaxQueryClauses clauses, of
// which at most MaxPatternClauses are wildcards, regular expressions or
// fuzzy terms, each at most MaxPatternBytes long (a wildcard with at most
// MaxPatternWildcards * and ?); and one search looks up at most
// MaxQueryTerms index terms, counted by bleve, which a wildcard such as
// name:* over a large fleet can exceed. A query over a bound is a
// *LimitError naming the bound and its value. Regular expressions are
// checked as vellum compiles them (no anchors, word boundaries or lazy
// quantifiers) and fuzziness is 0 to 2, so that a query bleve would fail
// on is a *QueryError, not a failed search.
//
// # Ranking, paging and facets
//
// Only text clauses score; keyword clauses and scopes select without
// changing the order. Hits are ranked by score, ties by document id, which
// orders a keyword-only query by cluster, group, resource, namespace and
// name, and keeps pages stable. Facets count every match (after scopes) by
// cluster, kind and namespace.
package index
