package interpreter

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// Retain hooks receive a copy of desired that they may modify and return.

// retainWorkloadReplicas keeps the member's spec.replicas when the template
// is labelled retain-replicas=true.
func retainWorkloadReplicas(desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if desired.GetLabels()[RetainReplicasLabel] != RetainReplicasValue {
		return desired, nil
	}
	replicas, found, err := unstructured.NestedInt64(observed.Object, "spec", "replicas")
	if err != nil {
		return nil, fmt.Errorf("reading observed spec.replicas: %w", err)
	}
	if found {
		if err := unstructured.SetNestedField(desired.Object, replicas, "spec", "replicas"); err != nil {
			return nil, err
		}
	}
	return desired, nil
}

// retainPod keeps the fields a member cluster sets on a pod and forbids
// changing: nodeName, serviceAccountName, volumes and volume mounts.
func retainPod(desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	for _, f := range []string{"nodeName", "serviceAccountName"} {
		if err := copyField(desired, observed, "spec", f); err != nil {
			return nil, err
		}
	}
	if err := copyField(desired, observed, "spec", "volumes"); err != nil {
		return nil, err
	}
	for _, list := range []string{"containers", "initContainers"} {
		if err := retainVolumeMounts(desired, observed, list); err != nil {
			return nil, err
		}
	}
	return desired, nil
}

// retainVolumeMounts copies volumeMounts from observed containers to the
// desired containers with the same name.
func retainVolumeMounts(desired, observed *unstructured.Unstructured, list string) error {
	obsContainers, _, err := unstructured.NestedSlice(observed.Object, "spec", list)
	if err != nil {
		return fmt.Errorf("reading observed spec.%s: %w", list, err)
	}
	desContainers, found, err := unstructured.NestedSlice(desired.Object, "spec", list)
	if err != nil || !found {
		return err
	}
	mounts := map[string]interface{}{}
	for _, c := range obsContainers {
		if m, ok := c.(map[string]interface{}); ok {
			name, _ := m["name"].(string)
			if vm, ok := m["volumeMounts"]; ok {
				mounts[name] = vm
			}
		}
	}
	for _, c := range desContainers {
		m, ok := c.(map[string]interface{})
		if !ok {
			continue
		}
		name, _ := m["name"].(string)
		if vm, ok := mounts[name]; ok {
			m["volumeMounts"] = vm
		}
	}
	return unstructured.SetNestedSlice(desired.Object, desContainers, "spec", list)
}

// retainService keeps clusterIP(s), nodePorts (matched by port) and
// healthCheckNodePort, which the member cluster allocates.
func retainService(desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if v, found, _ := unstructured.NestedFieldNoCopy(observed.Object, "spec", "healthCheckNodePort"); found && v != nil {
		if err := unstructured.SetNestedField(desired.Object, runtime.DeepCopyJSONValue(v), "spec", "healthCheckNodePort"); err != nil {
			return nil, err
		}
	}
	if ip, found, _ := unstructured.NestedString(observed.Object, "spec", "clusterIP"); found && ip != "" {
		if err := unstructured.SetNestedField(desired.Object, ip, "spec", "clusterIP"); err != nil {
			return nil, err
		}
	}
	if ips, found, _ := unstructured.NestedStringSlice(observed.Object, "spec", "clusterIPs"); found && len(ips) > 0 {
		if err := unstructured.SetNestedStringSlice(desired.Object, ips, "spec", "clusterIPs"); err != nil {
			return nil, err
		}
	}
	obsPorts, _, err := unstructured.NestedSlice(observed.Object, "spec", "ports")
	if err != nil {
		return nil, fmt.Errorf("reading observed spec.ports: %w", err)
	}
	desPorts, found, err := unstructured.NestedSlice(desired.Object, "spec", "ports")
	if err != nil {
		return nil, fmt.Errorf("reading desired spec.ports: %w", err)
	}
	if !found {
		return desired, nil
	}
	for _, dp := range desPorts {
		d, ok := dp.(map[string]interface{})
		if !ok {
			continue
		}
		for _, op := range obsPorts {
			o, ok := op.(map[string]interface{})
			if !ok || !sameNumber(d["port"], o["port"]) {
				continue
			}
			if np, ok := o["nodePort"]; ok && np != nil {
				d["nodePort"] = np
			}
			break
		}
	}
	if err := unstructured.SetNestedSlice(desired.Object, desPorts, "spec", "ports"); err != nil {
		return nil, err
	}
	return desired, nil
}

// retainServiceAccount merges the member's secrets into the desired ones.
func retainServiceAccount(desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	obs, found, err := unstructured.NestedSlice(observed.Object, "secrets")
	if err != nil || !found || len(obs) == 0 {
		return desired, err
	}
	des, _, err := unstructured.NestedSlice(desired.Object, "secrets")
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for _, s := range des {
		if m, ok := s.(map[string]interface{}); ok {
			n, _ := m["name"].(string)
			names[n] = true
		}
	}
	for _, s := range obs {
		m, ok := s.(map[string]interface{})
		if !ok {
			continue
		}
		n, _ := m["name"].(string)
		if !names[n] {
			names[n] = true
			des = append(des, s)
		}
	}
	if err := unstructured.SetNestedSlice(desired.Object, des, "secrets"); err != nil {
		return nil, err
	}
	return desired, nil
}

// retainPersistentVolumeClaim keeps the bound volume name.
func retainPersistentVolumeClaim(desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if v, found, _ := unstructured.NestedString(observed.Object, "spec", "volumeName"); found && v != "" {
		if err := unstructured.SetNestedField(desired.Object, v, "spec", "volumeName"); err != nil {
			return nil, err
		}
	}
	return desired, nil
}

// retainPersistentVolume keeps the claim reference.
func retainPersistentVolume(desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if v, found, _ := unstructured.NestedMap(observed.Object, "spec", "claimRef"); found {
		if err := unstructured.SetNestedMap(desired.Object, v, "spec", "claimRef"); err != nil {
			return nil, err
		}
	}
	return desired, nil
}

// retainJob keeps the selector and template labels the member's job
// controller generated (controller-uid), which are immutable.
func retainJob(desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	for _, path := range [][]string{
		{"spec", "selector", "matchLabels"},
		{"spec", "template", "metadata", "labels"},
	} {
		v, found, err := unstructured.NestedStringMap(observed.Object, path...)
		if err != nil {
			return nil, fmt.Errorf("reading observed %v: %w", path, err)
		}
		if found && len(v) > 0 {
			if err := unstructured.SetNestedStringMap(desired.Object, v, path...); err != nil {
				return nil, err
			}
		}
	}
	return desired, nil
}

// retainSecret keeps the member's data of service-account-token secrets,
// which the member's token controller fills in.
func retainSecret(desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	t, _, _ := unstructured.NestedString(desired.Object, "type")
	if t != string(corev1.SecretTypeServiceAccountToken) {
		return desired, nil
	}
	if data, found, _ := unstructured.NestedMap(observed.Object, "data"); found {
		if err := unstructured.SetNestedMap(desired.Object, data, "data"); err != nil {
			return nil, err
		}
	}
	return desired, nil
}

// copyField copies observed's field at path into desired (deep), or leaves
// desired unchanged when observed lacks it.
func copyField(desired, observed *unstructured.Unstructured, path ...string) error {
	v, found, err := unstructured.NestedFieldCopy(observed.Object, path...)
	if err != nil {
		return fmt.Errorf("reading observed %v: %w", path, err)
	}
	if !found {
		return nil
	}
	return unstructured.SetNestedField(desired.Object, v, path...)
}

// sameNumber compares two JSON numbers that may be int64, int or float64.
func sameNumber(a, b interface{}) bool {
	x, ok1 := toFloat(a)
	y, ok2 := toFloat(b)
	return ok1 && ok2 && x == y
}

func toFloat(v interface{}) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	case int32:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}
