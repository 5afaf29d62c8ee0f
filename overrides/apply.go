package overrides

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
)

// OverridePolicyShadow is one entry of the applied-overrides annotations: the
// name of a policy and the overriders of one of its rules that was applied.
// Its JSON shape is Karmada's overridemanager.OverridePolicyShadow.
type OverridePolicyShadow struct {
	// PolicyName is the name of the applied policy.
	PolicyName string `json:"policyName"`
	// Overriders are the overriders of the applied rule.
	Overriders policyv1alpha1.Overriders `json:"overriders"`
}

// Apply applies the override policies matching obj for cluster to obj (in
// place) and returns the annotations recording what was applied. It has the
// type binding.OverrideFunc.
//
// ClusterOverridePolicies are applied first, then, for a namespaced obj, the
// OverridePolicies of its namespace; policies being deleted are ignored. The
// returned map holds policyv1alpha1.AppliedClusterOverridesAnnotation and
// policyv1alpha1.AppliedOverridesAnnotation only when at least one rule of
// that kind of policy was applied; it is nil when none was. On error obj may
// be partly overridden and must be discarded. The policies are not modified.
func Apply(obj *unstructured.Unstructured, cluster *clusterv1alpha1.Cluster,
	cops []*policyv1alpha1.ClusterOverridePolicy, ops []*policyv1alpha1.OverridePolicy) (map[string]string, error) {
	if obj == nil || obj.Object == nil || cluster == nil {
		return nil, errors.New("applying overrides: nil object or cluster")
	}
	var annos map[string]string
	record := func(key string, applied []OverridePolicyShadow) error {
		if len(applied) == 0 {
			return nil
		}
		v, err := appliedJSON(applied)
		if err != nil {
			return err
		}
		if annos == nil {
			annos = map[string]string{}
		}
		annos[key] = v
		return nil
	}

	applied, err := applyCandidates(obj, cluster, clusterCandidates(obj, cops))
	if err != nil {
		return nil, err
	}
	if err := record(policyv1alpha1.AppliedClusterOverridesAnnotation, applied); err != nil {
		return nil, err
	}
	// Cluster-scoped objects never get OverridePolicies: those are namespaced
	// and only override the resources of their own namespace.
	if obj.GetNamespace() == "" {
		return annos, nil
	}
	applied, err = applyCandidates(obj, cluster, namespaceCandidates(obj, ops))
	if err != nil {
		return nil, err
	}
	if err := record(policyv1alpha1.AppliedOverridesAnnotation, applied); err != nil {
		return nil, err
	}
	return annos, nil
}

// applyCandidates applies, in order, every rule of cs that targets cluster
// and returns one shadow per applied rule.
func applyCandidates(obj *unstructured.Unstructured, cluster *clusterv1alpha1.Cluster, cs []candidate) ([]OverridePolicyShadow, error) {
	var applied []OverridePolicyShadow
	for _, c := range cs {
		for _, o := range matchingRules(c.spec, cluster) {
			if err := applyOverriders(obj, o); err != nil {
				return nil, fmt.Errorf("applying %s for cluster %s: %w", c.ref, cluster.Name, err)
			}
			applied = append(applied, OverridePolicyShadow{PolicyName: c.name, Overriders: *o})
		}
	}
	return applied, nil
}

// applyOverriders applies o to obj in Karmada's fixed order: image, command,
// args, labels, annotations, field, plaintext. Each overrider sees the result
// of the previous ones.
func applyOverriders(obj *unstructured.Unstructured, o *policyv1alpha1.Overriders) error {
	for i := range o.ImageOverrider {
		if err := applyImage(obj, &o.ImageOverrider[i]); err != nil {
			return fmt.Errorf("imageOverrider[%d]: %w", i, err)
		}
	}
	for i := range o.CommandOverrider {
		if err := applyCommandArgs(obj, "command", &o.CommandOverrider[i]); err != nil {
			return fmt.Errorf("commandOverrider[%d]: %w", i, err)
		}
	}
	for i := range o.ArgsOverrider {
		if err := applyCommandArgs(obj, "args", &o.ArgsOverrider[i]); err != nil {
			return fmt.Errorf("argsOverrider[%d]: %w", i, err)
		}
	}
	for i := range o.LabelsOverrider {
		if err := applyMetadataMap(obj, "labels", &o.LabelsOverrider[i]); err != nil {
			return fmt.Errorf("labelsOverrider[%d]: %w", i, err)
		}
	}
	for i := range o.AnnotationsOverrider {
		if err := applyMetadataMap(obj, "annotations", &o.AnnotationsOverrider[i]); err != nil {
			return fmt.Errorf("annotationsOverrider[%d]: %w", i, err)
		}
	}
	for i := range o.FieldOverrider {
		if err := applyField(obj, &o.FieldOverrider[i]); err != nil {
			return fmt.Errorf("fieldOverrider[%d]: %w", i, err)
		}
	}
	// All plaintext operations form one JSON patch, as in Karmada: they
	// succeed or fail together.
	if len(o.Plaintext) > 0 {
		if err := applyPlaintext(obj, o.Plaintext); err != nil {
			return fmt.Errorf("plaintext: %w", err)
		}
	}
	return nil
}

// appliedJSON encodes applied as Karmada does: a JSON list sorted by policy
// name (not by application order). The sort is stable so that the rules of
// one policy keep their order.
func appliedJSON(applied []OverridePolicyShadow) (string, error) {
	sorted := slices.Clone(applied)
	slices.SortStableFunc(sorted, func(a, b OverridePolicyShadow) int {
		return strings.Compare(a.PolicyName, b.PolicyName)
	})
	b, err := json.Marshal(sorted)
	if err != nil {
		return "", fmt.Errorf("encoding applied overrides: %w", err)
	}
	return string(b), nil
}
