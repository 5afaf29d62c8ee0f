package validation

import (
	"fmt"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/util/jsonpath"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
)

// ValidatePropagationSpec validates the spec shared by PropagationPolicy and
// ClusterPropagationPolicy; p is the path of the spec.
func ValidatePropagationSpec(s *policyv1alpha1.PropagationSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	selectorsPath := p.Child("resourceSelectors")
	if len(s.ResourceSelectors) == 0 {
		errs = append(errs, field.Required(selectorsPath, "at least one resource selector is required"))
	}
	errs = append(errs, validateResourceSelectors(s.ResourceSelectors, selectorsPath)...)
	if s.Preemption == policyv1alpha1.PreemptAlways {
		for i, rs := range s.ResourceSelectors {
			if rs.Name == "" {
				errs = append(errs, field.Required(selectorsPath.Index(i).Child("name"),
					"must be set when preemption is Always: a selector without a name could preempt unrelated resources"))
			}
		}
	}
	errs = append(errs, ValidatePlacement(&s.Placement, p.Child("placement"))...)
	errs = append(errs, validateEnum(s.Preemption, false, p.Child("preemption"),
		policyv1alpha1.PreemptAlways, policyv1alpha1.PreemptNever)...)
	errs = append(errs, validateEnum(s.ConflictResolution, false, p.Child("conflictResolution"),
		policyv1alpha1.ConflictAbort, policyv1alpha1.ConflictOverwrite)...)
	errs = append(errs, validateEnum(s.ActivationPreference, false, p.Child("activationPreference"),
		policyv1alpha1.LazyActivation)...)
	errs = append(errs, validateFailover(s.Failover, s.PropagateDeps, p)...)
	errs = append(errs, validateSuspension(s.Suspension, p.Child("suspension"))...)
	return append(errs, validateSchedulePriority(s.SchedulePriority, p.Child("schedulePriority"))...)
}

// validateResourceSelectors checks each selector on its own; p is the path of the list.
func validateResourceSelectors(selectors []policyv1alpha1.ResourceSelector, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, rs := range selectors {
		ip := p.Index(i)
		if rs.APIVersion == "" {
			errs = append(errs, field.Required(ip.Child("apiVersion"), ""))
		} else if _, err := schema.ParseGroupVersion(rs.APIVersion); err != nil {
			errs = append(errs, field.Invalid(ip.Child("apiVersion"), rs.APIVersion, err.Error()))
		}
		errs = append(errs, validateRequiredString(rs.Kind, ip.Child("kind"))...)
		if rs.Namespace != "" {
			for _, msg := range apivalidation.ValidateNamespaceName(rs.Namespace, false) {
				errs = append(errs, field.Invalid(ip.Child("namespace"), rs.Namespace, msg))
			}
		}
		if rs.LabelSelector != nil {
			errs = append(errs, metav1validation.ValidateLabelSelector(rs.LabelSelector,
				metav1validation.LabelSelectorValidationOptions{}, ip.Child("labelSelector"))...)
		}
	}
	return errs
}

// gracefulPurge says whether a purge mode waits for the new application;
// empty is the default, Gracefully.
func gracefulPurge(m policyv1alpha1.PurgeMode) bool {
	return m == "" || m == policyv1alpha1.PurgeModeGracefully || m == policyv1alpha1.PurgeModeGraciously
}

// validateFailover validates spec.failover; p is the path of the spec.
func validateFailover(f *policyv1alpha1.FailoverBehavior, propagateDeps bool, p *field.Path) field.ErrorList {
	if f == nil {
		return nil
	}
	var errs field.ErrorList
	fp := p.Child("failover")
	if app := f.Application; app != nil {
		ap := fp.Child("application")
		if !propagateDeps {
			errs = append(errs, field.Invalid(p.Child("propagateDeps"), propagateDeps,
				"must be true when application failover is set, so that dependencies move with the application"))
		}
		if ts := app.DecisionConditions.TolerationSeconds; ts != nil && *ts < 0 {
			errs = append(errs, field.Invalid(ap.Child("decisionConditions", "tolerationSeconds"), *ts, "must be greater than or equal to 0"))
		}
		errs = append(errs, validateEnum(app.PurgeMode, false, ap.Child("purgeMode"),
			policyv1alpha1.PurgeModeDirectly, policyv1alpha1.PurgeModeGracefully, policyv1alpha1.PurgeModeNever,
			policyv1alpha1.PurgeModeImmediately, policyv1alpha1.PurgeModeGraciously)...)
		gp := ap.Child("gracePeriodSeconds")
		switch graceful := gracefulPurge(app.PurgeMode); {
		case !graceful && app.GracePeriodSeconds != nil:
			errs = append(errs, field.Forbidden(gp, "only takes effect when purgeMode is Gracefully"))
		case graceful && app.GracePeriodSeconds == nil:
			errs = append(errs, field.Required(gp, "must be set when purgeMode is Gracefully"))
		case graceful && *app.GracePeriodSeconds <= 0:
			errs = append(errs, field.Invalid(gp, *app.GracePeriodSeconds, "must be greater than 0"))
		}
		errs = append(errs, validateStatePreservation(app.StatePreservation, ap.Child("statePreservation"))...)
	}
	if c := f.Cluster; c != nil {
		cp := fp.Child("cluster")
		errs = append(errs, validateEnum(c.PurgeMode, false, cp.Child("purgeMode"),
			policyv1alpha1.PurgeModeDirectly, policyv1alpha1.PurgeModeGracefully)...)
		errs = append(errs, validateStatePreservation(c.StatePreservation, cp.Child("statePreservation"))...)
	}
	return errs
}

// Bounds of statePreservation: each rule becomes a label of the workload
// and a JSONPath evaluated at every eviction.
const (
	maxStatePreservationRules = 32
	maxStateJSONPathLength    = 1024
)

func validateStatePreservation(sp *policyv1alpha1.StatePreservation, p *field.Path) field.ErrorList {
	if sp == nil {
		return nil
	}
	var errs field.ErrorList
	rulesPath := p.Child("rules")
	if len(sp.Rules) == 0 {
		errs = append(errs, field.Required(rulesPath, "at least one rule is required"))
	} else if len(sp.Rules) > maxStatePreservationRules {
		errs = append(errs, field.TooMany(rulesPath, len(sp.Rules), maxStatePreservationRules))
	}
	for i, r := range sp.Rules {
		ip := rulesPath.Index(i)
		if r.AliasLabelName == "" {
			errs = append(errs, field.Required(ip.Child("aliasLabelName"), ""))
		} else {
			errs = append(errs, metav1validation.ValidateLabelName(r.AliasLabelName, ip.Child("aliasLabelName"))...)
		}
		if r.JSONPath == "" {
			errs = append(errs, field.Required(ip.Child("jsonPath"), ""))
		} else if len(r.JSONPath) > maxStateJSONPathLength {
			errs = append(errs, field.TooLong(ip.Child("jsonPath"), "", maxStateJSONPathLength))
		} else if err := jsonpath.New("statePreservation").Parse(r.JSONPath); err != nil {
			errs = append(errs, field.Invalid(ip.Child("jsonPath"), r.JSONPath, fmt.Sprintf("must be a JSONPath template: %v", err)))
		}
	}
	return errs
}

func validateSuspension(s *policyv1alpha1.Suspension, p *field.Path) field.ErrorList {
	if s == nil || s.Dispatching == nil || !*s.Dispatching ||
		s.DispatchingOnClusters == nil || len(s.DispatchingOnClusters.ClusterNames) == 0 {
		return nil
	}
	return field.ErrorList{field.Forbidden(p.Child("dispatchingOnClusters", "clusterNames"),
		"cannot be set when dispatching is true, which already suspends every cluster")}
}

func validateSchedulePriority(sp *policyv1alpha1.SchedulePriority, p *field.Path) field.ErrorList {
	if sp == nil {
		return nil
	}
	errs := validateEnum(sp.PriorityClassSource, true, p.Child("priorityClassSource"), policyv1alpha1.KubePriorityClass)
	namePath := p.Child("priorityClassName")
	if sp.PriorityClassName == "" {
		return append(errs, field.Required(namePath, ""))
	}
	for _, msg := range apivalidation.NameIsDNSSubdomain(sp.PriorityClassName, false) {
		errs = append(errs, field.Invalid(namePath, sp.PriorityClassName, msg))
	}
	return errs
}
