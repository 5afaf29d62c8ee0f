package execution

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

func TestIsApplied(t *testing.T) {
	t.Parallel()
	// observed is a Deployment as a member's API server returns it.
	const observed = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
  uid: 1234
  resourceVersion: "99"
  generation: 3
  creationTimestamp: "2026-01-01T00:00:00Z"
  labels: {app: web, member-only: "yes"}
  annotations: {deployment.kubernetes.io/revision: "1"}
  managedFields: [{manager: execution}]
spec:
  replicas: 2
  progressDeadlineSeconds: 600
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
        imagePullPolicy: IfNotPresent
        terminationMessagePath: /dev/termination-log
        ports: [{containerPort: 80, protocol: TCP}]
        resources: {requests: {cpu: 500m, memory: 1Gi}}
      restartPolicy: Always
status:
  replicas: 2
  readyReplicas: 2
`
	tests := []struct {
		name    string
		desired string
		want    bool
	}{
		{"the manifest as written, before defaults", `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default, labels: {app: web}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}, creationTimestamp: null}
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
        ports: [{containerPort: 80}]
        resources: {requests: {cpu: "0.5", memory: 1024Mi}}
        args: []
`, true},
		{"server-owned metadata never matters", `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default, resourceVersion: "1", uid: other, generation: 9}
`, true},
		{"a changed image", `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec: {template: {spec: {containers: [{name: nginx, image: "nginx:1.28"}]}}}
`, false},
		{"a changed replica count", `{apiVersion: apps/v1, kind: Deployment, metadata: {name: web}, spec: {replicas: 3}}`, false},
		{"a label the member lacks", `{apiVersion: apps/v1, kind: Deployment, metadata: {name: web, labels: {tier: front}}}`, false},
		{"an extra container", `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec: {template: {spec: {containers: [{name: nginx}, {name: sidecar}]}}}
`, false},
		{"a changed quantity", `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec: {template: {spec: {containers: [{name: nginx, resources: {requests: {cpu: "1"}}}]}}}
`, false},
		{"a number written as a float", `{apiVersion: apps/v1, kind: Deployment, metadata: {name: web}, spec: {replicas: 2.0}}`, true},
		{"zero values match absent fields", `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, annotations: {}}
spec: {paused: false, minReadySeconds: 0, strategy: {}}
`, true},
		{"a non-zero value the member lacks", `{apiVersion: apps/v1, kind: Deployment, metadata: {name: web}, spec: {paused: true}}`, false},
		{"a string where the member has a map", `{apiVersion: apps/v1, kind: Deployment, metadata: {name: web}, spec: {selector: "app=web"}}`, false},
		{"status in the manifest is compared too", `{apiVersion: apps/v1, kind: Deployment, metadata: {name: web}, status: {replicas: 5}}`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := isApplied(obj(t, tc.desired), obj(t, observed)); got != tc.want {
				t.Errorf("isApplied = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestQuantitiesOnlyUnderResourceFields(t *testing.T) {
	t.Parallel()
	// "1" and "1000m" are the same quantity but different strings.
	if isApplied(obj(t, `{metadata: {name: a, labels: {v: "1"}}}`), obj(t, `{metadata: {name: a, labels: {v: 1000m}}}`)) {
		t.Error("label values compared as quantities")
	}
	if !isApplied(obj(t, `{spec: {hard: {pods: "1"}}}`), obj(t, `{spec: {hard: {pods: 1000m}}}`)) {
		t.Error("quota quantities compared as strings")
	}
}

func TestRecords(t *testing.T) {
	t.Parallel()
	const w = types.UID("w1")
	h1, h2 := manifestHash([]byte(`{"a":1}`)), manifestHash([]byte(`{"a":2}`))
	if h1 == h2 || h1 != manifestHash([]byte(`{"a":1}`)) {
		t.Fatal("hash is not a function of the content")
	}
	r := newRecords()
	steps := []struct {
		name string
		do   func()
		hash string
		rv   string
		want bool
	}{
		{"nothing recorded: compare", func() {}, h1, "5", false},
		{"recorded write: skip", func() { r.set(w, 0, h1, "5") }, h1, "5", true},
		{"member object changed since: compare", func() {}, h1, "6", false},
		{"manifest changed since: compare", func() {}, h2, "5", false},
		{"other ordinal unaffected", func() { r.set(w, 1, h2, "9") }, h1, "5", true},
		{"trimmed to one manifest keeps ordinal 0", func() { r.trim(w, 1) }, h1, "5", true},
		{"an empty resourceVersion never matches", func() { r.set(w, 0, h1, "") }, h1, "", false},
		{"forgotten work: compare", func() { r.set(w, 0, h1, "5"); r.forgetWork(w) }, h1, "5", false},
	}
	for _, s := range steps {
		s.do()
		if got := r.upToDate(w, 0, s.hash, s.rv); got != s.want {
			t.Errorf("%s: upToDate = %v, want %v", s.name, got, s.want)
		}
	}
	if r.upToDate(w, 1, h2, "9") {
		t.Error("trim kept ordinal 1")
	}
}
