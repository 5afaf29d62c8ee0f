// Package validation validates ResourceRegistries as Karmada's search
// apiserver does.
package validation

import (
	"net/url"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	searchv1alpha1 "github.com/flotilla-io/flotilla/apis/search/v1alpha1"
)

// ValidateResourceRegistry validates a ResourceRegistry on create.
func ValidateResourceRegistry(r *searchv1alpha1.ResourceRegistry) field.ErrorList {
	errs := apivalidation.ValidateObjectMeta(&r.ObjectMeta, false, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(errs, validateResourceRegistrySpec(&r.Spec, field.NewPath("spec"))...)
}

// ValidateResourceRegistryUpdate validates a ResourceRegistry on update.
func ValidateResourceRegistryUpdate(r, old *searchv1alpha1.ResourceRegistry) field.ErrorList {
	errs := apivalidation.ValidateObjectMetaUpdate(&r.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(errs, validateResourceRegistrySpec(&r.Spec, field.NewPath("spec"))...)
}

// ValidateResourceRegistryStatusUpdate validates an update of a
// ResourceRegistry's status.
func ValidateResourceRegistryStatusUpdate(r, old *searchv1alpha1.ResourceRegistry) field.ErrorList {
	errs := apivalidation.ValidateObjectMetaUpdate(&r.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(errs, metav1validation.ValidateConditions(r.Status.Conditions, field.NewPath("status", "conditions"))...)
}

func validateResourceRegistrySpec(s *searchv1alpha1.ResourceRegistrySpec, p *field.Path) field.ErrorList {
	errs := validateClusterAffinity(&s.TargetCluster, p.Child("targetCluster"))
	sp := p.Child("resourceSelectors")
	if len(s.ResourceSelectors) == 0 {
		errs = append(errs, field.Required(sp, "must select at least one kind"))
	}
	for i, rs := range s.ResourceSelectors {
		errs = append(errs, validateResourceSelector(rs, sp.Index(i))...)
	}
	if s.BackendStore != nil && s.BackendStore.OpenSearch != nil {
		errs = append(errs, validateOpenSearch(s.BackendStore.OpenSearch, p.Child("backendStore", "openSearch"))...)
	}
	return errs
}

// fieldSelectorKeys are the Cluster fields a field selector may name.
var fieldSelectorKeys = []string{"provider", "region", "zone"}

// fieldSelectorOperators are the operators a field selector may use.
var fieldSelectorOperators = []corev1.NodeSelectorOperator{corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn}

// validateClusterAffinity checks a ClusterAffinity as the policy webhook
// does: a valid label selector, field selector keys provider, region or
// zone with operators In or NotIn, and valid cluster names.
func validateClusterAffinity(a *policyv1alpha1.ClusterAffinity, p *field.Path) field.ErrorList {
	errs := metav1validation.ValidateLabelSelector(a.LabelSelector, metav1validation.LabelSelectorValidationOptions{}, p.Child("labelSelector"))
	if a.FieldSelector != nil {
		mp := p.Child("fieldSelector", "matchExpressions")
		for i, req := range a.FieldSelector.MatchExpressions {
			rp := mp.Index(i)
			switch req.Key {
			case "provider", "region", "zone":
			case "":
				errs = append(errs, field.Required(rp.Child("key"), ""))
			default:
				errs = append(errs, field.NotSupported(rp.Child("key"), req.Key, fieldSelectorKeys))
			}
			switch req.Operator {
			case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
				if len(req.Values) == 0 {
					errs = append(errs, field.Required(rp.Child("values"), "must be specified when `operator` is 'In' or 'NotIn'"))
				}
			case "":
				errs = append(errs, field.Required(rp.Child("operator"), ""))
			default:
				errs = append(errs, field.NotSupported(rp.Child("operator"), req.Operator, fieldSelectorOperators))
			}
		}
	}
	errs = append(errs, validateClusterNames(a.ClusterNames, p.Child("clusterNames"))...)
	return append(errs, validateClusterNames(a.ExcludeClusters, p.Child("exclude"))...)
}

func validateClusterNames(names []string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, n := range names {
		if n == "" {
			errs = append(errs, field.Required(p.Index(i), ""))
		}
	}
	return errs
}

func validateResourceSelector(rs searchv1alpha1.ResourceSelector, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if rs.APIVersion == "" {
		errs = append(errs, field.Required(p.Child("apiVersion"), ""))
	} else if gv, err := schema.ParseGroupVersion(rs.APIVersion); err != nil {
		errs = append(errs, field.Invalid(p.Child("apiVersion"), rs.APIVersion, err.Error()))
	} else if gv.Version == "" {
		errs = append(errs, field.Invalid(p.Child("apiVersion"), rs.APIVersion, "must specify a version"))
	}
	if rs.Kind == "" {
		errs = append(errs, field.Required(p.Child("kind"), ""))
	}
	if rs.Namespace != "" {
		for _, msg := range apivalidation.ValidateNamespaceName(rs.Namespace, false) {
			errs = append(errs, field.Invalid(p.Child("namespace"), rs.Namespace, msg))
		}
	}
	return errs
}

func validateOpenSearch(o *searchv1alpha1.OpenSearchConfig, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	ap := p.Child("addresses")
	if len(o.Addresses) == 0 {
		errs = append(errs, field.Required(ap, ""))
	}
	for i, addr := range o.Addresses {
		u, err := url.Parse(addr)
		switch {
		case err != nil:
			errs = append(errs, field.Invalid(ap.Index(i), addr, err.Error()))
		case u.Scheme != "http" && u.Scheme != "https":
			errs = append(errs, field.Invalid(ap.Index(i), addr, "must be an http or https URL"))
		case u.Host == "":
			errs = append(errs, field.Invalid(ap.Index(i), addr, "must have a host"))
		}
	}
	return append(errs, validateSecretRef(o.SecretRef, p.Child("secretRef"))...)
}

func validateSecretRef(ref clusterv1alpha1.LocalSecretReference, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if ref.Namespace == "" {
		errs = append(errs, field.Required(p.Child("namespace"), ""))
	} else {
		for _, msg := range validation.IsDNS1123Label(ref.Namespace) {
			errs = append(errs, field.Invalid(p.Child("namespace"), ref.Namespace, msg))
		}
	}
	if ref.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	} else {
		for _, msg := range validation.IsDNS1123Subdomain(ref.Name) {
			errs = append(errs, field.Invalid(p.Child("name"), ref.Name, msg))
		}
	}
	return errs
}
