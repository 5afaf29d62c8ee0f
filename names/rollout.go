package names

import "strconv"

// RolloutNamespace is where the ResourceRevisions and RolloutRuns of a
// template live: its own namespace, SystemNamespace for a cluster-scoped
// one.
func RolloutNamespace(templateNamespace string) string {
	if templateNamespace == "" {
		return SystemNamespace
	}
	return templateNamespace
}

// RevisionName is the name of the ResourceRevision of a binding's template
// with content hash.
func RevisionName(binding, hash string) string { return binding + "-" + hash }

// RolloutRunName is the name of the RolloutRun that rolls out revision
// number revision of a binding's template.
func RolloutRunName(binding string, revision int64) string {
	return binding + "-" + strconv.FormatInt(revision, 10)
}
