package interpreter

import (
	"encoding/json"
	"fmt"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// RequirementFields are the pod spec fields replica requirements are
// computed from (PodRequirements); the Lua helper converts only these of a
// template given as a table.
var RequirementFields = map[string]bool{}

// requirementFieldList lists RequirementFields, for reading them by lookup.
var requirementFieldList = []string{
	"containers", "initContainers", "overhead", "resources",
	"nodeSelector", "tolerations", "affinity", "priorityClassName",
}

func init() {
	for _, f := range requirementFieldList {
		RequirementFields[f] = true
	}
}

// requirementContainerFields are the container fields requirements read.
var requirementContainerFields = map[string]bool{"name": true, "resources": true, "restartPolicy": true}

// pods are Pods SpecRequirements reads specs into, kept with their
// containers and request maps for the next call.
var pods = sync.Pool{New: func() any { return new(corev1.Pod) }}

// SpecRequirements returns the requirements of one replica of a pod spec
// given as unstructured data (PodRequirements), and its priority class.
// Only what requirements are computed from is read: containers holding
// nothing else that matters (names, restart policies, requests; limits are
// skipped, the requests do not depend on them) and the overhead directly,
// into a pooled Pod; anything else through JSON, trimmed to those fields,
// so the cost follows them rather than the template's size.
func SpecRequirements(spec map[string]any) (*workv1alpha2.ReplicaRequirements, string, error) {
	pod := pods.Get().(*corev1.Pod)
	defer func() {
		// The result shares nothing with what is kept: requests are
		// copied into it, and the node claim's fields are dropped here.
		containers, initContainers := pod.Spec.Containers[:0], pod.Spec.InitContainers[:0]
		*pod = corev1.Pod{}
		pod.Spec.Containers, pod.Spec.InitContainers = containers, initContainers
		pods.Put(pod)
	}()
	if err := readRequirementsSpec(spec, &pod.Spec); err != nil {
		return nil, "", err
	}
	return PodRequirements(pod), pod.Spec.PriorityClassName, nil
}

// readRequirementsSpec fills ps, zero but for the capacity of its
// container lists, from spec.
func readRequirementsSpec(spec map[string]any, ps *corev1.PodSpec) error {
	var rest map[string]any
	for _, key := range requirementFieldList {
		v, present := spec[key]
		if !present {
			continue
		}
		var ok bool
		switch key {
		case "containers":
			ps.Containers, ok = requestContainers(v, ps.Containers)
		case "initContainers":
			ps.InitContainers, ok = requestContainers(v, ps.InitContainers)
		case "overhead":
			ps.Overhead, ok = resourceListInto(v, nil)
		case "priorityClassName":
			ps.PriorityClassName, ok = v.(string)
		}
		if ok {
			continue
		}
		// The field is nil here: JSON decodes into fresh values.
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
		return nil
	}
	raw, err := json.Marshal(rest)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, ps); err != nil {
		return fmt.Errorf("reading the pod spec: %w", err)
	}
	return nil
}

// requestContainers reads containers made of names, restart policies,
// requests and limits (skipped) and nothing else requirements read, into
// the capacity of reuse, whose request maps it clears and fills again; ok
// is false (and the list nil) for anything else.
func requestContainers(v any, reuse []corev1.Container) ([]corev1.Container, bool) {
	list, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := reuse[:0]
	for _, c := range list {
		cm, ok := c.(map[string]any)
		if !ok {
			return nil, false
		}
		var requests corev1.ResourceList
		if len(out) < cap(out) {
			requests = out[:len(out)+1][len(out)].Resources.Requests
			clear(requests)
		}
		out = append(out, corev1.Container{})
		ct := &out[len(out)-1]
		// The fields requirementContainerFields names, looked up rather
		// than found among all the container's fields.
		if v, present := cm["name"]; present {
			if ct.Name, ok = v.(string); !ok {
				return nil, false
			}
		}
		if v, present := cm["restartPolicy"]; present {
			p, ok := v.(string)
			if !ok {
				return nil, false
			}
			policy := corev1.ContainerRestartPolicy(p)
			ct.RestartPolicy = &policy
		}
		if v, present := cm["resources"]; present {
			res, ok := v.(map[string]any)
			if !ok {
				return nil, false
			}
			for rk, rv := range res {
				switch rk {
				case "requests":
					if ct.Resources.Requests, ok = resourceListInto(rv, requests); !ok {
						return nil, false
					}
				case "limits":
				default:
					return nil, false
				}
			}
		}
	}
	return out, true
}

// resourceListInto reads a map of quantities (strings or numbers) into out,
// an empty map, or a new one when out is nil; ok is false for anything
// else.
func resourceListInto(v any, out corev1.ResourceList) (corev1.ResourceList, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	if out == nil {
		out = make(corev1.ResourceList, len(m))
	}
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
