package policy

import (
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// resourceList prints a ResourceList as kubectl prints a map column:
// name:quantity pairs, sorted, comma separated.
func resourceList(l corev1.ResourceList) string {
	parts := make([]string, 0, len(l))
	for name, q := range l {
		parts = append(parts, string(name)+":"+q.String())
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}
