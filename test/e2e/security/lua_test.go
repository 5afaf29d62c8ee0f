package security

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// hostileScripts are GetReplicas scripts that try to hang or exhaust
// flotilla-apiserver: native string work the deadline cannot interrupt in
// stock gopher-lua, unbounded concatenation, a table grown without end,
// and a returned table whose conversion explodes (2^60 paths through
// shared subtables, under the depth limit).
var hostileScripts = map[string]string{
	"gsub": `function GetReplicas(obj)
  local s = string.rep("a", 500000)
  local r = string.gsub(s, "a-a-a-a-a-b", "x")
  return 1, {}
end`,
	"concat": `function GetReplicas(obj)
  local s = "x"
  while true do s = s .. s end
end`,
	"table-concat": `function GetReplicas(obj)
  local t = {}
  for i = 1, 30000 do t[i] = "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy" end
  return 1, {nodeClaim = {hardNodeAffinity = table.concat(t)}}
end`,
	"table-grow": `function GetReplicas(obj)
  local t = {}
  for i = 1, 100000000 do t[i] = {i} end
  return 1, {}
end`,
	"nested-table": `function GetReplicas(obj)
  local t = {}
  for i = 1, 60 do t = {a = t, b = t} end
  return 1, {nodeClaim = t}
end`,
}

// rss is flotilla-apiserver's resident memory in KiB.
func rss(t *testing.T) int {
	t.Helper()
	for _, p := range framework.Env.Host.Processes {
		if p.Component != "flotilla-apiserver" {
			continue
		}
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.PID))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(status), "\n") {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
				if err != nil {
					t.Fatal(err)
				}
				return kb
			}
		}
	}
	t.Fatal("no flotilla-apiserver process")
	return 0
}

// TestHostileInterpreterScripts: each hostile script is stopped within its
// deadline (the template gets GetReplicasFailed in seconds), the server
// keeps answering meanwhile, and its memory stays bounded.
func TestHostileInterpreterScripts(t *testing.T) {
	ns := framework.Namespace(t, "hostile-lua")
	framework.Apply(t, fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: statefulsets, namespace: %s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: StatefulSet}]
  placement: {clusterAffinity: {clusterNames: [member1]}}
`, ns))
	before := rss(t)
	host := framework.HostClient(t)
	karmada := framework.Karmada(t)
	for name, script := range hostileScripts {
		t.Run(name, func(t *testing.T) {
			ric := "hostile-" + name
			indented := "        " + strings.ReplaceAll(script, "\n", "\n        ")
			framework.Apply(t, fmt.Sprintf(`apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata: {name: %s}
spec:
  target: {apiVersion: apps/v1, kind: StatefulSet}
  customizations:
    replicaResource:
      luaScript: |
%s
`, ric, indented))
			t.Cleanup(func() {
				_ = karmada.ConfigV1alpha1().ResourceInterpreterCustomizations().Delete(context.Background(), ric, metav1.DeleteOptions{})
			})
			// The interpreter picks the customization up from its informer.
			time.Sleep(2 * time.Second)
			framework.Apply(t, fmt.Sprintf(`apiVersion: apps/v1
kind: StatefulSet
metadata: {name: %s, namespace: %s}
spec:
  replicas: 1
  selector: {matchLabels: {app: %s}}
  template:
    metadata: {labels: {app: %s}}
    spec: {containers: [{name: c, image: nginx}]}
`, name, ns, name, name))
			start := time.Now()
			var message string
			framework.Eventually(t, 30*time.Second, func(ctx context.Context) string {
				// The server answers while the scripts run.
				listStart := time.Now()
				if _, err := karmada.ClusterV1alpha1().Clusters().List(ctx, metav1.ListOptions{}); err != nil {
					return err.Error()
				}
				if d := time.Since(listStart); d > 3*time.Second {
					t.Errorf("listing clusters took %s while %s ran", d, name)
				}
				events, err := host.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: fields.Set{
					"involvedObject.name": name, "reason": "GetReplicasFailed"}.String()})
				if err != nil {
					return err.Error()
				}
				if len(events.Items) == 0 {
					return "no GetReplicasFailed event on statefulset " + name
				}
				message = events.Items[0].Message
				return ""
			})
			t.Logf("%s: GetReplicasFailed after %.1f s: %s", name, time.Since(start).Seconds(), message)
			if len(message) > 4096 {
				t.Errorf("the event message is %d bytes long", len(message))
			}
		})
	}
	after := rss(t)
	t.Logf("flotilla-apiserver RSS %d MiB before, %d MiB after", before/1024, after/1024)
	if after-before > 512*1024 {
		t.Errorf("flotilla-apiserver grew by %d MiB", (after-before)/1024)
	}
}
