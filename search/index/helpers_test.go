package index

import (
	"fmt"
	"testing"
)

// podKey is the key of a pod.
func podKey(cluster, ns, name string) Key {
	return Key{Cluster: cluster, Version: "v1", Resource: "pods", Kind: "Pod", Namespace: ns, Name: name}
}

// podSpec describes a test pod.
type podSpec struct {
	cluster, ns, name string
	labels            map[string]string
	images            []string
	node, phase       string
	ready             string
	extra             map[string]interface{} // merged into the object
}

// object builds the unstructured pod, shaped like what kwok serves.
func (p podSpec) object() map[string]interface{} {
	labels := map[string]interface{}{}
	for k, v := range p.labels {
		labels[k] = v
	}
	var containers []interface{}
	for i, img := range p.images {
		containers = append(containers, map[string]interface{}{
			"name":  fmt.Sprintf("c%d", i),
			"image": img,
			"resources": map[string]interface{}{
				"requests": map[string]interface{}{"cpu": "100m", "memory": "64Mi"},
				"limits":   map[string]interface{}{"cpu": "500m", "memory": "128Mi"},
			},
			"env": []interface{}{
				map[string]interface{}{"name": "POD_NAME", "value": p.name},
				map[string]interface{}{"name": "LOG_LEVEL", "value": "info"},
			},
			"ports":                    []interface{}{map[string]interface{}{"containerPort": int64(8080), "protocol": "TCP", "name": "http"}},
			"terminationMessagePath":   "/dev/termination-log",
			"terminationMessagePolicy": "File",
			"imagePullPolicy":          "IfNotPresent",
		})
	}
	ready := p.ready
	if ready == "" {
		ready = "True"
	}
	obj := map[string]interface{}{
		"apiVersion": "v1",
		"kind":       "Pod",
		"metadata": map[string]interface{}{
			"name":              p.name,
			"namespace":         p.ns,
			"uid":               fmt.Sprintf("0b6c2a7e-%s-%s-4b1e-9c3a", p.cluster, p.name),
			"resourceVersion":   "123456",
			"creationTimestamp": "2024-05-01T10:00:00Z",
			"labels":            labels,
			"annotations": map[string]interface{}{
				"kwok.x-k8s.io/node": "fake",
				lastApplied:          `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"secretword"}}`,
			},
			"ownerReferences": []interface{}{map[string]interface{}{
				"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7d4b9c", "uid": "5f0e", "controller": true,
			}},
			"managedFields": []interface{}{map[string]interface{}{
				"manager": "managedfieldsonly", "operation": "Update", "apiVersion": "v1",
			}},
		},
		"spec": map[string]interface{}{
			"containers":                    containers,
			"nodeName":                      p.node,
			"restartPolicy":                 "Always",
			"dnsPolicy":                     "ClusterFirst",
			"schedulerName":                 "default-scheduler",
			"serviceAccountName":            "default",
			"terminationGracePeriodSeconds": int64(30),
			"tolerations": []interface{}{
				map[string]interface{}{"key": "kwok.x-k8s.io/node", "operator": "Exists", "effect": "NoSchedule"},
				map[string]interface{}{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": int64(300)},
			},
		},
		"status": map[string]interface{}{
			"phase":     p.phase,
			"hostIP":    "10.0.0.1",
			"podIP":     "10.244.0.5",
			"startTime": "2024-05-01T10:00:01Z",
			"qosClass":  "Burstable",
			"conditions": []interface{}{
				map[string]interface{}{"type": "Initialized", "status": "True", "lastTransitionTime": "2024-05-01T10:00:01Z"},
				map[string]interface{}{"type": "Ready", "status": ready, "lastTransitionTime": "2024-05-01T10:00:02Z"},
				map[string]interface{}{"type": "ContainersReady", "status": ready, "lastTransitionTime": "2024-05-01T10:00:02Z"},
				map[string]interface{}{"type": "PodScheduled", "status": "True", "lastTransitionTime": "2024-05-01T10:00:00Z"},
			},
			"containerStatuses": []interface{}{map[string]interface{}{
				"name": "c0", "ready": true, "restartCount": int64(0), "image": "nginx:1.19",
				"imageID":     "docker-pullable://nginx@sha256:0d17b565c37bcbd895e9d92315a05c1c3c9a29f762b011a10c54a66cd53c9b31",
				"containerID": "containerd://a1b2c3d4e5f6",
				"state":       map[string]interface{}{"running": map[string]interface{}{"startedAt": "2024-05-01T10:00:02Z"}},
			}},
		},
	}
	for k, v := range p.extra {
		obj[k] = v
	}
	return obj
}

// kwokPod is the i-th pod of a generated fleet.
func kwokPod(cluster string, i int) (Key, map[string]interface{}) {
	phase := "Running"
	if i%10 == 0 {
		phase = "Pending"
	}
	img := "nginx:1.19"
	if i%7 == 0 {
		img = "docker.io/library/redis:7.2"
	}
	p := podSpec{
		cluster: cluster,
		ns:      fmt.Sprintf("ns-%d", i%20),
		name:    fmt.Sprintf("pod-%d", i),
		labels:  map[string]string{"app": fmt.Sprintf("web-%d", i%5), "pod-template-hash": "7d4b9c", "app.kubernetes.io/part-of": "bench"},
		images:  []string{img, "registry.k8s.io/pause:3.9"},
		node:    fmt.Sprintf("%s-kwok-node-%d", cluster, i%100),
		phase:   phase,
	}
	return podKey(p.cluster, p.ns, p.name), p.object()
}

// openTest opens an index that the test closes.
func openTest(t testing.TB, opts Options) *Index {
	t.Helper()
	ix, err := Open(opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = ix.Close() })
	return ix
}

// mustFlush flushes or fails.
func mustFlush(t testing.TB, ix *Index) {
	t.Helper()
	if err := ix.Flush(); err != nil {
		t.Fatalf("Flush: %v", err)
	}
}
