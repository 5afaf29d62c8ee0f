package interpreter

import (
	"fmt"
	"iter"
	"slices"
	"strings"

	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/flotilla/names"
)

// volumeSecretRefs are the volume sources naming a Secret in a reference
// field ({name: ...}): source -> field.
var volumeSecretRefs = [...]struct{ source, ref string }{
	{"csi", "nodePublishSecretRef"},
	{"cephfs", "secretRef"},
	{"cinder", "secretRef"},
	{"flexVolume", "secretRef"},
	{"rbd", "secretRef"},
	{"scaleIO", "secretRef"},
	{"iscsi", "secretRef"},
	{"storageos", "secretRef"},
}

// podRefs collects the names a pod spec refers to while reading it as
// unstructured data; the first field of the wrong type is kept as err.
type podRefs struct {
	configMaps, secrets, pvcs []string
	err                       error
}

// field reads m[key] as T; absent or null is the zero value. A value of
// another type records an error naming the field; at is the path of m,
// joined only then.
func field[T any](r *podRefs, m map[string]any, key string, at ...string) T {
	var zero T
	v, ok := m[key]
	if !ok || v == nil {
		return zero
	}
	t, ok := v.(T)
	if !ok && r.err == nil {
		r.err = fmt.Errorf("%s.%s: %T is not a %T", strings.Join(at, "."), key, v, zero)
	}
	return t
}

// objects yields the objects of the list m[key].
func (r *podRefs) objects(m map[string]any, key string, at ...string) iter.Seq[map[string]any] {
	return func(yield func(map[string]any) bool) {
		for i, e := range field[[]any](r, m, key, at...) {
			em, ok := e.(map[string]any)
			if !ok {
				if e != nil && r.err == nil {
					r.err = fmt.Errorf("%s.%s[%d]: %T is not an object", strings.Join(at, "."), key, i, e)
				}
				continue
			}
			if !yield(em) {
				return
			}
		}
	}
}

// name appends to list the field nameField of the object m[key].
func (r *podRefs) name(list *[]string, m map[string]any, key, nameField string, at ...string) {
	ref := field[map[string]any](r, m, key, at...)
	if ref == nil {
		return
	}
	switch n := ref[nameField].(type) {
	case string:
		*list = append(*list, n)
	case nil:
	default:
		if r.err == nil {
			r.err = fmt.Errorf("%s.%s.%s: %T is not a string", strings.Join(at, "."), key, nameField, n)
		}
	}
}

// DependencyFields are the pod spec fields PodDependencies reads; the Lua
// helper converts only these of a template given as a table.
var DependencyFields = map[string]bool{
	"containers": true, "initContainers": true, "ephemeralContainers": true,
	"volumes": true, "imagePullSecrets": true, "serviceAccountName": true,
}

// PodDependencies lists what a pod spec (as unstructured data) in namespace
// refers to, in the order ConfigMaps, Secrets, ServiceAccount (unless empty
// or "default"), PersistentVolumeClaims, each sorted by name and
// de-duplicated. It reads only the fields naming other objects, so its cost
// follows them rather than the size of the spec; a field of the wrong type
// is an error.
func PodDependencies(spec map[string]any, namespace string) ([]DependentObjectReference, error) {
	var r podRefs
	for s := range r.objects(spec, "imagePullSecrets", "spec") {
		r.secrets = append(r.secrets, field[string](&r, s, "name", "spec", "imagePullSecrets"))
	}
	for v := range r.objects(spec, "volumes", "spec") {
		r.name(&r.configMaps, v, "configMap", "name", "spec", "volumes")
		r.name(&r.secrets, v, "secret", "secretName", "spec", "volumes")
		r.name(&r.pvcs, v, "persistentVolumeClaim", "claimName", "spec", "volumes")
		if az := field[map[string]any](&r, v, "azureFile", "spec", "volumes"); az != nil {
			r.secrets = append(r.secrets, field[string](&r, az, "secretName", "spec", "volumes", "azureFile"))
		}
		if p := field[map[string]any](&r, v, "projected", "spec", "volumes"); p != nil {
			for src := range r.objects(p, "sources", "spec", "volumes", "projected") {
				r.name(&r.configMaps, src, "configMap", "name", "spec", "volumes", "projected", "sources")
				r.name(&r.secrets, src, "secret", "name", "spec", "volumes", "projected", "sources")
			}
		}
		for _, vs := range volumeSecretRefs {
			if s := field[map[string]any](&r, v, vs.source, "spec", "volumes"); s != nil {
				r.name(&r.secrets, s, vs.ref, "name", "spec", "volumes", vs.source)
			}
		}
	}
	for _, list := range [...]string{"initContainers", "containers", "ephemeralContainers"} {
		for c := range r.objects(spec, list, "spec") {
			for e := range r.objects(c, "envFrom", "spec", list) {
				r.name(&r.configMaps, e, "configMapRef", "name", "spec", list, "envFrom")
				r.name(&r.secrets, e, "secretRef", "name", "spec", list, "envFrom")
			}
			for e := range r.objects(c, "env", "spec", list) {
				if from := field[map[string]any](&r, e, "valueFrom", "spec", list, "env"); from != nil {
					r.name(&r.configMaps, from, "configMapKeyRef", "name", "spec", list, "env", "valueFrom")
					r.name(&r.secrets, from, "secretKeyRef", "name", "spec", list, "env", "valueFrom")
				}
			}
		}
	}
	sa := field[string](&r, spec, "serviceAccountName", "spec")
	if r.err != nil {
		return nil, r.err
	}

	deps := make([]DependentObjectReference, 0, len(r.configMaps)+len(r.secrets)+len(r.pvcs)+1)
	add := func(kind string, names []string) {
		slices.Sort(names)
		for _, name := range slices.Compact(names) {
			if name != "" {
				deps = append(deps, DependentObjectReference{APIVersion: "v1", Kind: kind, Namespace: namespace, Name: name})
			}
		}
	}
	add("ConfigMap", r.configMaps)
	add("Secret", r.secrets)
	if sa != "" && sa != "default" {
		deps = append(deps, DependentObjectReference{APIVersion: "v1", Kind: "ServiceAccount", Namespace: namespace, Name: sa})
	}
	add("PersistentVolumeClaim", r.pvcs)
	if len(deps) == 0 {
		return nil, nil
	}
	return deps, nil
}

// podSpecAt reads, without copying, the pod spec at path of obj; absent
// is an empty spec.
func podSpecAt(obj *unstructured.Unstructured, path ...string) (map[string]any, error) {
	v, _, err := unstructured.NestedFieldNoCopy(obj.Object, path...)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", strings.Join(path, "."), err)
	}
	spec, ok := v.(map[string]any)
	if !ok && v != nil {
		return nil, fmt.Errorf("reading %s: %T is not an object", strings.Join(path, "."), v)
	}
	return spec, nil
}

// podTemplateDependencies returns a dependency hook for the pod template at path.
func podTemplateDependencies(path ...string) dependencyFunc {
	specPath := append(slices.Clip(path), "spec")
	return func(obj *unstructured.Unstructured) ([]DependentObjectReference, error) {
		spec, err := podSpecAt(obj, specPath...)
		if err != nil {
			return nil, err
		}
		return PodDependencies(spec, obj.GetNamespace())
	}
}

func podDependencies(obj *unstructured.Unstructured) ([]DependentObjectReference, error) {
	spec, err := podSpecAt(obj, "spec")
	if err != nil {
		return nil, err
	}
	return PodDependencies(spec, obj.GetNamespace())
}

// statefulSetDependencies drops the claims that volumeClaimTemplates create:
// the StatefulSet controller makes them in each member.
func statefulSetDependencies(obj *unstructured.Unstructured) ([]DependentObjectReference, error) {
	spec, err := podSpecAt(obj, "spec", "template", "spec")
	if err != nil {
		return nil, err
	}
	all, err := PodDependencies(spec, obj.GetNamespace())
	if err != nil {
		return nil, err
	}
	claimTemplates, _, err := unstructured.NestedFieldNoCopy(obj.Object, "spec", "volumeClaimTemplates")
	if err != nil {
		return nil, fmt.Errorf("reading spec.volumeClaimTemplates: %w", err)
	}
	list, _ := claimTemplates.([]any)
	templates := map[string]bool{}
	for _, t := range list {
		if tm, ok := t.(map[string]any); ok {
			name, _, _ := unstructured.NestedString(tm, "metadata", "name")
			templates[name] = true
		}
	}
	var deps []DependentObjectReference
	for _, d := range all {
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
	var names []string
	for _, t := range ing.Spec.TLS {
		if t.SecretName != "" {
			names = append(names, t.SecretName)
		}
	}
	slices.Sort(names)
	var deps []DependentObjectReference
	for _, n := range slices.Compact(names) {
		deps = append(deps, DependentObjectReference{APIVersion: "v1", Kind: "Secret", Namespace: obj.GetNamespace(), Name: n})
	}
	return deps, nil
}

// serviceImportDependencies lists the derived service and its endpoint slices.
func serviceImportDependencies(obj *unstructured.Unstructured) ([]DependentObjectReference, error) {
	derived := names.DerivedServiceName(obj.GetName())
	return []DependentObjectReference{
		{APIVersion: "v1", Kind: "Service", Namespace: obj.GetNamespace(), Name: derived},
		{
			APIVersion:    "discovery.k8s.io/v1",
			Kind:          "EndpointSlice",
			Namespace:     obj.GetNamespace(),
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{discoveryv1.LabelServiceName: derived}},
		},
	}, nil
}
