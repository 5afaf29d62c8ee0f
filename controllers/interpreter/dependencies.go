package interpreter

import (
	"fmt"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// PodDependencies lists what a pod spec in namespace refers to, in the order
// ConfigMaps, Secrets, ServiceAccount (unless empty or "default"),
// PersistentVolumeClaims, each sorted by name and de-duplicated.
func PodDependencies(spec *corev1.PodSpec, namespace string) []DependentObjectReference {
	configMaps, secrets, pvcs := map[string]bool{}, map[string]bool{}, map[string]bool{}
	addLocalRef := func(r *corev1.LocalObjectReference) {
		if r != nil && r.Name != "" {
			secrets[r.Name] = true
		}
	}
	for _, s := range spec.ImagePullSecrets {
		if s.Name != "" {
			secrets[s.Name] = true
		}
	}
	for _, v := range spec.Volumes {
		switch {
		case v.ConfigMap != nil:
			configMaps[v.ConfigMap.Name] = true
		case v.Secret != nil:
			secrets[v.Secret.SecretName] = true
		case v.PersistentVolumeClaim != nil:
			pvcs[v.PersistentVolumeClaim.ClaimName] = true
		case v.Projected != nil:
			for _, src := range v.Projected.Sources {
				if src.ConfigMap != nil {
					configMaps[src.ConfigMap.Name] = true
				}
				if src.Secret != nil {
					secrets[src.Secret.Name] = true
				}
			}
		case v.CSI != nil:
			addLocalRef(v.CSI.NodePublishSecretRef)
		case v.AzureFile != nil:
			secrets[v.AzureFile.SecretName] = true
		case v.CephFS != nil:
			addLocalRef(v.CephFS.SecretRef)
		case v.Cinder != nil:
			addLocalRef(v.Cinder.SecretRef)
		case v.FlexVolume != nil:
			addLocalRef(v.FlexVolume.SecretRef)
		case v.RBD != nil:
			addLocalRef(v.RBD.SecretRef)
		case v.ScaleIO != nil:
			addLocalRef(v.ScaleIO.SecretRef)
		case v.ISCSI != nil:
			addLocalRef(v.ISCSI.SecretRef)
		case v.StorageOS != nil:
			addLocalRef(v.StorageOS.SecretRef)
		}
	}
	visit := func(env []corev1.EnvVar, envFrom []corev1.EnvFromSource) {
		for _, e := range envFrom {
			if e.ConfigMapRef != nil {
				configMaps[e.ConfigMapRef.Name] = true
			}
			if e.SecretRef != nil {
				secrets[e.SecretRef.Name] = true
			}
		}
		for _, e := range env {
			if e.ValueFrom == nil {
				continue
			}
			if r := e.ValueFrom.ConfigMapKeyRef; r != nil {
				configMaps[r.Name] = true
			}
			if r := e.ValueFrom.SecretKeyRef; r != nil {
				secrets[r.Name] = true
			}
		}
	}
	for _, c := range spec.InitContainers {
		visit(c.Env, c.EnvFrom)
	}
	for _, c := range spec.Containers {
		visit(c.Env, c.EnvFrom)
	}
	for _, c := range spec.EphemeralContainers {
		visit(c.Env, c.EnvFrom)
	}

	var deps []DependentObjectReference
	add := func(kind string, names map[string]bool) {
		for _, name := range sortedKeys(names) {
			if name != "" {
				deps = append(deps, DependentObjectReference{APIVersion: "v1", Kind: kind, Namespace: namespace, Name: name})
			}
		}
	}
	add("ConfigMap", configMaps)
	add("Secret", secrets)
	if sa := spec.ServiceAccountName; sa != "" && sa != "default" {
		deps = append(deps, DependentObjectReference{APIVersion: "v1", Kind: "ServiceAccount", Namespace: namespace, Name: sa})
	}
	add("PersistentVolumeClaim", pvcs)
	return deps
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// podTemplateDependencies returns a dependency hook for the pod template at path.
func podTemplateDependencies(path ...string) dependencyFunc {
	return func(obj *unstructured.Unstructured) ([]DependentObjectReference, error) {
		tmpl, _, err := unstructured.NestedMap(obj.Object, path...)
		if err != nil {
			return nil, fmt.Errorf("reading pod template: %w", err)
		}
		var pt corev1.PodTemplateSpec
		if err := fromUnstructured(tmpl, &pt); err != nil {
			return nil, err
		}
		return PodDependencies(&pt.Spec, obj.GetNamespace()), nil
	}
}

func podDependencies(obj *unstructured.Unstructured) ([]DependentObjectReference, error) {
	var pod corev1.Pod
	if err := fromUnstructured(obj.Object, &pod); err != nil {
		return nil, err
	}
	return PodDependencies(&pod.Spec, obj.GetNamespace()), nil
}

// statefulSetDependencies drops the claims that volumeClaimTemplates create:
// the StatefulSet controller makes them in each member.
func statefulSetDependencies(obj *unstructured.Unstructured) ([]DependentObjectReference, error) {
	var sts appsv1.StatefulSet
	if err := fromUnstructured(obj.Object, &sts); err != nil {
		return nil, err
	}
	templates := map[string]bool{}
	for _, t := range sts.Spec.VolumeClaimTemplates {
		templates[t.Name] = true
	}
	var deps []DependentObjectReference
	for _, d := range PodDependencies(&sts.Spec.Template.Spec, obj.GetNamespace()) {
		if d.Kind == "PersistentVolumeClaim" && templates[d.Name] {
			continue
		}
		deps = append(deps, d)
	}
	return deps, nil
}

// ingressDependencies lists the TLS secrets.
func ingressDependencies(obj *unstructured.Unstructured) ([]DependentObjectReference, error) {
	var ing networkingv1.Ingress
	if err := fromUnstructured(obj.Object, &ing); err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for _, t := range ing.Spec.TLS {
		if t.SecretName != "" {
			names[t.SecretName] = true
		}
	}
	var deps []DependentObjectReference
	for _, n := range sortedKeys(names) {
		deps = append(deps, DependentObjectReference{APIVersion: "v1", Kind: "Secret", Namespace: obj.GetNamespace(), Name: n})
	}
	return deps, nil
}

// serviceImportDependencies lists the derived service and its endpoint slices.
func serviceImportDependencies(obj *unstructured.Unstructured) ([]DependentObjectReference, error) {
	derived := "derived-" + obj.GetName()
	return []DependentObjectReference{
		{APIVersion: "v1", Kind: "Service", Namespace: obj.GetNamespace(), Name: derived},
		{
			APIVersion:    "discovery.k8s.io/v1",
			Kind:          "EndpointSlice",
			Namespace:     obj.GetNamespace(),
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/service-name": derived}},
		},
	}, nil
}
