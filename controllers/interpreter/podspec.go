package interpreter

import (
	"encoding/json"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// RequirementFields are the pod spec fields replica requirements are
// computed from (PodRequirements); the Lua helper converts only these of a
// template given as a table.
var RequirementFields = map[string]bool{
	"containers": true, "initContainers": true, "overhead": true, "resources": true,
	"nodeSelector": true, "tolerations": true, "affinity": true, "priorityClassName": true,
}

// requirementContainerFields are the container fields requirements read.
var requirementContainerFields = map[string]bool{"name": true, "resources": true, "restartPolicy": true}

// RequirementsPod reads, from a pod spec as unstructured data, a Pod
// holding only what requirements are computed from. Containers are read
// directly when they hold nothing else that matters (names, restart
// policies, requests; limits are skipped, the requests do not depend on
// them), as is the overhead; anything else goes through JSON, trimmed to
// those fields, so the cost follows them rather than the template's size.
func RequirementsPod(spec map[string]any) (*corev1.Pod, error) {
	pod := &corev1.Pod{}
	ps := &pod.Spec
	var rest map[string]any
	for key, v := range spec {
		if !RequirementFields[key] {
			continue
		}
		var ok bool
		switch key {
		case "containers":
			ps.Containers, ok = requestContainers(v)
		case "initContainers":
			ps.InitContainers, ok = requestContainers(v)
		case "overhead":
			ps.Overhead, ok = ResourceListFrom(v)
		case "priorityClassName":
			ps.PriorityClassName, ok = v.(string)
		}
		if ok {
			continue
		}
		if list, isList := v.([]any); isList && (key == "containers" || key == "initContainers") {
			containers := make([]any, 0, len(list))
			for _, c := range list {
				cm, _ := c.(map[string]any)
				kept := map[string]any{}
				for ck, cv := range cm {
					if requirementContainerFields[ck] {
						kept[ck] = cv
					}
				}
				containers = append(containers, kept)
			}
			v = containers
		}
		if rest == nil {
			rest = map[string]any{}
		}
		rest[key] = v
	}
	if len(rest) == 0 {
		return pod, nil
	}
	raw, err := json.Marshal(rest)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(raw, ps); err != nil {
		return nil, fmt.Errorf("reading the pod spec: %w", err)
	}
	return pod, nil
}

// requestContainers reads containers made of names, restart policies,
// requests and limits (skipped) and nothing else requirements read; ok is
// false for anything else.
func requestContainers(v any) ([]corev1.Container, bool) {
	list, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]corev1.Container, len(list))
	for i, c := range list {
		cm, ok := c.(map[string]any)
		if !ok {
			return nil, false
		}
		ct := &out[i]
		for k, v := range cm {
			switch k {
			case "name":
				if ct.Name, ok = v.(string); !ok {
					return nil, false
				}
			case "restartPolicy":
				p, ok := v.(string)
				if !ok {
					return nil, false
				}
				policy := corev1.ContainerRestartPolicy(p)
				ct.RestartPolicy = &policy
			case "resources":
				res, ok := v.(map[string]any)
				if !ok {
					return nil, false
				}
				for rk, rv := range res {
					switch rk {
					case "requests":
						if ct.Resources.Requests, ok = ResourceListFrom(rv); !ok {
							return nil, false
						}
					case "limits":
					default:
						return nil, false
					}
				}
			default:
				if requirementContainerFields[k] {
					return nil, false
				}
			}
		}
	}
	return out, true
}

// ResourceListFrom reads a map of quantities (strings or numbers); ok is
// false for anything else.
func ResourceListFrom(v any) (corev1.ResourceList, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	out := make(corev1.ResourceList, len(m))
	for name, q := range m {
		var text string
		switch q := q.(type) {
		case string:
			text = q
		case int64:
			text = strconv.FormatInt(q, 10)
		case float64:
			text = strconv.FormatFloat(q, 'f', -1, 64)
		default:
			return nil, false
		}
		parsed, err := resource.ParseQuantity(text)
		if err != nil {
			return nil, false
		}
		out[corev1.ResourceName(name)] = parsed
	}
	return out, true
}
