package rolloutplan

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func deployment(image string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "nginx", "namespace": "default", "uid": "u1", "resourceVersion": "7", "generation": int64(3),
			"labels": map[string]any{"app": "nginx"}},
		"spec":   map[string]any{"replicas": int64(2), "template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": image}}}}},
		"status": map[string]any{"replicas": int64(2)},
	}}
}

func TestHash(t *testing.T) {
	t.Parallel()
	base := Hash(deployment("nginx:1"))
	if len(base) != hashLen {
		t.Fatalf("hash %q, want %d hex digits", base, hashLen)
	}
	same := deployment("nginx:1")
	same.SetResourceVersion("9")
	same.SetGeneration(4)
	same.Object["status"] = map[string]any{"replicas": int64(0)}
	same.SetAnnotations(map[string]string{"kubectl.kubernetes.io/last-applied-configuration": "{}"})
	if Hash(same) != base {
		t.Errorf("resourceVersion, generation, status and kubectl's last-applied-configuration changed the hash")
	}
	for name, change := range map[string]func(*unstructured.Unstructured){
		"image": func(o *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(o.Object, int64(3), "spec", "replicas")
		},
		"label":      func(o *unstructured.Unstructured) { o.SetLabels(map[string]string{"app": "other"}) },
		"annotation": func(o *unstructured.Unstructured) { o.SetAnnotations(map[string]string{"a": "b"}) },
	} {
		o := deployment("nginx:1")
		change(o)
		if Hash(o) == base {
			t.Errorf("changing the %s kept the hash", name)
		}
	}
	if Hash(deployment("nginx:2")) == base {
		t.Errorf("changing the image kept the hash")
	}
}

// The template held at an old revision has the live object's identity and
// the revision's content, labels and generation.
func TestHeld(t *testing.T) {
	t.Parallel()
	old := Content(deployment("nginx:1"))
	live := deployment("nginx:2")
	live.SetLabels(map[string]string{"app": "nginx", "new": "yes"})
	live.SetGeneration(5)
	live.SetResourceVersion("12")
	held := Held(live, old)
	if img, _, _ := unstructured.NestedSlice(held.Object, "spec", "template", "spec", "containers"); img[0].(map[string]any)["image"] != "nginx:1" {
		t.Errorf("held image %v, want nginx:1", img)
	}
	if held.GetGeneration() != 3 || !reflect.DeepEqual(held.GetLabels(), map[string]string{"app": "nginx"}) {
		t.Errorf("held generation %d labels %v, want the revision's 3 and app=nginx", held.GetGeneration(), held.GetLabels())
	}
	if held.GetUID() != "u1" || held.GetResourceVersion() != "12" || held.GetName() != "nginx" {
		t.Errorf("held identity %s %s %s, want the live object's", held.GetUID(), held.GetResourceVersion(), held.GetName())
	}
	if Hash(held) != Hash(deployment("nginx:1")) {
		t.Errorf("the held template does not hash as the revision")
	}
	// Neither input is changed.
	if img, _, _ := unstructured.NestedSlice(live.Object, "spec", "template", "spec", "containers"); img[0].(map[string]any)["image"] != "nginx:2" {
		t.Errorf("live object changed")
	}
	held.Object["spec"].(map[string]any)["replicas"] = int64(9)
	if old["spec"].(map[string]any)["replicas"] != int64(2) {
		t.Errorf("revision content shared with the held template")
	}
}

func TestRevisionsAnnotation(t *testing.T) {
	t.Parallel()
	m := map[string]string{"member2": "bbb", "member1": "aaa"}
	s := FormatRevisions(m)
	if s != "member1=aaa,member2=bbb" {
		t.Errorf("FormatRevisions = %q", s)
	}
	if got := ParseRevisions(s + ",bad,=x,y="); !reflect.DeepEqual(got, m) {
		t.Errorf("ParseRevisions = %v, want %v", got, m)
	}
	if got := ParseRevisions(""); len(got) != 0 {
		t.Errorf("ParseRevisions of nothing = %v", got)
	}
}
