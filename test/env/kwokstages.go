package env

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// FakeImageRegistry is the registry no member can pull from: a container
// whose image is in it (fake/nginx, fake/nginx:1.27) waits in
// ImagePullBackOff as a real kubelet reports an unpullable image, so its pod
// is scheduled and gets an IP but stays Pending and never Ready. It makes an
// unhealthy workload on purpose.
const FakeImageRegistry = "fake"

const (
	// ReasonImagePullBackOff is the waiting reason of a container whose
	// image is in FakeImageRegistry, the kubelet's.
	ReasonImagePullBackOff = "ImagePullBackOff"

	// stagePodReady is the stage of kwok's "fast" set that makes a pod
	// Running and Ready; pods with an image in FakeImageRegistry are left
	// out of it.
	stagePodReady = "pod-ready"
	// stageImagePullBackOff is the stage those pods take instead.
	stageImagePullBackOff = "pod-image-pull-backoff"
)

// fakeImageQuery is a jq query kwok evaluates on a pod: for each container,
// whether its image is in FakeImageRegistry (its first path component is
// exactly that name).
var fakeImageQuery = `.spec.containers.[].image | startswith(` + strconv.Quote(FakeImageRegistry+"/") + `)`

// imagePullBackOffTemplate is the pod status a kubelet reports while it
// backs off pulling the images of FakeImageRegistry: the sandbox runs (pod
// IP, PodReadyToStartContainers), the other containers run, those images'
// containers wait in ImagePullBackOff, and the pod is Pending and not Ready.
// $fakeImagePrefix is defined before it (imagePullBackOffStage).
const imagePullBackOffTemplate = `
{{ $now := Now }}
{{ $unready := list }}
{{ range .spec.containers }}
{{ if hasPrefix $fakeImagePrefix .image }}
{{ $unready = append $unready .name }}
{{ end }}
{{ end }}
{{ $notReady := printf "containers with unready status: [%s]" ( join " " $unready ) }}
conditions:
- lastTransitionTime: {{ $now | Quote }}
  status: "True"
  type: PodReadyToStartContainers
- lastTransitionTime: {{ $now | Quote }}
  status: "True"
  type: Initialized
- lastTransitionTime: {{ $now | Quote }}
  message: {{ $notReady | Quote }}
  reason: ContainersNotReady
  status: "False"
  type: Ready
- lastTransitionTime: {{ $now | Quote }}
  message: {{ $notReady | Quote }}
  reason: ContainersNotReady
  status: "False"
  type: ContainersReady

containerStatuses:
{{ range .spec.containers }}
{{ if hasPrefix $fakeImagePrefix .image }}
- image: {{ .image | Quote }}
  imageID: ""
  name: {{ .name | Quote }}
  ready: false
  restartCount: 0
  started: false
  state:
    waiting:
      message: {{ printf "Back-off pulling image %q: ErrImagePull: pull access denied, registry %q is not reachable from the test bed" .image ( trimSuffix "/" $fakeImagePrefix ) | Quote }}
      reason: ` + ReasonImagePullBackOff + `
{{ else }}
- image: {{ .image | Quote }}
  name: {{ .name | Quote }}
  ready: true
  restartCount: 0
  started: true
  state:
    running:
      startedAt: {{ $now | Quote }}
{{ end }}
{{ end }}

initContainerStatuses:
{{ range .spec.initContainers }}
- image: {{ .image | Quote }}
  name: {{ .name | Quote }}
  ready: true
  restartCount: 0
  {{ if eq .restartPolicy "Always" }}
  started: true
  state:
    running:
      startedAt: {{ $now | Quote }}
  {{ else }}
  state:
    terminated:
      exitCode: 0
      finishedAt: {{ $now | Quote }}
      reason: Completed
      startedAt: {{ $now | Quote }}
  {{ end }}
{{ end }}
{{ $hostIPs := NodeIPsWith .spec.nodeName }}
{{ with $hostIPs }}
hostIP: {{ index . 0 | Quote }}
hostIPs:
{{ range . }}
- ip: {{ . | Quote }}
{{ end }}
{{ end }}
{{ $podIPs := PodIPsWith .spec.nodeName ( or .spec.hostNetwork false ) ( or .metadata.uid "" ) ( or .metadata.name "" ) ( or .metadata.namespace "" ) }}
{{ with $podIPs }}
podIP: {{ index . 0 | Quote }}
podIPs:
{{ range . }}
- ip: {{ . | Quote }}
{{ end }}
{{ end }}
phase: Pending
startTime: {{ $now | Quote }}
`

// jqRequirement is one of a kwok Stage's selector.matchExpressions.
func jqRequirement(key, operator string, values ...string) map[string]any {
	jq := map[string]any{"key": key, "operator": operator}
	if len(values) > 0 {
		vs := make([]any, len(values))
		for i, v := range values {
			vs[i] = v
		}
		jq["values"] = vs
	}
	return map[string]any{"jq": jq}
}

// imagePullBackOffStage is the kwok Stage of a scheduled pod with a
// container image in FakeImageRegistry. It matches once: the status it
// writes has a container waiting in ImagePullBackOff, which its selector
// excludes, and stagePodReady never matches such a pod.
func imagePullBackOffStage() map[string]any {
	return map[string]any{
		"apiVersion": "kwok.x-k8s.io/v1alpha1",
		"kind":       "Stage",
		"metadata":   map[string]any{"name": stageImagePullBackOff},
		"spec": map[string]any{
			"resourceRef": map[string]any{"apiGroup": "v1", "kind": "Pod"},
			"selector": map[string]any{"matchExpressions": []any{
				jqRequirement(".metadata.deletionTimestamp", "DoesNotExist"),
				jqRequirement(".status.phase", "In", "Pending"),
				jqRequirement(fakeImageQuery, "In", "true"),
				jqRequirement(".status.containerStatuses.[].state.waiting.reason", "NotIn", ReasonImagePullBackOff),
			}},
			"steps": []any{
				// The kubelet's event for a container in back-off.
				map[string]any{"event": map[string]any{"type": "Warning", "reason": "Failed", "message": "Error: " + ReasonImagePullBackOff}},
				map[string]any{"patch": map[string]any{
					"subresource": "status",
					"root":        "status",
					"template":    "{{ $fakeImagePrefix := " + strconv.Quote(FakeImageRegistry+"/") + " }}" + imagePullBackOffTemplate,
				}},
			},
		},
	}
}

// renderKwokStages returns the stages a member's kwok runs: kwok's own set
// (hack/tools/build.sh), in which stagePodReady leaves out the pods with an
// image in FakeImageRegistry, and imagePullBackOffStage for those pods.
func renderKwokStages(kwokStages []byte) ([]byte, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(kwokStages)))
	var out bytes.Buffer
	found := false
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		var obj map[string]any
		if err := yaml.Unmarshal(doc, &obj); err != nil {
			return nil, err
		}
		if len(obj) == 0 {
			continue
		}
		if obj["kind"] == "Stage" && nested(obj, "metadata", "name") == stagePodReady {
			selector, ok := nested(obj, "spec", "selector").(map[string]any)
			if !ok {
				return nil, fmt.Errorf("kwok stage %s has no selector", stagePodReady)
			}
			exprs, _ := selector["matchExpressions"].([]any)
			selector["matchExpressions"] = append(exprs, jqRequirement(fakeImageQuery, "NotIn", "true"))
			found = true
		}
		if err := writeYAMLDoc(&out, obj); err != nil {
			return nil, err
		}
	}
	if !found {
		return nil, fmt.Errorf("kwok's stages have no Stage %s to leave the images of registry %q out of", stagePodReady, FakeImageRegistry)
	}
	if err := writeYAMLDoc(&out, imagePullBackOffStage()); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// writeKwokStages writes the member's kwok stages (renderKwokStages of the
// file make tools ships, kwokStagesFile) under the same name into the
// member's directory and returns the path.
func (c *Cluster) writeKwokStages(kwokStagesFile string) (string, error) {
	data, err := os.ReadFile(kwokStagesFile)
	if err != nil {
		return "", err
	}
	rendered, err := renderKwokStages(data)
	if err != nil {
		return "", fmt.Errorf("%s: %w", kwokStagesFile, err)
	}
	path := filepath.Join(c.Dir, fileKwokStages)
	return path, os.WriteFile(path, rendered, 0o644)
}

func writeYAMLDoc(w *bytes.Buffer, obj map[string]any) error {
	data, err := yaml.Marshal(obj)
	if err != nil {
		return err
	}
	w.WriteString("---\n")
	w.Write(data)
	return nil
}

// nested returns obj[k0][k1]..., nil when a step is missing.
func nested(obj map[string]any, keys ...string) any {
	var v any = obj
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}
