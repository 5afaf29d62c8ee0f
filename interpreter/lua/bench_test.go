package lua

import (
	"context"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/interpreter"
)

// deploymentSized is a Workload with the body of a typical Deployment as
// the API server returns it (defaults, managed labels and annotations,
// status): about 2.5 KB of JSON.
const deploymentSized = `
apiVersion: workload.example.io/v1alpha1
kind: Workload
metadata:
  name: nginx
  namespace: default
  uid: 5a1f2b7c-0d3e-4f5a-9b6c-7d8e9f0a1b2c
  resourceVersion: "123456"
  generation: 4
  creationTimestamp: "2026-11-23T07:50:07Z"
  labels: {app: nginx, tier: web, team: platform}
  annotations:
    deployment.kubernetes.io/revision: "3"
    propagationpolicy.karmada.io/name: web
    propagationpolicy.karmada.io/namespace: default
spec:
  replicas: 3
  paused: false
  progressDeadlineSeconds: 600
  revisionHistoryLimit: 10
  selector:
    matchLabels: {app: nginx}
  strategy:
    type: RollingUpdate
    rollingUpdate: {maxSurge: 25%, maxUnavailable: 25%}
  template:
    metadata:
      labels: {app: nginx, tier: web}
    spec:
      serviceAccountName: web
      containers:
      - name: nginx
        image: nginx:1.27
        imagePullPolicy: IfNotPresent
        ports:
        - {containerPort: 80, protocol: TCP}
        resources:
          requests: {cpu: 100m, memory: 128Mi}
          limits: {cpu: 500m, memory: 256Mi}
        envFrom:
        - configMapRef: {name: web-config}
        env:
        - {name: MODE, value: production}
        readinessProbe:
          httpGet: {path: /healthz, port: 80, scheme: HTTP}
          periodSeconds: 10
        terminationMessagePath: /dev/termination-log
        terminationMessagePolicy: File
      - name: sidecar
        image: envoy:1.30
        resources:
          requests: {cpu: 50m, memory: 64Mi}
      volumes:
      - name: creds
        secret: {secretName: web-secret, defaultMode: 420}
      dnsPolicy: ClusterFirst
      restartPolicy: Always
      schedulerName: default-scheduler
      securityContext: {}
      terminationGracePeriodSeconds: 30
status:
  observedGeneration: 4
  replicas: 3
  updatedReplicas: 3
  readyReplicas: 3
  availableReplicas: 3
  conditions:
  - {type: Available, status: "True", reason: MinimumReplicasAvailable, message: Deployment has minimum availability.}
  - {type: Progressing, status: "True", reason: NewReplicaSetAvailable, message: ReplicaSet has successfully progressed.}
`

// benchOp is one operation as the controllers call it.
type benchOp struct {
	op   interpreter.Operation
	call func(c *Customizations, obj *unstructured.Unstructured) error
	// values are the Go values of the function's arguments.
	values func(obj *unstructured.Unstructured) []any
}

func benchOps() []benchOp {
	items := []workv1alpha2.AggregatedStatusItem{
		{ClusterName: "member1", Applied: true, Status: &runtime.RawExtension{Raw: []byte(`{"readyReplicas":2}`)}},
		{ClusterName: "member2", Applied: true, Status: &runtime.RawExtension{Raw: []byte(`{"readyReplicas":1}`)}},
	}
	itemsValue, _ := itemsValue(items)
	one := func(o *unstructured.Unstructured) []any { return []any{o.Object} }
	return []benchOp{
		{interpreter.InterpretReplica, func(c *Customizations, o *unstructured.Unstructured) error { _, _, err := c.GetReplicas(o); return err }, one},
		{interpreter.ReviseReplica, func(c *Customizations, o *unstructured.Unstructured) error {
			_, err := c.ReviseReplica(o, 2)
			return err
		},
			func(o *unstructured.Unstructured) []any { return []any{o.Object, int64(2)} }},
		{interpreter.Retain, func(c *Customizations, o *unstructured.Unstructured) error { _, err := c.Retain(o, o); return err },
			func(o *unstructured.Unstructured) []any { return []any{o.Object, o.Object} }},
		{interpreter.AggregateStatus, func(c *Customizations, o *unstructured.Unstructured) error {
			_, err := c.AggregateStatus(o, items)
			return err
		},
			func(o *unstructured.Unstructured) []any { return []any{o.Object, itemsValue} }},
		{interpreter.InterpretStatus, func(c *Customizations, o *unstructured.Unstructured) error { _, err := c.ReflectStatus(o); return err }, one},
		{interpreter.InterpretHealth, func(c *Customizations, o *unstructured.Unstructured) error {
			_, err := c.InterpretHealth(o)
			return err
		}, one},
		{interpreter.InterpretDependency, func(c *Customizations, o *unstructured.Unstructured) error {
			_, err := c.GetDependencies(o)
			return err
		}, one},
	}
}

// wholeArgs converts every argument whole, as Karmada does.
func wholeArgs(L *lua.LState, values []any) []lua.LValue {
	out := make([]lua.LValue, len(values))
	for i, v := range values {
		out[i] = toLua(L, v)
	}
	return out
}

// BenchmarkOperations measures each operation of the Workload customization
// (workloadRIC) on a Deployment-sized object, five ways:
//
//   - reused: what the controllers pay, through Customizations (script
//     compiled once, pooled states, arguments converted to Lua and the
//     result back);
//   - compile-per-call: as Karmada does it: the script parsed, compiled and
//     run in a pooled state before every call, the arguments converted
//     whole and the result back;
//   - convert: only the conversions of reused (the parts of the arguments
//     the script can reach to Lua, and the returned object back, merged into
//     a copy of the original, for the operations returning one);
//   - script: only the call of the script's function, with its arguments
//     already in Lua (the script's own cost, helpers such as
//     kube.accuratePodRequirements included);
//   - helper: for the operations whose script calls a kube helper taking
//     the pod template, the Go computation of that helper alone (the
//     native interpreter's own code), part of script;
//   - script-compile-per-call: the same with the parse, compile and run of
//     the script before each call.
func BenchmarkOperations(b *testing.B) {
	c := workloadCustomizations(b)
	r := ric(b, workloadRIC)
	obj := object(b, deploymentSized)
	for _, op := range benchOps() {
		var src, fn string
		for _, rule := range r.Spec.Customizations.Scripts() {
			if interpreter.Operation(rule.Operation) == op.op {
				src, fn = rule.Script, rule.Function
			}
		}
		returnsObject := op.op == interpreter.ReviseReplica || op.op == interpreter.Retain || op.op == interpreter.AggregateStatus
		b.Run(string(op.op)+"/reused", func(b *testing.B) {
			for b.Loop() {
				if err := op.call(c, obj); err != nil {
					b.Fatal(err)
				}
			}
		})
		compileAndCall := func(b *testing.B, L *lua.LState, args []lua.LValue) {
			chunk, err := parse.Parse(strings.NewReader(src), "luaScript")
			if err != nil {
				b.Fatal(err)
			}
			proto, err := lua.Compile(chunk, "luaScript")
			if err != nil {
				b.Fatal(err)
			}
			L.Push(L.NewFunctionFromProto(proto))
			if err := L.PCall(0, 0, nil); err != nil {
				b.Fatal(err)
			}
			if err := L.CallByParam(lua.P{Fn: L.GetGlobal(fn), NRet: 1, Protect: true}, args...); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(string(op.op)+"/compile-per-call", func(b *testing.B) {
			L, budget := newSandbox(false, Limits{})
			defer L.Close()
			for b.Loop() {
				budget.reset() // as Script.Call does
				ctx, cancel := context.WithTimeout(context.Background(), DefaultTimeout)
				L.SetContext(ctx)
				compileAndCall(b, L, wholeArgs(L, op.values(obj)))
				if returnsObject {
					if _, err := newBudget(Limits{}).fromLua(L.Get(-1), obj.Object); err != nil {
						b.Fatal(err)
					}
				}
				L.SetTop(0)
				L.RemoveContext()
				cancel()
			}
		})
		script := c.script(obj.GroupVersionKind(), op.op)
		b.Run(string(op.op)+"/convert", func(b *testing.B) {
			L := newState()
			defer L.Close()
			values := op.values(obj)
			for b.Loop() {
				args := make([]lua.LValue, len(values))
				var own map[*lua.LTable]bool
				for i, v := range values {
					if i == 0 && returnsObject {
						args[0], own = script.ObjectArg(L, v)
						continue
					}
					args[i] = script.Arg(L, i, v)
				}
				if returnsObject {
					if _, err := script.ObjectResult(newBudget(Limits{}), args[0], args[0], own, obj.Object); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
		b.Run(string(op.op)+"/script", func(b *testing.B) {
			st, err := script.get()
			if err != nil {
				b.Fatal(err)
			}
			defer script.put(st)
			L := st.L
			values := op.values(obj)
			args := make([]lua.LValue, len(values)) // the scripts' changes are the same each time
			for i, v := range values {
				args[i] = script.Arg(L, i, v)
			}
			fnv := L.GetGlobal(fn)
			for b.Loop() {
				st.budget.reset()
				if err := L.CallByParam(lua.P{Fn: fnv, NRet: 1, Protect: true}, args...); err != nil {
					b.Fatal(err)
				}
				L.SetTop(0)
			}
		})
		if helper := helperWork(op.op, obj); helper != nil {
			b.Run(string(op.op)+"/helper", func(b *testing.B) {
				for b.Loop() {
					if err := helper(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		b.Run(string(op.op)+"/script-compile-per-call", func(b *testing.B) {
			L, budget := newSandbox(false, Limits{})
			defer L.Close()
			args := wholeArgs(L, op.values(obj))
			for b.Loop() {
				budget.reset()
				compileAndCall(b, L, args)
				L.SetTop(0)
			}
		})
	}
}

// helperWork is the Go computation of the kube helper the operation's
// script calls on the template of obj, nil when it calls none.
func helperWork(op interpreter.Operation, obj *unstructured.Unstructured) func() error {
	spec, _, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", "template", "spec")
	m, _ := spec.(map[string]any)
	switch op {
	case interpreter.InterpretReplica:
		return func() error { _, _, err := interpreter.SpecRequirements(m); return err }
	case interpreter.InterpretDependency:
		return func() error { _, err := interpreter.PodDependencies(m, obj.GetNamespace()); return err }
	}
	return nil
}
