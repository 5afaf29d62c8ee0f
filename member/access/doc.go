// Package access decides what of the member clusters a caller may read
// through the control plane's aggregated views (search and the metrics
// APIs), which read members with the control plane's own credentials and
// so must not show a caller more than the caller could read itself:
//   - a cluster only if the caller may reach it through
//     clusters/{name}/proxy on the control plane (verb get on
//     clusters/proxy in cluster.karmada.io, by name), per the host's RBAC;
//   - within it, only what the member's own RBAC lets the caller do, asked
//     with a SubjectAccessReview in the member and remembered briefly per
//     user and attributes.
//
// One request sends at most MaxMemberReviewsPerRequest reviews to members
// (answers already remembered are free): a request over many namespaces or
// resources cannot turn into thousands of reviews. What was not checked is
// treated as not allowed, and the response gets a warning saying so.
//
// What it owns: the decision, its cache and the per-request bound. What it
// does not own: reaching members (a Reviewer is passed in; NewReviewer
// builds one over member clientsets) and what the callers then read.
package access
