package lua

import (
	configv1alpha1 "github.com/flotilla-io/flotilla/apis/config/v1alpha1"
	"github.com/flotilla-io/flotilla/controllers/interpreter"
)

// Operation is one customizable operation: the RIC field holding its
// script and the global function the script defines.
type Operation struct {
	Operation interpreter.Operation
	// Field is the JSON name of the field under spec.customizations.
	Field string
	// Function is the global Lua function called.
	Function string
	// Script returns the operation's script in rules; "" when unset.
	Script func(rules *configv1alpha1.CustomizationRules) string
}

// Operations are the operations a ResourceInterpreterCustomization can
// define, in the order of its fields.
var Operations = []Operation{
	{interpreter.Retain, "retention", "Retain", func(r *configv1alpha1.CustomizationRules) string {
		if r.Retention == nil {
			return ""
		}
		return r.Retention.LuaScript
	}},
	{interpreter.InterpretReplica, "replicaResource", "GetReplicas", func(r *configv1alpha1.CustomizationRules) string {
		if r.ReplicaResource == nil {
			return ""
		}
		return r.ReplicaResource.LuaScript
	}},
	{interpreter.InterpretComponent, "componentResource", "GetComponents", func(r *configv1alpha1.CustomizationRules) string {
		if r.ComponentResource == nil {
			return ""
		}
		return r.ComponentResource.LuaScript
	}},
	{interpreter.ReviseReplica, "replicaRevision", "ReviseReplica", func(r *configv1alpha1.CustomizationRules) string {
		if r.ReplicaRevision == nil {
			return ""
		}
		return r.ReplicaRevision.LuaScript
	}},
	{interpreter.InterpretStatus, "statusReflection", "ReflectStatus", func(r *configv1alpha1.CustomizationRules) string {
		if r.StatusReflection == nil {
			return ""
		}
		return r.StatusReflection.LuaScript
	}},
	{interpreter.AggregateStatus, "statusAggregation", "AggregateStatus", func(r *configv1alpha1.CustomizationRules) string {
		if r.StatusAggregation == nil {
			return ""
		}
		return r.StatusAggregation.LuaScript
	}},
	{interpreter.InterpretHealth, "healthInterpretation", "InterpretHealth", func(r *configv1alpha1.CustomizationRules) string {
		if r.HealthInterpretation == nil {
			return ""
		}
		return r.HealthInterpretation.LuaScript
	}},
	{interpreter.InterpretDependency, "dependencyInterpretation", "GetDependencies", func(r *configv1alpha1.CustomizationRules) string {
		if r.DependencyInterpretation == nil {
			return ""
		}
		return r.DependencyInterpretation.LuaScript
	}},
}
