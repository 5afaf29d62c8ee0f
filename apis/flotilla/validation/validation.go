// Package validation validates RolloutStrategies: the stages, their
// clusters, concurrency, timings and gates.
package validation

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	clustervalidation "github.com/flotilla-io/flotilla/apis/cluster/validation"
	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
)

// ValidateRolloutStrategy validates a RolloutStrategy on create.
func ValidateRolloutStrategy(s *flotillav1alpha1.RolloutStrategy) field.ErrorList {
	errs := apivalidation.ValidateObjectMeta(&s.ObjectMeta, false, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(errs, validateSpec(&s.Spec, field.NewPath("spec"))...)
}

// ValidateRolloutStrategyUpdate validates a RolloutStrategy on update: the
// spec as on create.
func ValidateRolloutStrategyUpdate(s, old *flotillav1alpha1.RolloutStrategy) field.ErrorList {
	errs := apivalidation.ValidateObjectMetaUpdate(&s.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(errs, validateSpec(&s.Spec, field.NewPath("spec"))...)
}

var gateTypes = []flotillav1alpha1.GateType{flotillav1alpha1.GateWait, flotillav1alpha1.GateApproval}

var newClustersPolicies = []flotillav1alpha1.NewClustersPolicy{flotillav1alpha1.NewClustersImmediately, flotillav1alpha1.NewClustersInStage}

func validateSpec(s *flotillav1alpha1.RolloutStrategySpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.NewClusters != "" && !slices.Contains(newClustersPolicies, s.NewClusters) {
		errs = append(errs, field.NotSupported(p.Child("newClusters"), s.NewClusters, newClustersPolicies))
	}
	sp := p.Child("stages")
	switch n := len(s.Stages); {
	case n == 0:
		errs = append(errs, field.Required(sp, "at least one stage"))
	case n > flotillav1alpha1.MaxStages:
		errs = append(errs, field.TooMany(sp, n, flotillav1alpha1.MaxStages))
	}
	stageNames := sets.New[string]()
	// stageOf is the index of the stage naming each cluster.
	stageOf := map[string]int{}
	for i := range s.Stages {
		st, ip := &s.Stages[i], sp.Index(i)
		np := ip.Child("name")
		switch {
		case st.Name == "":
			errs = append(errs, field.Required(np, ""))
		case stageNames.Has(st.Name):
			errs = append(errs, field.Duplicate(np, st.Name))
		default:
			for _, msg := range validation.IsDNS1123Label(st.Name) {
				errs = append(errs, field.Invalid(np, st.Name, msg))
			}
		}
		stageNames.Insert(st.Name)
		errs = append(errs, validateClusters(&st.Clusters, i, stageOf, ip.Child("clusters"))...)
		errs = append(errs, validateStage(st, ip)...)
		for j, g := range st.Before {
			errs = append(errs, validateGate(g, ip.Child("before").Index(j))...)
		}
		for j, g := range st.After {
			errs = append(errs, validateGate(g, ip.Child("after").Index(j))...)
		}
	}
	return errs
}

// validateClusters checks the clusters of stage i; stageOf records which
// stage names each cluster, across stages.
func validateClusters(c *flotillav1alpha1.StageClusters, i int, stageOf map[string]int, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(c.Names) == 0 && c.LabelSelector == nil {
		errs = append(errs, field.Required(p, "names or labelSelector"))
	}
	seen := sets.New[string]()
	for j, name := range c.Names {
		np := p.Child("names").Index(j)
		if name == "" {
			errs = append(errs, field.Required(np, ""))
			continue
		}
		if seen.Has(name) {
			errs = append(errs, field.Duplicate(np, name))
			continue
		}
		seen.Insert(name)
		// Every earlier name of this stage is in seen: prev is another stage.
		if prev, named := stageOf[name]; named {
			errs = append(errs, field.Invalid(np, name, fmt.Sprintf("overlaps stage %d, which names the same cluster", prev)))
		} else {
			stageOf[name] = i
		}
		if msgs := clustervalidation.ValidateClusterName(name, false); len(msgs) > 0 {
			errs = append(errs, field.Invalid(np, name, strings.Join(msgs, ", ")))
		}
	}
	if c.LabelSelector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(c.LabelSelector, metav1validation.LabelSelectorValidationOptions{}, p.Child("labelSelector"))...)
	}
	if c.OrderByLabel != "" {
		errs = append(errs, metav1validation.ValidateLabelName(c.OrderByLabel, p.Child("orderByLabel"))...)
	}
	return errs
}

func validateStage(st *flotillav1alpha1.RolloutStage, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if c := st.MaxConcurrency; c != nil {
		errs = append(errs, validateConcurrency(*c, p.Child("maxConcurrency"))...)
	}
	if st.SoakTime != nil && st.SoakTime.Duration < 0 {
		errs = append(errs, field.Invalid(p.Child("soakTime"), st.SoakTime.Duration.String(), "must be at least 0"))
	}
	if st.ProgressDeadline != nil && st.ProgressDeadline.Duration <= 0 {
		errs = append(errs, field.Invalid(p.Child("progressDeadline"), st.ProgressDeadline.Duration.String(), "must be more than 0"))
	}
	if st.MaxFailures != nil && *st.MaxFailures < 0 {
		errs = append(errs, field.Invalid(p.Child("maxFailures"), *st.MaxFailures, "must be at least 0"))
	}
	return errs
}

// validateConcurrency accepts a number from 1 or a percentage from 1% to 100%.
func validateConcurrency(c intstr.IntOrString, p *field.Path) field.ErrorList {
	if c.Type == intstr.Int {
		if c.IntVal < 1 {
			return field.ErrorList{field.Invalid(p, c.IntVal, "must be at least 1")}
		}
		return nil
	}
	const msg = `must be a number from 1 or a percentage from "1%" to "100%"`
	if len(validation.IsValidPercent(c.StrVal)) > 0 {
		return field.ErrorList{field.Invalid(p, c.StrVal, msg)}
	}
	if n, err := strconv.Atoi(strings.TrimSuffix(c.StrVal, "%")); err != nil || n < 1 || n > 100 {
		return field.ErrorList{field.Invalid(p, c.StrVal, msg)}
	}
	return nil
}

func validateGate(g flotillav1alpha1.RolloutGate, p *field.Path) field.ErrorList {
	dp := p.Child("duration")
	switch g.Type {
	case flotillav1alpha1.GateWait:
		if g.Duration == nil {
			return field.ErrorList{field.Required(dp, "a Wait gate needs a duration")}
		}
		if g.Duration.Duration <= 0 {
			return field.ErrorList{field.Invalid(dp, g.Duration.Duration.String(), "must be more than 0")}
		}
	case flotillav1alpha1.GateApproval:
		if g.Duration != nil {
			return field.ErrorList{field.Forbidden(dp, "an Approval gate has no duration")}
		}
	case "":
		return field.ErrorList{field.Required(p.Child("type"), "")}
	default:
		return field.ErrorList{field.NotSupported(p.Child("type"), g.Type, gateTypes)}
	}
	return nil
}
