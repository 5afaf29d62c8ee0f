// Package validation validates Clusters as Karmada's admission webhook and
// CRD schema do.
package validation

import (
	"fmt"
	"net/url"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/names"
)

// MaxClusterNameLength is the longest cluster name: the name is embedded in
// derived names such as karmada-es-<name>.
const MaxClusterNameLength = 48

// ValidateClusterName checks a cluster name: a DNS-1123 label of at most 48 characters.
func ValidateClusterName(name string, _ bool) []string {
	var errs []string
	if len(name) > MaxClusterNameLength {
		errs = append(errs, fmt.Sprintf("must be no more than %d characters", MaxClusterNameLength))
	}
	return append(errs, validation.IsDNS1123Label(name)...)
}

// ValidateCluster validates a Cluster on create.
func ValidateCluster(c *clusterv1alpha1.Cluster) field.ErrorList {
	errs := apivalidation.ValidateObjectMeta(&c.ObjectMeta, false, ValidateClusterName, field.NewPath("metadata"))
	return append(errs, validateClusterSpec(&c.Spec, field.NewPath("spec"))...)
}

// ValidateClusterUpdate validates a Cluster on update. syncMode is
// immutable: the control plane reaches a Push cluster with the Secret its
// spec names and a Pull cluster only through its agent, so turning one into
// the other would hand a Pull cluster's agent the connection settings of
// Push mode; unjoin and register again instead.
func ValidateClusterUpdate(c, old *clusterv1alpha1.Cluster) field.ErrorList {
	errs := apivalidation.ValidateObjectMetaUpdate(&c.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	errs = append(errs, apivalidation.ValidateImmutableField(c.Spec.SyncMode, old.Spec.SyncMode, field.NewPath("spec", "syncMode"))...)
	return append(errs, validateClusterSpec(&c.Spec, field.NewPath("spec"))...)
}

func validateClusterSpec(s *clusterv1alpha1.ClusterSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(s.ID) > 128000 {
		errs = append(errs, field.TooLong(p.Child("id"), "", 128000))
	}
	switch s.SyncMode {
	case clusterv1alpha1.Push, clusterv1alpha1.Pull:
	case "":
		errs = append(errs, field.Required(p.Child("syncMode"), "must be Push or Pull"))
	default:
		errs = append(errs, field.NotSupported(p.Child("syncMode"), s.SyncMode, []clusterv1alpha1.ClusterSyncMode{clusterv1alpha1.Push, clusterv1alpha1.Pull}))
	}
	if s.APIEndpoint != "" {
		errs = append(errs, validateEndpoint(s.APIEndpoint, p.Child("apiEndpoint"))...)
	}
	errs = append(errs, validateSecretRef(s.SecretRef, p.Child("secretRef"))...)
	errs = append(errs, validateSecretRef(s.ImpersonatorSecretRef, p.Child("impersonatorSecretRef"))...)
	if s.ProxyURL != "" {
		u, err := url.Parse(s.ProxyURL)
		switch {
		case err != nil:
			errs = append(errs, field.Invalid(p.Child("proxyURL"), s.ProxyURL, err.Error()))
		case u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "socks5":
			errs = append(errs, field.NotSupported(p.Child("proxyURL"), u.Scheme, []string{"http", "https", "socks5"}))
		}
	}
	for _, f := range []struct{ name, value string }{{"provider", s.Provider}, {"region", s.Region}, {"zone", s.Zone}} {
		for _, msg := range validation.IsValidLabelValue(f.value) {
			errs = append(errs, field.Invalid(p.Child(f.name), f.value, msg))
		}
	}
	if s.Zone != "" && len(s.Zones) > 0 {
		errs = append(errs, field.Invalid(p.Child("zone"), s.Zone, "zone is deprecated and may not be set together with zones"))
	}
	for i, z := range s.Zones {
		for _, msg := range validation.IsValidLabelValue(z) {
			errs = append(errs, field.Invalid(p.Child("zones").Index(i), z, msg))
		}
	}
	errs = append(errs, validateTaints(s.Taints, p.Child("taints"))...)
	return append(errs, validateResourceModels(s.ResourceModels, p.Child("resourceModels"))...)
}

func validateEndpoint(endpoint string, p *field.Path) field.ErrorList {
	u, err := url.Parse(endpoint)
	switch {
	case err != nil:
		return field.ErrorList{field.Invalid(p, endpoint, err.Error())}
	case u.Host == "":
		return field.ErrorList{field.Invalid(p, endpoint, "must have a host")}
	case u.User != nil:
		return field.ErrorList{field.Invalid(p, endpoint, "must not contain user information")}
	case u.RawQuery != "" || u.Fragment != "" || strings.Contains(endpoint, "?") || strings.Contains(endpoint, "#"):
		return field.ErrorList{field.Invalid(p, endpoint, "must not contain a query or a fragment")}
	}
	return nil
}

func validateSecretRef(ref *clusterv1alpha1.LocalSecretReference, p *field.Path) field.ErrorList {
	if ref == nil {
		return nil
	}
	var errs field.ErrorList
	switch ref.Namespace {
	case "":
		errs = append(errs, field.Required(p.Child("namespace"), ""))
	case names.SecretNamespace:
	default:
		errs = append(errs, field.NotSupported(p.Child("namespace"), ref.Namespace, []string{names.SecretNamespace}))
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

var taintEffects = []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute}

func validateTaints(taints []corev1.Taint, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, t := range taints {
		tp := p.Index(i)
		for _, msg := range validation.IsQualifiedName(t.Key) {
			errs = append(errs, field.Invalid(tp.Child("key"), t.Key, msg))
		}
		for _, msg := range validation.IsValidLabelValue(t.Value) {
			errs = append(errs, field.Invalid(tp.Child("value"), t.Value, msg))
		}
		switch t.Effect {
		case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		case "":
			errs = append(errs, field.Required(tp.Child("effect"), ""))
		default:
			errs = append(errs, field.NotSupported(tp.Child("effect"), t.Effect, taintEffects))
		}
		key := t.Key + ":" + string(t.Effect)
		if seen.Has(key) {
			errs = append(errs, field.Duplicate(tp, "taint with key "+t.Key+" and effect "+string(t.Effect)))
		}
		seen.Insert(key)
	}
	return errs
}

func validateResourceModels(models []clusterv1alpha1.ResourceModel, p *field.Path) field.ErrorList {
	if len(models) == 0 {
		return nil
	}
	var errs field.ErrorList
	grades := sets.New[uint]()
	for i, m := range models {
		mp := p.Index(i)
		if grades.Has(m.Grade) {
			errs = append(errs, field.Duplicate(mp.Child("grade"), m.Grade))
		}
		grades.Insert(m.Grade)
		if len(m.Ranges) == 0 {
			errs = append(errs, field.Required(mp.Child("ranges"), ""))
			continue
		}
		if len(m.Ranges) != len(models[0].Ranges) {
			errs = append(errs, field.Invalid(mp.Child("ranges"), len(m.Ranges), "every model must list the same resources in the same order"))
			continue
		}
		for j, r := range m.Ranges {
			rp := mp.Child("ranges").Index(j)
			if r.Name != models[0].Ranges[j].Name {
				errs = append(errs, field.Invalid(rp.Child("name"), r.Name, fmt.Sprintf("must be %s: every model must list the same resources in the same order", models[0].Ranges[j].Name)))
			}
			if r.Max.Cmp(r.Min) <= 0 {
				errs = append(errs, field.Invalid(rp.Child("max"), r.Max.String(), "must be greater than min"))
			}
			if i > 0 && j < len(models[i-1].Ranges) && r.Min.Cmp(models[i-1].Ranges[j].Max) != 0 {
				errs = append(errs, field.Invalid(rp.Child("min"), r.Min.String(), "must equal the max of the same resource in the previous model"))
			}
		}
	}
	return errs
}
