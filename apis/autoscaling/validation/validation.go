// Package validation validates the autoscaling.karmada.io kinds as Karmada's
// admission webhooks and CRD schemas do. FederatedHPA validation mirrors
// that of a Kubernetes autoscaling/v2 HorizontalPodAutoscaler (without the
// HPAScaleToZero feature); it expects defaulted objects, as the API server
// defaults before it validates.
package validation

import (
	"fmt"
	"time"
	_ "time/tzdata" // time zones of CronFederatedHPA rules must not depend on the host's zoneinfo

	"github.com/robfig/cron/v3"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/apis/autoscaling/v1alpha1"
)

// Bounds shared with the Kubernetes HPA.
const (
	// minReplicasLowerBound is the smallest minReplicas (no scale to zero).
	minReplicasLowerBound int32 = 1
	// maxStabilizationWindowSeconds is the longest stabilization window.
	maxStabilizationWindowSeconds int32 = 3600
	// maxPeriodSeconds is the longest period of a scaling policy.
	maxPeriodSeconds int32 = 1800
	// maxRuleNameLength is the longest CronFederatedHPA rule name.
	maxRuleNameLength = 32
	// maxHistoryLimit is the largest history limit of a CronFederatedHPA rule.
	maxHistoryLimit int32 = 32
)

// ValidateFederatedHPA validates a FederatedHPA on create.
func ValidateFederatedHPA(fhpa *autoscalingv1alpha1.FederatedHPA) field.ErrorList {
	errs := apivalidation.ValidateObjectMeta(&fhpa.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(errs, validateFederatedHPASpec(&fhpa.Spec, field.NewPath("spec"))...)
}

// ValidateFederatedHPAUpdate validates a FederatedHPA on update.
func ValidateFederatedHPAUpdate(fhpa, old *autoscalingv1alpha1.FederatedHPA) field.ErrorList {
	errs := apivalidation.ValidateObjectMetaUpdate(&fhpa.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(errs, validateFederatedHPASpec(&fhpa.Spec, field.NewPath("spec"))...)
}

// ValidateFederatedHPAStatusUpdate validates an update of a FederatedHPA's
// status: replica counts are not negative.
func ValidateFederatedHPAStatusUpdate(fhpa, old *autoscalingv1alpha1.FederatedHPA) field.ErrorList {
	errs := apivalidation.ValidateObjectMetaUpdate(&fhpa.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	sp := field.NewPath("status")
	errs = append(errs, apivalidation.ValidateNonnegativeField(int64(fhpa.Status.CurrentReplicas), sp.Child("currentReplicas"))...)
	return append(errs, apivalidation.ValidateNonnegativeField(int64(fhpa.Status.DesiredReplicas), sp.Child("desiredReplicas"))...)
}

func validateFederatedHPASpec(s *autoscalingv1alpha1.FederatedHPASpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.MinReplicas != nil && *s.MinReplicas < minReplicasLowerBound {
		errs = append(errs, field.Invalid(p.Child("minReplicas"), *s.MinReplicas, fmt.Sprintf("must be greater than or equal to %d", minReplicasLowerBound)))
	}
	if s.MaxReplicas < 1 {
		errs = append(errs, field.Invalid(p.Child("maxReplicas"), s.MaxReplicas, "must be greater than 0"))
	}
	if s.MinReplicas != nil && s.MaxReplicas < *s.MinReplicas {
		errs = append(errs, field.Invalid(p.Child("maxReplicas"), s.MaxReplicas, "must be greater than or equal to `minReplicas`"))
	}
	errs = append(errs, validateCrossVersionObjectReference(s.ScaleTargetRef, p.Child("scaleTargetRef"))...)
	for i := range s.Metrics {
		errs = append(errs, validateMetricSpec(&s.Metrics[i], p.Child("metrics").Index(i))...)
	}
	if s.Behavior != nil {
		bp := p.Child("behavior")
		errs = append(errs, validateScalingRules(s.Behavior.ScaleUp, bp.Child("scaleUp"))...)
		errs = append(errs, validateScalingRules(s.Behavior.ScaleDown, bp.Child("scaleDown"))...)
	}
	return errs
}

// validateCrossVersionObjectReference requires kind and name, both valid
// path segments, and a parseable apiVersion when set.
func validateCrossVersionObjectReference(ref autoscalingv2.CrossVersionObjectReference, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if ref.Kind == "" {
		errs = append(errs, field.Required(p.Child("kind"), ""))
	} else {
		for _, msg := range content.IsPathSegmentName(ref.Kind) {
			errs = append(errs, field.Invalid(p.Child("kind"), ref.Kind, msg))
		}
	}
	if ref.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	} else {
		for _, msg := range content.IsPathSegmentName(ref.Name) {
			errs = append(errs, field.Invalid(p.Child("name"), ref.Name, msg))
		}
	}
	if ref.APIVersion != "" {
		if _, err := schema.ParseGroupVersion(ref.APIVersion); err != nil {
			errs = append(errs, field.Invalid(p.Child("apiVersion"), ref.APIVersion, err.Error()))
		}
	}
	return errs
}

var metricSourceTypes = []autoscalingv2.MetricSourceType{
	autoscalingv2.ObjectMetricSourceType,
	autoscalingv2.PodsMetricSourceType,
	autoscalingv2.ResourceMetricSourceType,
	autoscalingv2.ExternalMetricSourceType,
	autoscalingv2.ContainerResourceMetricSourceType,
}

// validateMetricSpec requires a type, exactly the source of that type, and
// a valid source.
func validateMetricSpec(m *autoscalingv2.MetricSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	present := map[string]bool{
		"object":            m.Object != nil,
		"pods":              m.Pods != nil,
		"resource":          m.Resource != nil,
		"containerResource": m.ContainerResource != nil,
		"external":          m.External != nil,
	}
	var expected string
	switch m.Type {
	case autoscalingv2.ObjectMetricSourceType:
		expected = "object"
		if m.Object != nil {
			errs = append(errs, validateObjectSource(m.Object, p.Child(expected))...)
		}
	case autoscalingv2.PodsMetricSourceType:
		expected = "pods"
		if m.Pods != nil {
			errs = append(errs, validatePodsSource(m.Pods, p.Child(expected))...)
		}
	case autoscalingv2.ResourceMetricSourceType:
		expected = "resource"
		if m.Resource != nil {
			errs = append(errs, validateResourceSource(string(m.Resource.Name), "", false, m.Resource.Target, p.Child(expected))...)
		}
	case autoscalingv2.ContainerResourceMetricSourceType:
		expected = "containerResource"
		if m.ContainerResource != nil {
			errs = append(errs, validateResourceSource(string(m.ContainerResource.Name), m.ContainerResource.Container, true, m.ContainerResource.Target, p.Child(expected))...)
		}
	case autoscalingv2.ExternalMetricSourceType:
		expected = "external"
		if m.External != nil {
			errs = append(errs, validateExternalSource(m.External, p.Child(expected))...)
		}
	case "":
		errs = append(errs, field.Required(p.Child("type"), "must specify a metric source type"))
	default:
		errs = append(errs, field.NotSupported(p.Child("type"), m.Type, metricSourceTypes))
	}
	if expected != "" && !present[expected] {
		errs = append(errs, field.Required(p.Child(expected), "must populate information for the given metric source"))
	}
	for _, name := range []string{"object", "pods", "resource", "containerResource", "external"} {
		if present[name] && name != expected {
			errs = append(errs, field.Forbidden(p.Child(name), "must populate the given metric source only"))
		}
	}
	return errs
}

func validateObjectSource(src *autoscalingv2.ObjectMetricSource, p *field.Path) field.ErrorList {
	errs := validateCrossVersionObjectReference(src.DescribedObject, p.Child("describedObject"))
	errs = append(errs, validateMetricIdentifier(src.Metric, p.Child("metric"))...)
	errs = append(errs, validateMetricTarget(src.Target, p.Child("target"))...)
	if src.Target.Value == nil && src.Target.AverageValue == nil {
		errs = append(errs, field.Required(p.Child("target", "averageValue"), "must set either a target value or averageValue"))
	}
	return errs
}

func validatePodsSource(src *autoscalingv2.PodsMetricSource, p *field.Path) field.ErrorList {
	errs := validateMetricIdentifier(src.Metric, p.Child("metric"))
	errs = append(errs, validateMetricTarget(src.Target, p.Child("target"))...)
	if src.Target.AverageValue == nil {
		errs = append(errs, field.Required(p.Child("target", "averageValue"), "must specify a positive target averageValue"))
	}
	return errs
}

func validateExternalSource(src *autoscalingv2.ExternalMetricSource, p *field.Path) field.ErrorList {
	errs := validateMetricIdentifier(src.Metric, p.Child("metric"))
	errs = append(errs, validateMetricTarget(src.Target, p.Child("target"))...)
	if src.Target.Value == nil && src.Target.AverageValue == nil {
		errs = append(errs, field.Required(p.Child("target", "averageValue"), "must set either a target value for metric or a per-pod target"))
	}
	if src.Target.Value != nil && src.Target.AverageValue != nil {
		errs = append(errs, field.Forbidden(p.Child("target", "value"), "may not set both a target value for metric and a per-pod target"))
	}
	return errs
}

// validateResourceSource validates a resource or, with withContainer, a
// container resource metric source.
func validateResourceSource(name, container string, withContainer bool, target autoscalingv2.MetricTarget, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if name == "" {
		errs = append(errs, field.Required(p.Child("name"), "must specify a resource name"))
	} else {
		for _, msg := range validation.IsQualifiedName(name) {
			errs = append(errs, field.Invalid(p.Child("name"), name, msg))
		}
	}
	if withContainer {
		if container == "" {
			errs = append(errs, field.Required(p.Child("container"), "must specify a container"))
		} else {
			for _, msg := range validation.IsDNS1123Label(container) {
				errs = append(errs, field.Invalid(p.Child("container"), container, msg))
			}
		}
	}
	errs = append(errs, validateMetricTarget(target, p.Child("target"))...)
	if target.AverageUtilization == nil && target.AverageValue == nil {
		errs = append(errs, field.Required(p.Child("target", "averageUtilization"), "must set either a target raw value or a target utilization"))
	}
	if target.AverageUtilization != nil && target.AverageValue != nil {
		errs = append(errs, field.Forbidden(p.Child("target", "averageValue"), "may not set both a target raw value and a target utilization"))
	}
	return errs
}

var metricTargetTypes = []autoscalingv2.MetricTargetType{
	autoscalingv2.UtilizationMetricType, autoscalingv2.ValueMetricType, autoscalingv2.AverageValueMetricType,
}

func validateMetricTarget(t autoscalingv2.MetricTarget, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch t.Type {
	case autoscalingv2.UtilizationMetricType, autoscalingv2.ValueMetricType, autoscalingv2.AverageValueMetricType:
	case "":
		errs = append(errs, field.Required(p.Child("type"), "must specify a metric target type"))
	default:
		errs = append(errs, field.NotSupported(p.Child("type"), t.Type, metricTargetTypes))
	}
	if t.Value != nil && t.Value.Sign() != 1 {
		errs = append(errs, field.Invalid(p.Child("value"), t.Value.String(), "must be positive"))
	}
	if t.AverageValue != nil && t.AverageValue.Sign() != 1 {
		errs = append(errs, field.Invalid(p.Child("averageValue"), t.AverageValue.String(), "must be positive"))
	}
	if t.AverageUtilization != nil && *t.AverageUtilization < 1 {
		errs = append(errs, field.Invalid(p.Child("averageUtilization"), *t.AverageUtilization, "must be greater than 0"))
	}
	return errs
}

func validateMetricIdentifier(id autoscalingv2.MetricIdentifier, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if id.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), "must specify a metric name"))
	} else {
		for _, msg := range content.IsPathSegmentName(id.Name) {
			errs = append(errs, field.Invalid(p.Child("name"), id.Name, msg))
		}
	}
	return append(errs, metav1validation.ValidateLabelSelector(id.Selector, metav1validation.LabelSelectorValidationOptions{}, p.Child("selector"))...)
}

var selectPolicies = []autoscalingv2.ScalingPolicySelect{
	autoscalingv2.MaxChangePolicySelect, autoscalingv2.MinChangePolicySelect, autoscalingv2.DisabledPolicySelect,
}

var scalingPolicyTypes = []autoscalingv2.HPAScalingPolicyType{
	autoscalingv2.PodsScalingPolicy, autoscalingv2.PercentScalingPolicy,
}

func validateScalingRules(r *autoscalingv2.HPAScalingRules, p *field.Path) field.ErrorList {
	if r == nil {
		return nil
	}
	var errs field.ErrorList
	if w := r.StabilizationWindowSeconds; w != nil {
		if *w < 0 {
			errs = append(errs, field.Invalid(p.Child("stabilizationWindowSeconds"), *w, "must be greater than or equal to zero"))
		}
		if *w > maxStabilizationWindowSeconds {
			errs = append(errs, field.Invalid(p.Child("stabilizationWindowSeconds"), *w, fmt.Sprintf("must be less than or equal to %d", maxStabilizationWindowSeconds)))
		}
	}
	if r.SelectPolicy != nil && !sets.New(selectPolicies...).Has(*r.SelectPolicy) {
		errs = append(errs, field.NotSupported(p.Child("selectPolicy"), *r.SelectPolicy, selectPolicies))
	}
	if r.Tolerance != nil && r.Tolerance.Sign() < 0 {
		errs = append(errs, field.Invalid(p.Child("tolerance"), r.Tolerance.String(), "must be greater than or equal to zero"))
	}
	pp := p.Child("policies")
	if len(r.Policies) == 0 {
		errs = append(errs, field.Required(pp, "must specify at least one Policy"))
	}
	for i, pol := range r.Policies {
		ip := pp.Index(i)
		if !sets.New(scalingPolicyTypes...).Has(pol.Type) {
			errs = append(errs, field.NotSupported(ip.Child("type"), pol.Type, scalingPolicyTypes))
		}
		if pol.Value <= 0 {
			errs = append(errs, field.Invalid(ip.Child("value"), pol.Value, "must be greater than zero"))
		}
		if pol.PeriodSeconds <= 0 {
			errs = append(errs, field.Invalid(ip.Child("periodSeconds"), pol.PeriodSeconds, "must be greater than zero"))
		}
		if pol.PeriodSeconds > maxPeriodSeconds {
			errs = append(errs, field.Invalid(ip.Child("periodSeconds"), pol.PeriodSeconds, fmt.Sprintf("must be less than or equal to %d", maxPeriodSeconds)))
		}
	}
	return errs
}

// ValidateCronFederatedHPA validates a CronFederatedHPA on create.
func ValidateCronFederatedHPA(c *autoscalingv1alpha1.CronFederatedHPA) field.ErrorList {
	errs := apivalidation.ValidateObjectMeta(&c.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(errs, validateCronFederatedHPASpec(&c.Spec, field.NewPath("spec"))...)
}

// ValidateCronFederatedHPAUpdate validates a CronFederatedHPA on update.
func ValidateCronFederatedHPAUpdate(c, old *autoscalingv1alpha1.CronFederatedHPA) field.ErrorList {
	errs := apivalidation.ValidateObjectMetaUpdate(&c.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(errs, validateCronFederatedHPASpec(&c.Spec, field.NewPath("spec"))...)
}

// ValidateSchedule checks a standard five-field cron expression (or a
// descriptor such as @hourly), as the CronFederatedHPA controller reads it.
func ValidateSchedule(schedule string, p *field.Path) field.ErrorList {
	if schedule == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	if _, err := cron.ParseStandard(schedule); err != nil {
		return field.ErrorList{field.Invalid(p, schedule, fmt.Sprintf("invalid cron format: %v", err))}
	}
	return nil
}

func validateCronFederatedHPASpec(s *autoscalingv1alpha1.CronFederatedHPASpec, p *field.Path) field.ErrorList {
	ref, rp := s.ScaleTargetRef, p.Child("scaleTargetRef")
	errs := validateCrossVersionObjectReference(ref, rp)
	// A target in this group must be a FederatedHPA; its rules then set
	// minReplicas/maxReplicas instead of replicas.
	scalesFHPA, targetKnown := false, true
	if ref.APIVersion == autoscalingv1alpha1.SchemeGroupVersion.String() {
		if ref.Kind != autoscalingv1alpha1.FederatedHPAKind {
			errs = append(errs, field.Invalid(rp.Child("kind"), ref.Kind, fmt.Sprintf("invalid scaleTargetRef kind: %s, only support %s", ref.Kind, autoscalingv1alpha1.FederatedHPAKind)))
			targetKnown = false
		}
		scalesFHPA = true
	}

	rules := p.Child("rules")
	if len(s.Rules) == 0 {
		errs = append(errs, field.Required(rules, "must specify at least one rule"))
	}
	names := sets.New[string]()
	for i := range s.Rules {
		r, ip := &s.Rules[i], rules.Index(i)
		switch {
		case r.Name == "":
			errs = append(errs, field.Required(ip.Child("name"), ""))
		case len(r.Name) > maxRuleNameLength:
			errs = append(errs, field.TooLong(ip.Child("name"), r.Name, maxRuleNameLength))
		case names.Has(r.Name):
			errs = append(errs, field.Duplicate(ip.Child("name"), r.Name))
		}
		names.Insert(r.Name)
		errs = append(errs, ValidateSchedule(r.Schedule, ip.Child("schedule"))...)
		if r.TimeZone != nil {
			if _, err := time.LoadLocation(*r.TimeZone); err != nil {
				errs = append(errs, field.Invalid(ip.Child("timeZone"), *r.TimeZone, err.Error()))
			}
		}
		errs = append(errs, validateHistoryLimit(r.SuccessfulHistoryLimit, 1, ip.Child("successfulHistoryLimit"))...)
		errs = append(errs, validateHistoryLimit(r.FailedHistoryLimit, 0, ip.Child("failedHistoryLimit"))...)
		if targetKnown {
			errs = append(errs, validateRuleTarget(r, scalesFHPA, ref.Kind, ip)...)
		}
	}
	return errs
}

func validateHistoryLimit(limit *int32, lowest int32, p *field.Path) field.ErrorList {
	if limit != nil && (*limit < lowest || *limit > maxHistoryLimit) {
		return field.ErrorList{field.Invalid(p, *limit, fmt.Sprintf("must be between %d and %d", lowest, maxHistoryLimit))}
	}
	return nil
}

// validateRuleTarget checks what a rule sets: bounds of a FederatedHPA, or
// the replicas of any other target.
func validateRuleTarget(r *autoscalingv1alpha1.CronFederatedHPARule, scalesFHPA bool, kind string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if !scalesFHPA {
		switch {
		case r.TargetReplicas == nil:
			errs = append(errs, field.Required(p.Child("targetReplicas"), fmt.Sprintf("targetReplicas cannot be nil if you want to scale %s", kind)))
		case *r.TargetReplicas < 0:
			errs = append(errs, field.Invalid(p.Child("targetReplicas"), *r.TargetReplicas, "must be greater than or equal to 0"))
		}
		return errs
	}
	if r.TargetMinReplicas == nil && r.TargetMaxReplicas == nil {
		errs = append(errs, field.Required(p, "targetMinReplicas and targetMaxReplicas cannot be nil at the same time if you want to scale FederatedHPA"))
	}
	if r.TargetMinReplicas != nil && *r.TargetMinReplicas <= 0 {
		errs = append(errs, field.Invalid(p.Child("targetMinReplicas"), *r.TargetMinReplicas, "must be greater than 0"))
	}
	if r.TargetMaxReplicas != nil && *r.TargetMaxReplicas <= 0 {
		errs = append(errs, field.Invalid(p.Child("targetMaxReplicas"), *r.TargetMaxReplicas, "must be greater than 0"))
	}
	if r.TargetMinReplicas != nil && r.TargetMaxReplicas != nil && *r.TargetMinReplicas > *r.TargetMaxReplicas {
		errs = append(errs, field.Invalid(p.Child("targetMinReplicas"), *r.TargetMinReplicas, "must be less than or equal to targetMaxReplicas"))
	}
	return errs
}
