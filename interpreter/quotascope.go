package interpreter

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// QuotaScoped makes the replica requirements of every interpretation —
// built-in, Lua, webhook or shipped — carry what the estimator needs to
// count the members' ResourceQuotas, as Karmada's ResourceQuotaEstimate
// feature gate does: with Enabled, the namespace of the replicas (the
// template's, unless the interpretation named one) and their priority
// class (when the interpretation found one in the pod template); without,
// neither, so bindings are as Karmada writes them with the gate off.
type QuotaScoped struct {
	Interpreter
	Enabled bool
}

// GetReplicas implements Interpreter.
func (q QuotaScoped) GetReplicas(obj *unstructured.Unstructured) (int32, *workv1alpha2.ReplicaRequirements, error) {
	n, req, err := q.Interpreter.GetReplicas(obj)
	if err != nil || req == nil {
		return n, req, err
	}
	return n, ScopeRequirements(req, obj.GetNamespace(), q.Enabled), nil
}

// ScopeRequirements returns req with its namespace and priority class set
// as QuotaScoped describes; req itself is not changed.
func ScopeRequirements(req *workv1alpha2.ReplicaRequirements, namespace string, enabled bool) *workv1alpha2.ReplicaRequirements {
	out := *req
	if !enabled {
		out.Namespace, out.PriorityClassName = "", ""
	} else if out.Namespace == "" {
		out.Namespace = namespace
	}
	return &out
}
