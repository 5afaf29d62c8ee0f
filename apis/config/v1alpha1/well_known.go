package v1alpha1

// InterpreterOperation is an operation the resource interpreter performs.
type InterpreterOperation string

// The interpreter operations.
const (
	// InterpreterOperationAll matches every operation in webhook rules.
	InterpreterOperationAll InterpreterOperation = "*"
	// InterpreterOperationInterpretReplica reports the replicas of an object and what each replica requires.
	InterpreterOperationInterpretReplica InterpreterOperation = "InterpretReplica"
	// InterpreterOperationInterpretComponent reports the components of a multi-template workload.
	InterpreterOperationInterpretComponent InterpreterOperation = "InterpretComponent"
	// InterpreterOperationReviseReplica sets the replicas of an object for one cluster.
	InterpreterOperationReviseReplica InterpreterOperation = "ReviseReplica"
	// InterpreterOperationInterpretStatus picks the status reported from a member cluster.
	InterpreterOperationInterpretStatus InterpreterOperation = "InterpretStatus"
	// InterpreterOperationPrune removes what must not be applied to a member cluster.
	InterpreterOperationPrune InterpreterOperation = "Prune"
	// InterpreterOperationRetain keeps values a member cluster changed.
	InterpreterOperationRetain InterpreterOperation = "Retain"
	// InterpreterOperationAggregateStatus folds member statuses into the resource template.
	InterpreterOperationAggregateStatus InterpreterOperation = "AggregateStatus"
	// InterpreterOperationInterpretHealth says whether an object in a member cluster is healthy.
	InterpreterOperationInterpretHealth InterpreterOperation = "InterpretHealth"
	// InterpreterOperationInterpretDependency lists the objects an object depends on.
	InterpreterOperationInterpretDependency InterpreterOperation = "InterpretDependency"
)

// The global Lua functions a ResourceInterpreterCustomization script must define, per rule.
const (
	// LuaFunctionRetain is the function of customizations.retention.
	LuaFunctionRetain = "Retain"
	// LuaFunctionGetReplicas is the function of customizations.replicaResource.
	LuaFunctionGetReplicas = "GetReplicas"
	// LuaFunctionGetComponents is the function of customizations.componentResource.
	LuaFunctionGetComponents = "GetComponents"
	// LuaFunctionReviseReplica is the function of customizations.replicaRevision.
	LuaFunctionReviseReplica = "ReviseReplica"
	// LuaFunctionReflectStatus is the function of customizations.statusReflection.
	LuaFunctionReflectStatus = "ReflectStatus"
	// LuaFunctionAggregateStatus is the function of customizations.statusAggregation.
	LuaFunctionAggregateStatus = "AggregateStatus"
	// LuaFunctionInterpretHealth is the function of customizations.healthInterpretation.
	LuaFunctionInterpretHealth = "InterpretHealth"
	// LuaFunctionGetDependencies is the function of customizations.dependencyInterpretation.
	LuaFunctionGetDependencies = "GetDependencies"
)

// +k8s:deepcopy-gen=false
// +k8s:openapi-gen=false

// CustomizationScript is one Lua rule of a customization, as listed by Scripts.
type CustomizationScript struct {
	// Field is the JSON name of the rule under spec.customizations, e.g. replicaResource.
	Field string
	// Operation is the interpreter operation the rule implements.
	Operation InterpreterOperation
	// Function is the global Lua function the script must define.
	Function string
	// Set says whether the rule is present.
	Set bool
	// Script is the Lua source; empty when the rule is not set.
	Script string
}

// Scripts lists every rule of r, set or not, in a fixed order, so that
// validation, the interpreter and conflict checks walk them alike.
func (r *CustomizationRules) Scripts() []CustomizationScript {
	out := []CustomizationScript{
		{Field: "retention", Operation: InterpreterOperationRetain, Function: LuaFunctionRetain},
		{Field: "replicaResource", Operation: InterpreterOperationInterpretReplica, Function: LuaFunctionGetReplicas},
		{Field: "componentResource", Operation: InterpreterOperationInterpretComponent, Function: LuaFunctionGetComponents},
		{Field: "replicaRevision", Operation: InterpreterOperationReviseReplica, Function: LuaFunctionReviseReplica},
		{Field: "statusReflection", Operation: InterpreterOperationInterpretStatus, Function: LuaFunctionReflectStatus},
		{Field: "statusAggregation", Operation: InterpreterOperationAggregateStatus, Function: LuaFunctionAggregateStatus},
		{Field: "healthInterpretation", Operation: InterpreterOperationInterpretHealth, Function: LuaFunctionInterpretHealth},
		{Field: "dependencyInterpretation", Operation: InterpreterOperationInterpretDependency, Function: LuaFunctionGetDependencies},
	}
	set := func(i int, ok bool, script func() string) {
		if ok {
			out[i].Set, out[i].Script = true, script()
		}
	}
	set(0, r.Retention != nil, func() string { return r.Retention.LuaScript })
	set(1, r.ReplicaResource != nil, func() string { return r.ReplicaResource.LuaScript })
	set(2, r.ComponentResource != nil, func() string { return r.ComponentResource.LuaScript })
	set(3, r.ReplicaRevision != nil, func() string { return r.ReplicaRevision.LuaScript })
	set(4, r.StatusReflection != nil, func() string { return r.StatusReflection.LuaScript })
	set(5, r.StatusAggregation != nil, func() string { return r.StatusAggregation.LuaScript })
	set(6, r.HealthInterpretation != nil, func() string { return r.HealthInterpretation.LuaScript })
	set(7, r.DependencyInterpretation != nil, func() string { return r.DependencyInterpretation.LuaScript })
	return out
}
