package lua

import (
	"encoding/json"
	"testing"

	lua "github.com/yuin/gopher-lua"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/flotilla/interpreter"
)

// kube.accuratePodRequirements and kube.getPodDependencies answer what the
// native interpreter computes from the typed pod spec, whether the template
// arrives as a Lua table or as the Go value.
func TestKubeHelpersMatchNative(t *testing.T) {
	t.Parallel()
	templates := []string{
		`spec: {containers: [{name: a, image: x, resources: {requests: {cpu: 100m, memory: 64Mi}, limits: {cpu: "1"}}}]}`,
		`spec:
  overhead: {cpu: 10m}
  initContainers:
  - {name: init, image: x, resources: {requests: {cpu: "2"}}}
  - {name: sidecar, image: x, restartPolicy: Always, resources: {requests: {cpu: 200m, memory: 32Mi}}}
  containers:
  - {name: a, image: x, resources: {requests: {cpu: 100m}}}
  - {name: b, image: x, resources: {requests: {cpu: 300m, memory: 128Mi}}}`,
		`spec:
  nodeSelector: {disk: ssd}
  tolerations: [{key: k, operator: Exists}]
  containers: [{name: a, image: x, resources: {requests: {cpu: 1}}}]`,
		`spec:
  serviceAccountName: web
  imagePullSecrets: [{name: pull}]
  volumes: [{name: v, configMap: {name: cm}}, {name: s, secret: {secretName: sec}}, {name: p, persistentVolumeClaim: {claimName: data}}]
  containers:
  - name: a
    image: x
    envFrom: [{secretRef: {name: env-secret}}]
    env: [{name: K, valueFrom: {configMapKeyRef: {name: env-cm, key: k}}}]`,
		`spec: {containers: [{name: a, image: x}]}`,
	}
	for i, y := range templates {
		var tmpl map[string]any
		if err := yaml.Unmarshal([]byte(y), &tmpl); err != nil {
			t.Fatal(err)
		}
		var typed corev1.PodTemplateSpec
		raw, _ := json.Marshal(tmpl)
		if err := json.Unmarshal(raw, &typed); err != nil {
			t.Fatal(err)
		}
		wantReq, _ := json.Marshal(interpreter.PodRequirements(&corev1.Pod{Spec: typed.Spec}))
		deps, err := interpreter.PodDependencies(tmpl["spec"].(map[string]any), "ns")
		if err != nil {
			t.Fatal(err)
		}
		wantDeps, _ := json.Marshal(deps)
		if string(wantDeps) == "null" {
			wantDeps = []byte("[]")
		}
		for _, asGo := range []bool{false, true} {
			L := newState()
			arg := toLua(L, tmpl)
			if asGo {
				ud := L.NewUserData()
				ud.Value = goValue{tmpl}
				arg = ud
			}
			if err := L.DoString(`kube = require("kube")`); err != nil {
				t.Fatal(err)
			}
			for name, want := range map[string][]byte{"accuratePodRequirements": wantReq, "getPodDependencies": wantDeps} {
				fn := L.GetField(L.GetGlobal("kube"), name)
				if err := L.CallByParam(lua.P{Fn: fn, NRet: 1, Protect: true}, arg, lua.LString("ns")); err != nil {
					t.Fatalf("template %d, %s: %v", i, name, err)
				}
				got, err := newBudget(Limits{}).fromLua(L.Get(-1), nil)
				L.Pop(1)
				if err != nil {
					t.Fatal(err)
				}
				gotJSON, _ := json.Marshal(got)
				var a, b any
				_ = json.Unmarshal(gotJSON, &a)
				_ = json.Unmarshal(want, &b)
				if !jsonEqual(a, b) {
					t.Errorf("template %d, %s (Go value %v):\n got %s\nwant %s", i, name, asGo, gotJSON, want)
				}
			}
			L.Close()
		}
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
