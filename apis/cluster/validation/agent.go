package validation

import (
	"fmt"
	"slices"
	"strings"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/names"
)

// AgentCluster returns the cluster whose agent the user is: a user named
// system:karmada:agent:<cluster> in the group system:karmada:agents.
func AgentCluster(user string, groups []string) (string, bool) {
	cluster, ok := strings.CutPrefix(user, names.AgentUserPrefix)
	if !ok || cluster == "" || !slices.Contains(groups, names.AgentsGroup) {
		return "", false
	}
	return cluster, true
}

// ValidateClusterUpdateByAgent validates a write of a Cluster by the agent
// of cluster agentOf. An agent reports what Karmada's agent reports
// (status, and spec provider, region and zones), and changes nothing that
// decides where or how the control plane connects to a member or where
// workloads go: syncMode, apiEndpoint, the secret references, TLS and proxy
// settings, id, taints, resource models, labels, annotations, finalizers
// and owners stay as an admin or the registration set them. The status
// subresource calls it too: there the spec is already the stored one, but
// metadata would otherwise pass.
func ValidateClusterUpdateByAgent(agentOf string, c, old *clusterv1alpha1.Cluster) field.ErrorList {
	if c.Name != agentOf {
		return field.ErrorList{field.Forbidden(field.NewPath("metadata", "name"),
			fmt.Sprintf("the agent of cluster %s may not write cluster %s", agentOf, c.Name))}
	}
	forbid := func(p *field.Path) *field.Error {
		return field.Forbidden(p, "an agent may not change this field; a control-plane admin must")
	}
	var errs field.ErrorList
	meta, spec := field.NewPath("metadata"), field.NewPath("spec")
	n, o := c.Spec, old.Spec
	for _, f := range []struct {
		path     *field.Path
		new, old any
	}{
		{meta.Child("labels"), c.Labels, old.Labels},
		{meta.Child("annotations"), c.Annotations, old.Annotations},
		{meta.Child("finalizers"), c.Finalizers, old.Finalizers},
		{meta.Child("ownerReferences"), c.OwnerReferences, old.OwnerReferences},
		{spec.Child("id"), n.ID, o.ID},
		{spec.Child("syncMode"), n.SyncMode, o.SyncMode},
		{spec.Child("apiEndpoint"), n.APIEndpoint, o.APIEndpoint},
		{spec.Child("secretRef"), n.SecretRef, o.SecretRef},
		{spec.Child("impersonatorSecretRef"), n.ImpersonatorSecretRef, o.ImpersonatorSecretRef},
		{spec.Child("insecureSkipTLSVerification"), n.InsecureSkipTLSVerification, o.InsecureSkipTLSVerification},
		{spec.Child("proxyURL"), n.ProxyURL, o.ProxyURL},
		{spec.Child("proxyHeader"), n.ProxyHeader, o.ProxyHeader},
		{spec.Child("taints"), n.Taints, o.Taints},
		{spec.Child("resourceModels"), n.ResourceModels, o.ResourceModels},
	} {
		if !apiequality.Semantic.DeepEqual(f.new, f.old) {
			errs = append(errs, forbid(f.path))
		}
	}
	// Fields added to the API later are an admin's until listed above.
	reported := n
	reported.Provider, reported.Region, reported.Zone, reported.Zones = o.Provider, o.Region, o.Zone, o.Zones
	if len(errs) == 0 && !apiequality.Semantic.DeepEqual(reported, o) {
		errs = append(errs, field.Forbidden(spec, "an agent may change only spec.provider, spec.region, spec.zone and spec.zones"))
	}
	return errs
}
