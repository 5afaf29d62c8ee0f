// Package index is the full-text index of the objects that the search cache
// holds for member clusters: Pods, Deployments, Nodes and any other resource,
// built on bleve v2 (scorch).
//
// # What it owns
//
// The package owns the bleve index, its mapping, the extraction of index
// fields from an unstructured object, the asynchronous batched writer that
// applies Put, Delete and DeleteResource in order, and the translation of a
// query string plus search scopes into a bleve search with paging and facets.
//
// # What it does not own
//
// It stores no object content: every field is indexed but not stored, and a
// search returns only Keys, which the caller resolves against its own object
// cache. It knows nothing about client-go, informers, ResourceRegistries or
// authorization: the caller turns those into Put and Delete calls and into
// Request.Scopes. It persists nothing across restarts: an on-disk index is
// deleted and rebuilt by Open, because the cache refills from the members on
// every start.
//
// # Document fields
//
// Each object is one document with the id Key.ID. Its fields are:
//
//   - cluster, group, version, resource, kind, namespace, name, apiVersion:
//     keyword fields from the Key (group is "core" for the core API group,
//     namespace is absent for cluster-scoped objects).
//   - label and annotation: one "key=value" term per label or annotation;
//     labels.KEY and annotations.KEY: one field per key holding its value, so
//     that labels.app:web works. The kubectl last-applied-configuration
//     annotation is skipped, and keyword values are cut to 256 bytes.
//   - image: every container image of the pod spec, of spec.template.spec and
//     of spec.jobTemplate.spec.template.spec (containers, initContainers and
//     ephemeralContainers). An image reference is indexed as itself and as
//     each of its path suffixes, each with and without its tag or digest:
//     docker.io/library/nginx:1.19 gives docker.io/library/nginx:1.19,
//     docker.io/library/nginx, library/nginx:1.19, library/nginx, nginx:1.19
//     and nginx, so image:nginx, image:nginx* and image:"nginx:1.19" all
//     match it.
//   - node: spec.nodeName, and the name of a Node object.
//   - phase: status.phase.
//   - condition: "Type=Status" for each entry of status.conditions.
//   - text: the default field, every string value of the object (not the
//     keys) plus the Key's name, namespace and kind, analyzed by bleve's
//     standard analyzer (Unicode words, lower-cased, English stop words
//     removed). metadata.managedFields, the last-applied annotation, the
//     data and stringData of Secrets and the binaryData of ConfigMaps are
//     left out; a value is cut to 4 KiB and an object's text to 64 KiB.
//
// All keyword fields are lower-cased both when indexed and when queried, so
// kind:pod and kind:Pod are the same query. Facet values come from the
// original spelling for kind and from the (lower-case by Kubernetes rules)
// cluster and namespace names.
//
// # Query language
//
// Request.Query uses bleve's query-string syntax with these differences:
// clauses without a prefix are ANDed (bleve ORs them); "" and "*" match
// everything; field names are case-insensitive and must be one of the fields
// above (labels.KEY and annotations.KEY for any KEY, label.KEY and
// annotation.KEY are accepted as aliases; label, labels, annotation,
// annotations and images, conditions are aliases for the multi-valued
// fields); wildcard (*, ?) and regular-expression (/re/) terms are
// lower-cased, and a regular expression must match a whole term; a quoted
// value of a keyword field is one exact term, so image:"nginx:1.19" is how to
// write a value containing a colon (or escape it: image:nginx\:1.19); a
// word of the text field matches all of its words (kube-system matches
// objects with both "kube" and "system"); numeric and date ranges are
// rejected, as the index has no numeric or date fields. A syntax error is a
// *QueryError with the byte offset of the offending token.
package index
