package index

import (
	"context"
	"slices"
	"testing"
)

// fixtureObject is one object of the search fixture.
type fixtureObject struct {
	key Key
	obj map[string]interface{}
}

// fixture is a small fleet of two clusters with pods, a deployment, a
// cronjob, a node, a secret and a configmap.
func fixture() []fixtureObject {
	pod := func(cluster, ns, name string, labels map[string]string, image, node, phase, ready string) fixtureObject {
		p := podSpec{cluster: cluster, ns: ns, name: name, labels: labels, images: []string{image}, node: node, phase: phase, ready: ready}
		return fixtureObject{podKey(cluster, ns, name), p.object()}
	}
	deploy := fixtureObject{
		key: Key{Cluster: "member1", Group: "apps", Version: "v1", Resource: "deployments", Kind: "Deployment", Namespace: "default", Name: "web"},
		obj: map[string]interface{}{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]interface{}{"name": "web", "namespace": "default", "labels": map[string]interface{}{"app": "web"}},
			"spec": map[string]interface{}{"replicas": int64(2), "template": map[string]interface{}{
				"metadata": map[string]interface{}{"labels": map[string]interface{}{"app": "web"}},
				"spec": map[string]interface{}{
					"containers":     []interface{}{map[string]interface{}{"name": "web", "image": "nginx:1.19"}},
					"initContainers": []interface{}{map[string]interface{}{"name": "init", "image": "quay.io/org/migrate:v2"}},
				},
			}},
			"status": map[string]interface{}{"conditions": []interface{}{
				map[string]interface{}{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"},
				map[string]interface{}{"type": "Progressing", "status": "True", "message": "ReplicaSet web-7d4b9c has successfully progressed"},
			}},
		},
	}
	cron := fixtureObject{
		key: Key{Cluster: "member1", Group: "batch", Version: "v1", Resource: "cronjobs", Kind: "CronJob", Namespace: "data", Name: "backup"},
		obj: map[string]interface{}{
			"apiVersion": "batch/v1", "kind": "CronJob",
			"metadata": map[string]interface{}{"name": "backup", "namespace": "data"},
			"spec": map[string]interface{}{"schedule": "0 3 * * *", "jobTemplate": map[string]interface{}{"spec": map[string]interface{}{
				"template": map[string]interface{}{"spec": map[string]interface{}{
					"containers": []interface{}{map[string]interface{}{"name": "backup", "image": "busybox:1.36", "command": []interface{}{"pg_dump", "--all"}}},
				}},
			}}},
		},
	}
	node := fixtureObject{
		key: Key{Cluster: "member1", Version: "v1", Resource: "nodes", Kind: "Node", Name: "node-a"},
		obj: map[string]interface{}{
			"apiVersion": "v1", "kind": "Node",
			"metadata": map[string]interface{}{"name": "node-a", "labels": map[string]interface{}{"kubernetes.io/hostname": "node-a", "type": "kwok"}},
			"status": map[string]interface{}{"conditions": []interface{}{
				map[string]interface{}{"type": "Ready", "status": "True"},
				map[string]interface{}{"type": "MemoryPressure", "status": "False"},
			}},
		},
	}
	secret := fixtureObject{
		key: Key{Cluster: "member1", Version: "v1", Resource: "secrets", Kind: "Secret", Namespace: "default", Name: "creds"},
		obj: map[string]interface{}{
			"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
			"metadata":   map[string]interface{}{"name": "creds", "namespace": "default"},
			"data":       map[string]interface{}{"password": "aHVudGVyMg=="},
			"stringData": map[string]interface{}{"token": "hunter2"},
		},
	}
	cm := fixtureObject{
		key: Key{Cluster: "member2", Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Namespace: "prod", Name: "settings"},
		obj: map[string]interface{}{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]interface{}{"name": "settings", "namespace": "prod", "annotations": map[string]interface{}{
				"team":      "Payments",
				lastApplied: `{"data":{"mode":"lastappliedonly"}}`,
			}},
			"data":       map[string]interface{}{"mode": "active-active", "region": "eu-west"},
			"binaryData": map[string]interface{}{"blob": "YmluYXJ5b25seQ=="},
		},
	}
	return []fixtureObject{
		pod("member1", "default", "web-1", map[string]string{"app": "web"}, "nginx:1.19", "node-a", "Running", "True"),
		pod("member1", "default", "web-2", map[string]string{"app": "web"}, "docker.io/library/nginx:1.21", "node-b", "Running", "False"),
		pod("member1", "data", "db-1", map[string]string{"app": "db", "tier": "backend", "empty": ""}, "postgres:15", "node-b", "Pending", "False"),
		pod("member2", "default", "web-1", map[string]string{"app": "web"}, "nginx:1.19", "node-x", "Running", "True"),
		pod("member2", "prod", "api-1", map[string]string{"app": "api", "tier": "backend"}, "ghcr.io/acme/api@sha256:abcdef", "node-x", "Succeeded", "True"),
		deploy, cron, node, secret, cm,
	}
}

// loadFixture opens an index holding the fixture.
func loadFixture(t *testing.T) (*Index, []fixtureObject) {
	t.Helper()
	ix := openTest(t, Options{})
	objs := fixture()
	for _, o := range objs {
		ix.Put(o.key, o.obj)
	}
	mustFlush(t, ix)
	return ix, objs
}

// ids returns the ids of keys.
func ids(keys []Key) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k.ID()
	}
	return out
}

// sortedIDs returns the sorted ids of the fixture objects that match.
func sortedIDs(objs []fixtureObject, match func(Key) bool) []string {
	var out []string
	for _, o := range objs {
		if match(o.key) {
			out = append(out, o.key.ID())
		}
	}
	slices.Sort(out)
	return out
}

// search runs a request or fails.
func doSearch(t *testing.T, ix *Index, req Request) *Result {
	t.Helper()
	r, err := ix.Search(context.Background(), req)
	if err != nil {
		t.Fatalf("Search(%+v): %v", req, err)
	}
	return r
}

// names returns "cluster/namespace/name" of keys, for readable failures.
func names(keys []Key) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k.Cluster + "/" + k.Namespace + "/" + k.Name
	}
	return out
}
