// Package table turns objects cached from member clusters into the
// metav1.Table that kubectl asks for with
// "Accept: application/json;as=Table;v=v1;g=meta.k8s.io", printed exactly as a
// kube-apiserver prints them.
//
// It owns the printing only: for every built-in kind that kube-apiserver
// prints with its own columns (pods, deployments, nodes, services, jobs, ...)
// it decodes the cached JSON into the typed versioned object, converts it to
// the internal version and hands it to kube-apiserver's own printers
// (k8s.io/kubernetes/pkg/printers/internalversion). Every other kind (CRDs,
// aggregated or unknown kinds, and the few built-in kinds that kube-apiserver
// serves with the default table convertor) gets the default Name and Created
// At columns of k8s.io/apiserver/pkg/registry/rest.NewDefaultTableConvertor.
// It also fills each row's object as the includeObject table option asks and
// the table's list metadata.
//
// It does not own the cache, content negotiation, request parsing, selectors,
// pagination or the encoding of the table on the wire; nor does it know the
// additionalPrinterColumns of CRDs, which live in the member clusters.
package table
