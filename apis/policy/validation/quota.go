package validation

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
)

// maxClusterNameLength is the longest cluster name, as cluster.karmada.io
// validates it (names are embedded in karmada-es-<name>).
const maxClusterNameLength = 48

// standardQuotaResources are the ResourceQuota resource names without a
// domain prefix that Kubernetes accepts; hugepages-<size> and
// requests.hugepages-<size> are accepted as well.
var standardQuotaResources = sets.New(
	"cpu", "memory", "ephemeral-storage", "storage",
	"requests.cpu", "requests.memory", "requests.storage", "requests.ephemeral-storage",
	"limits.cpu", "limits.memory", "limits.ephemeral-storage",
	"pods", "services", "replicationcontrollers", "resourcequotas", "secrets", "configmaps",
	"persistentvolumeclaims", "services.nodeports", "services.loadbalancers",
)

// integerQuotaResources are counted in whole objects.
var integerQuotaResources = sets.New(
	"pods", "services", "replicationcontrollers", "resourcequotas", "secrets", "configmaps",
	"persistentvolumeclaims", "services.nodeports", "services.loadbalancers",
)

func validateFederatedResourceQuotaSpec(s *policyv1alpha1.FederatedResourceQuotaSpec, p *field.Path) field.ErrorList {
	overallPath := p.Child("overall")
	var errs field.ErrorList
	if len(s.Overall) == 0 {
		errs = append(errs, field.Required(overallPath, "at least one resource is required"))
	}
	errs = append(errs, validateResourceList(s.Overall, overallPath)...)

	assignmentsPath := p.Child("staticAssignments")
	clusters := sets.New[string]()
	assigned := corev1.ResourceList{}
	for i, a := range s.StaticAssignments {
		ip := assignmentsPath.Index(i)
		errs = append(errs, validateClusterName(a.ClusterName, ip.Child("clusterName"))...)
		if a.ClusterName != "" && clusters.Has(a.ClusterName) {
			errs = append(errs, field.Duplicate(ip.Child("clusterName"), a.ClusterName))
		}
		clusters.Insert(a.ClusterName)
		hardPath := ip.Child("hard")
		errs = append(errs, validateResourceList(a.Hard, hardPath)...)
		for _, name := range sortedNames(a.Hard) {
			if _, ok := s.Overall[name]; !ok {
				errs = append(errs, field.Invalid(hardPath.Key(string(name)), string(name), "must also be set in spec.overall"))
			}
			sum := assigned[name]
			sum.Add(a.Hard[name])
			assigned[name] = sum
		}
	}
	for _, name := range sortedNames(s.Overall) {
		overall := s.Overall[name]
		if sum, ok := assigned[name]; ok && overall.Cmp(sum) < 0 {
			errs = append(errs, field.Invalid(overallPath.Key(string(name)), overall.String(),
				fmt.Sprintf("must not be less than the sum of the static assignments (%s)", sum.String())))
		}
	}
	return errs
}

func validateFederatedResourceQuotaStatus(s *policyv1alpha1.FederatedResourceQuotaStatus, p *field.Path) field.ErrorList {
	errs := validateResourceList(s.Overall, p.Child("overall"))
	errs = append(errs, validateResourceList(s.OverallUsed, p.Child("overallUsed"))...)
	for i, cs := range s.AggregatedStatus {
		ip := p.Child("aggregatedStatus").Index(i)
		errs = append(errs, validateClusterName(cs.ClusterName, ip.Child("clusterName"))...)
		errs = append(errs, validateResourceList(cs.Hard, ip.Child("hard"))...)
		errs = append(errs, validateResourceList(cs.Used, ip.Child("used"))...)
	}
	return errs
}

// validateResourceList checks resource names and that quantities are
// non-negative (and whole for object counts); p is the path of the list.
func validateResourceList(list corev1.ResourceList, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, name := range sortedNames(list) {
		kp := p.Key(string(name))
		errs = append(errs, validateQuotaResourceName(string(name), kp)...)
		q := list[name]
		if q.Sign() < 0 {
			errs = append(errs, field.Invalid(kp, q.String(), "must be greater than or equal to 0"))
		}
		if isIntegerQuotaResource(string(name)) && q.MilliValue()%1000 != 0 {
			errs = append(errs, field.Invalid(kp, q.String(), "must be an integer"))
		}
	}
	return errs
}

// validateQuotaResourceName accepts qualified names that are either
// domain-prefixed (extended resources, count/<resource>) or standard quota resources.
func validateQuotaResourceName(name string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(name) {
		errs = append(errs, field.Invalid(p, name, msg))
	}
	if len(errs) > 0 || strings.Contains(name, "/") {
		return errs
	}
	if standardQuotaResources.Has(name) || strings.HasPrefix(name, "hugepages-") || strings.HasPrefix(name, "requests.hugepages-") {
		return nil
	}
	return field.ErrorList{field.Invalid(p, name, "must be a standard quota resource or a fully qualified (domain-prefixed) resource name")}
}

func isIntegerQuotaResource(name string) bool {
	return integerQuotaResources.Has(name) || strings.HasPrefix(name, "count/")
}

// validateClusterName checks a cluster name as cluster.karmada.io does: a
// DNS-1123 label of at most 48 characters.
func validateClusterName(name string, p *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	if len(name) > maxClusterNameLength {
		return field.ErrorList{field.TooLong(p, name, maxClusterNameLength)}
	}
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Label(name) {
		errs = append(errs, field.Invalid(p, name, msg))
	}
	return errs
}

func sortedNames(list corev1.ResourceList) []corev1.ResourceName {
	names := make([]corev1.ResourceName, 0, len(list))
	for name := range list {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}
