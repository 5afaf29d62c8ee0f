// Package validation validates the networking.karmada.io kinds as Karmada's
// admission webhooks do. MultiClusterIngress specs get the structural checks
// of a Kubernetes Ingress (hosts, paths, backends, TLS), not the
// controller-specific ones.
package validation

import (
	"fmt"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	clustervalidation "github.com/flotilla-io/flotilla/apis/cluster/validation"
	networkingv1alpha1 "github.com/flotilla-io/flotilla/apis/networking/v1alpha1"
)

// ValidateMultiClusterService validates a MultiClusterService on create.
func ValidateMultiClusterService(mcs *networkingv1alpha1.MultiClusterService) field.ErrorList {
	// The name is that of a Service, hence a DNS-1035 label.
	errs := apivalidation.ValidateObjectMeta(&mcs.ObjectMeta, true, apivalidation.NameIsDNS1035Label, field.NewPath("metadata"))
	return append(errs, validateMultiClusterServiceSpec(&mcs.Spec, field.NewPath("spec"))...)
}

// ValidateMultiClusterServiceUpdate validates a MultiClusterService on
// update: spec.types may not change.
func ValidateMultiClusterServiceUpdate(mcs, old *networkingv1alpha1.MultiClusterService) field.ErrorList {
	errs := apivalidation.ValidateObjectMetaUpdate(&mcs.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	if !equalTypes(mcs.Spec.Types, old.Spec.Types) {
		errs = append(errs, field.Invalid(field.NewPath("spec", "types"), mcs.Spec.Types, "MultiClusterService types are immutable"))
	}
	return append(errs, validateMultiClusterServiceSpec(&mcs.Spec, field.NewPath("spec"))...)
}

func equalTypes(a, b []networkingv1alpha1.ExposureType) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

var exposureTypes = []networkingv1alpha1.ExposureType{networkingv1alpha1.ExposureTypeCrossCluster, networkingv1alpha1.ExposureTypeLoadBalancer}

func validateMultiClusterServiceSpec(s *networkingv1alpha1.MultiClusterServiceSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	tp := p.Child("types")
	distinct := sets.New[networkingv1alpha1.ExposureType]()
	for i, t := range s.Types {
		if t != networkingv1alpha1.ExposureTypeCrossCluster && t != networkingv1alpha1.ExposureTypeLoadBalancer {
			errs = append(errs, field.NotSupported(tp.Index(i), t, exposureTypes))
		}
		distinct.Insert(t)
	}
	switch {
	case len(s.Types) == 0:
		errs = append(errs, field.Required(tp, "must specify exactly one type"))
	case distinct.Len() > 1:
		errs = append(errs, field.Invalid(tp, s.Types, "MultiClusterService types should not contain more than one type"))
	}

	if len(s.Ports) > maxMCSPorts {
		errs = append(errs, field.TooMany(p.Child("ports"), len(s.Ports), maxMCSPorts))
	}
	portNames := sets.New[string]()
	for i, port := range s.Ports {
		pp := p.Child("ports").Index(i)
		if port.Name != "" {
			for _, msg := range validation.IsDNS1123Label(port.Name) {
				errs = append(errs, field.Invalid(pp.Child("name"), port.Name, msg))
			}
			if portNames.Has(port.Name) {
				errs = append(errs, field.Duplicate(pp.Child("name"), port.Name))
			}
			portNames.Insert(port.Name)
		}
		for _, msg := range validation.IsValidPortNum(int(port.Port)) {
			errs = append(errs, field.Invalid(pp.Child("port"), port.Port, msg))
		}
	}

	errs = append(errs, validateClusterNames(s.Range.ClusterNames, p.Child("range", "clusterNames"))...)
	errs = append(errs, validateClusterNames(s.ServiceProvisionClusters, p.Child("serviceProvisionClusters"))...)
	errs = append(errs, validateClusterNames(s.ServiceConsumptionClusters, p.Child("serviceConsumptionClusters"))...)
	errs = append(errs, validateClusterSelectors(s.ProviderClusters, p.Child("providerClusters"))...)
	return append(errs, validateClusterSelectors(s.ConsumerClusters, p.Child("consumerClusters"))...)
}

// Bounds of a MultiClusterService: what one reconcile reads and writes
// grows with them.
const (
	maxMCSClusters = 1000
	maxMCSPorts    = 100
)

func validateClusterSelectors(sel []networkingv1alpha1.ClusterSelector, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(sel) > maxMCSClusters {
		return field.ErrorList{field.TooMany(p, len(sel), maxMCSClusters)}
	}
	for i, s := range sel {
		errs = append(errs, validateClusterName(s.Name, p.Index(i).Child("name"))...)
	}
	return errs
}

func validateClusterNames(names []string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(names) > maxMCSClusters {
		return field.ErrorList{field.TooMany(p, len(names), maxMCSClusters)}
	}
	for i, n := range names {
		errs = append(errs, validateClusterName(n, p.Index(i))...)
	}
	return errs
}

func validateClusterName(name string, p *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	if msgs := clustervalidation.ValidateClusterName(name, false); len(msgs) > 0 {
		return field.ErrorList{field.Invalid(p, name, strings.Join(msgs, ", "))}
	}
	return nil
}

// ValidateMultiClusterIngress validates a MultiClusterIngress on create.
func ValidateMultiClusterIngress(mci *networkingv1alpha1.MultiClusterIngress) field.ErrorList {
	errs := apivalidation.ValidateObjectMeta(&mci.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(errs, validateIngressSpec(&mci.Spec, field.NewPath("spec"))...)
}

// ValidateMultiClusterIngressUpdate validates a MultiClusterIngress on update.
func ValidateMultiClusterIngressUpdate(mci, old *networkingv1alpha1.MultiClusterIngress) field.ErrorList {
	errs := apivalidation.ValidateObjectMetaUpdate(&mci.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(errs, validateIngressSpec(&mci.Spec, field.NewPath("spec"))...)
}

var pathTypes = []networkingv1.PathType{networkingv1.PathTypeExact, networkingv1.PathTypePrefix, networkingv1.PathTypeImplementationSpecific}

func validateIngressSpec(s *networkingv1.IngressSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.DefaultBackend == nil && len(s.Rules) == 0 {
		errs = append(errs, field.Invalid(p, s.Rules, "either `defaultBackend` or `rules` must be specified"))
	}
	if s.IngressClassName != nil {
		for _, msg := range validation.IsDNS1123Subdomain(*s.IngressClassName) {
			errs = append(errs, field.Invalid(p.Child("ingressClassName"), *s.IngressClassName, msg))
		}
	}
	if s.DefaultBackend != nil {
		errs = append(errs, validateIngressBackend(s.DefaultBackend, p.Child("defaultBackend"))...)
	}
	for i, tls := range s.TLS {
		tp := p.Child("tls").Index(i)
		for j, host := range tls.Hosts {
			errs = append(errs, validateIngressHost(host, tp.Child("hosts").Index(j))...)
		}
		if tls.SecretName != "" {
			for _, msg := range validation.IsDNS1123Subdomain(tls.SecretName) {
				errs = append(errs, field.Invalid(tp.Child("secretName"), tls.SecretName, msg))
			}
		}
	}
	for i, rule := range s.Rules {
		rp := p.Child("rules").Index(i)
		if rule.Host != "" {
			errs = append(errs, validateIngressHost(rule.Host, rp.Child("host"))...)
		}
		if rule.HTTP == nil {
			continue
		}
		pp := rp.Child("http", "paths")
		if len(rule.HTTP.Paths) == 0 {
			errs = append(errs, field.Required(pp, ""))
		}
		for j := range rule.HTTP.Paths {
			errs = append(errs, validateHTTPPath(&rule.HTTP.Paths[j], pp.Index(j))...)
		}
	}
	return errs
}

// validateIngressHost accepts a DNS-1123 subdomain, optionally prefixed by
// "*." as a wildcard; IP addresses are not hosts.
func validateIngressHost(host string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if validation.IsValidIP(p, host) == nil {
		errs = append(errs, field.Invalid(p, host, "must be a DNS name, not an IP address"))
	}
	if strings.Contains(host, "*") {
		for _, msg := range validation.IsWildcardDNS1123Subdomain(host) {
			errs = append(errs, field.Invalid(p, host, msg))
		}
		return errs
	}
	for _, msg := range validation.IsDNS1123Subdomain(host) {
		errs = append(errs, field.Invalid(p, host, msg))
	}
	return errs
}

func validateHTTPPath(path *networkingv1.HTTPIngressPath, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case path.PathType == nil:
		errs = append(errs, field.Required(p.Child("pathType"), "pathType must be specified"))
	case *path.PathType == networkingv1.PathTypeExact || *path.PathType == networkingv1.PathTypePrefix:
		if !strings.HasPrefix(path.Path, "/") {
			errs = append(errs, field.Invalid(p.Child("path"), path.Path, "must be an absolute path"))
		}
		for _, bad := range []string{"//", "/./", "/../", "%2f", "%2F"} {
			if strings.Contains(path.Path, bad) {
				errs = append(errs, field.Invalid(p.Child("path"), path.Path, fmt.Sprintf("must not contain '%s'", bad)))
			}
		}
		for _, bad := range []string{"/..", "/."} {
			if strings.HasSuffix(path.Path, bad) {
				errs = append(errs, field.Invalid(p.Child("path"), path.Path, fmt.Sprintf("cannot end with '%s'", bad)))
			}
		}
	case *path.PathType == networkingv1.PathTypeImplementationSpecific:
		if path.Path != "" && !strings.HasPrefix(path.Path, "/") {
			errs = append(errs, field.Invalid(p.Child("path"), path.Path, "must be an absolute path"))
		}
	default:
		errs = append(errs, field.NotSupported(p.Child("pathType"), *path.PathType, pathTypes))
	}
	return append(errs, validateIngressBackend(&path.Backend, p.Child("backend"))...)
}

func validateIngressBackend(b *networkingv1.IngressBackend, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case b.Service != nil && b.Resource != nil:
		return field.ErrorList{field.Invalid(p, "resource and service", "cannot set both resource and service backends")}
	case b.Resource != nil:
		if b.Resource.Kind == "" {
			errs = append(errs, field.Required(p.Child("resource", "kind"), ""))
		}
		if b.Resource.Name == "" {
			errs = append(errs, field.Required(p.Child("resource", "name"), ""))
		}
		return errs
	case b.Service == nil:
		return field.ErrorList{field.Invalid(p, b, "must specify a resource or service backend")}
	}
	sp := p.Child("service")
	if b.Service.Name == "" {
		errs = append(errs, field.Required(sp.Child("name"), ""))
	} else {
		for _, msg := range validation.IsDNS1035Label(b.Service.Name) {
			errs = append(errs, field.Invalid(sp.Child("name"), b.Service.Name, msg))
		}
	}
	port, pp := b.Service.Port, sp.Child("port")
	switch {
	case port.Name != "" && port.Number != 0:
		errs = append(errs, field.Invalid(pp, port, "cannot set both port name & port number"))
	case port.Name != "":
		for _, msg := range validation.IsValidPortName(port.Name) {
			errs = append(errs, field.Invalid(pp.Child("name"), port.Name, msg))
		}
	case port.Number != 0:
		for _, msg := range validation.IsValidPortNum(int(port.Number)) {
			errs = append(errs, field.Invalid(pp.Child("number"), port.Number, msg))
		}
	default:
		errs = append(errs, field.Required(pp, "port name or number is required"))
	}
	return errs
}
