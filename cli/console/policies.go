package console

import (
	"encoding/json"
	"net/http"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
)

// PolicyRow is a policy, what it selects, what it says, and the templates
// it claims (for propagation policies).
type PolicyRow struct {
	Kind, Namespace, Name string
	Selectors             []string
	// Detail is the placement or the override rules, as JSON.
	Detail string
	Claims []string
}

// selectorText prints a resource selector as kubectl users write one.
func selectorText(s policyv1alpha1.ResourceSelector) string {
	out := s.Kind
	if s.Namespace != "" {
		out += " in " + s.Namespace
	}
	if s.Name != "" {
		out += " named " + s.Name
	}
	if s.LabelSelector != nil {
		out += " with labels " + metav1.FormatLabelSelector(s.LabelSelector)
	}
	return out
}

func policyRow(kind string, meta metav1.ObjectMeta, selectors []policyv1alpha1.ResourceSelector, detail any) PolicyRow {
	r := PolicyRow{Kind: kind, Namespace: meta.Namespace, Name: meta.Name}
	for _, s := range selectors {
		r.Selectors = append(r.Selectors, selectorText(s))
	}
	if b, err := json.Marshal(detail); err == nil {
		r.Detail = string(b)
	}
	return r
}

// policiesData is the policies of a namespace (or all) and the cluster's.
type policiesData struct {
	Namespace string
	Policies  []PolicyRow
	Overrides []PolicyRow
}

// bindingsScanned bounds the bindings read to tell which templates a
// policy claims.
const bindingsScanned = 500

func (s *Server) policies(w http.ResponseWriter, r *http.Request) {
	ns := r.URL.Query().Get("namespace")
	ctx := r.Context()
	d := policiesData{Namespace: ns}
	var errs []string
	claims := map[string][]string{}
	if bs, err := s.karmadaOf(r).WorkV1alpha2().ResourceBindings(ns).List(ctx, metav1.ListOptions{Limit: bindingsScanned}); err == nil {
		for _, b := range bs.Items {
			tmpl := b.Spec.Resource.Kind + " " + b.Spec.Resource.Namespace + "/" + b.Spec.Resource.Name
			if p := b.Annotations[policyv1alpha1.PropagationPolicyNameAnnotation]; p != "" {
				key := "PropagationPolicy/" + b.Annotations[policyv1alpha1.PropagationPolicyNamespaceAnnotation] + "/" + p
				claims[key] = append(claims[key], tmpl)
			} else if p := b.Annotations[policyv1alpha1.ClusterPropagationPolicyAnnotation]; p != "" {
				key := "ClusterPropagationPolicy//" + p
				claims[key] = append(claims[key], tmpl)
			}
		}
	}
	if pps, err := s.karmadaOf(r).PolicyV1alpha1().PropagationPolicies(ns).List(ctx, metav1.ListOptions{}); err == nil {
		for _, p := range pps.Items {
			row := policyRow("PropagationPolicy", p.ObjectMeta, p.Spec.ResourceSelectors, p.Spec.Placement)
			row.Claims = claims["PropagationPolicy/"+p.Namespace+"/"+p.Name]
			d.Policies = append(d.Policies, row)
		}
	} else {
		errs = append(errs, problem(err))
	}
	if ns == "" {
		if cpps, err := s.karmadaOf(r).PolicyV1alpha1().ClusterPropagationPolicies().List(ctx, metav1.ListOptions{}); err == nil {
			for _, p := range cpps.Items {
				row := policyRow("ClusterPropagationPolicy", p.ObjectMeta, p.Spec.ResourceSelectors, p.Spec.Placement)
				row.Claims = claims["ClusterPropagationPolicy//"+p.Name]
				d.Policies = append(d.Policies, row)
			}
		} else {
			errs = append(errs, problem(err))
		}
		if cops, err := s.karmadaOf(r).PolicyV1alpha1().ClusterOverridePolicies().List(ctx, metav1.ListOptions{}); err == nil {
			for _, p := range cops.Items {
				d.Overrides = append(d.Overrides, policyRow("ClusterOverridePolicy", p.ObjectMeta, p.Spec.ResourceSelectors, p.Spec.OverrideRules))
			}
		} else {
			errs = append(errs, problem(err))
		}
	}
	if ops, err := s.karmadaOf(r).PolicyV1alpha1().OverridePolicies(ns).List(ctx, metav1.ListOptions{}); err == nil {
		for _, p := range ops.Items {
			d.Overrides = append(d.Overrides, policyRow("OverridePolicy", p.ObjectMeta, p.Spec.ResourceSelectors, p.Spec.OverrideRules))
		}
	} else {
		errs = append(errs, problem(err))
	}
	s.render(w, "policies", page{Title: "Policies", Nav: "policies", Error: strings.Join(errs, "; "), Data: d})
}
