package multiget

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/flotilla-io/flotilla/cli/clusterproxy"
)

// OperationScope is karmadactl's --operation-scope: where a command reads
// (the one flag value of every command, declared in clusterproxy).
type OperationScope = clusterproxy.Scope

// ControlPlaneName is the CLUSTER of the control plane's objects, the name
// karmadactl prints, so output and scripts written for karmadactl agree.
const ControlPlaneName = "Karmada"

// Plan is where a command reads: the control plane, member clusters, or
// both.
type Plan struct {
	ControlPlane bool
	Members      []string
}

// ErrNoMembers says that the scope asks for member clusters and none is
// registered.
var ErrNoMembers = errors.New("no member clusters found in the control plane")

// PlanTargets decides where to read.
//
// scope is the --operation-scope flag and scopeSet says whether the user
// gave it; requested are the -C clusters. As in karmadactl, -C names
// member clusters for the members and all scopes, and members without -C
// means every registered cluster. Unlike karmadactl, which ignores -C in
// the default karmada scope, -C without --operation-scope reads those
// members (what `karmadactl get pods -C member1` did before operation
// scopes existed), and -C with an explicit --operation-scope=karmada is an
// error rather than silently ignored.
//
// registered are the clusters of the control plane, known says whether
// they could be listed: a caller that may not list clusters can still name
// them with -C, and an unknown name then fails at the proxy instead of
// here.
func PlanTargets(scope OperationScope, scopeSet bool, requested, registered []string, known bool) (Plan, error) {
	requested = dedupe(requested)
	if len(requested) > 0 && !scopeSet {
		scope = clusterproxy.ScopeMembers
	}
	switch scope {
	case clusterproxy.ScopeKarmada:
		if len(requested) > 0 {
			return Plan{}, fmt.Errorf("--clusters %s: clusters are read with --operation-scope=%s or %s, not %s",
				strings.Join(requested, ","), clusterproxy.ScopeMembers, clusterproxy.ScopeAll, clusterproxy.ScopeKarmada)
		}
		return Plan{ControlPlane: true}, nil
	case clusterproxy.ScopeMembers, clusterproxy.ScopeAll:
	default:
		return Plan{}, fmt.Errorf("operation scope %q is not one of %s, %s, %s", scope, clusterproxy.ScopeKarmada, clusterproxy.ScopeMembers, clusterproxy.ScopeAll)
	}
	plan := Plan{ControlPlane: scope == clusterproxy.ScopeAll}
	if len(requested) == 0 {
		if !known {
			return Plan{}, fmt.Errorf("the member clusters could not be listed: name them with --clusters")
		}
		plan.Members = slices.Sorted(slices.Values(registered))
		if len(plan.Members) == 0 && !plan.ControlPlane {
			return Plan{}, ErrNoMembers
		}
		return plan, nil
	}
	if known {
		var unknown []string
		for _, c := range requested {
			if !slices.Contains(registered, c) {
				unknown = append(unknown, c)
			}
		}
		if len(unknown) > 0 {
			noun := "cluster"
			if len(unknown) > 1 {
				noun = "clusters"
			}
			have := "none"
			if len(registered) > 0 {
				have = strings.Join(slices.Sorted(slices.Values(registered)), ", ")
			}
			return Plan{}, fmt.Errorf("%s %s not found in the control plane (registered: %s)", noun, quoteAll(unknown), have)
		}
	}
	plan.Members = requested
	return plan, nil
}

// dedupe drops empty and repeated names, keeping the first occurrence.
func dedupe(names []string) []string {
	var out []string
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}
