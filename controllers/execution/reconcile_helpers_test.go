package execution

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
)

// fakeMember serves a member's objects to the sub-reconcilers as plain
// functions: objects by "resource/namespace/name", ConfigMaps and
// Deployments known, every write recorded as "verb resource/namespace/name"
// and stored with the next resourceVersion.
type fakeMember struct {
	objects map[string]*unstructured.Unstructured
	// cached, when set, is what a synced member informer holds: observe
	// reads it, and the member only for what it lacks.
	cached map[string]*unstructured.Unstructured
	// unseen: the member made the object after the informer's last event
	// (observe does not find it without a probe).
	unseen bool
	// errs fail a verb once per entry, in order.
	errs   map[string][]error
	writes []string
	// patches are the bodies of the patches, in order.
	patches []string
	rv      int
	// watched are the objects watched one by one (taken over untouched),
	// by key, with the key of their Work.
	watched map[string]string
}

func newFakeMember(objs ...*unstructured.Unstructured) *fakeMember {
	f := &fakeMember{objects: map[string]*unstructured.Unstructured{}, errs: map[string][]error{}, rv: 100, watched: map[string]string{}}
	for _, o := range objs {
		gvr, _ := fakeResource(o)
		f.objects[fakeKey(gvr, o)] = o.DeepCopy()
	}
	return f
}

func fakeResource(obj *unstructured.Unstructured) (schema.GroupVersionResource, error) {
	switch obj.GetKind() {
	case "ConfigMap":
		if obj.GetNamespace() == "" {
			obj.SetNamespace("default")
		}
		return configMapsGVR, nil
	case "Deployment":
		if obj.GetNamespace() == "" {
			obj.SetNamespace("default")
		}
		return deploymentsGVR, nil
	}
	return schema.GroupVersionResource{}, fmt.Errorf("mapping: %w", &meta.NoKindMatchError{GroupKind: obj.GroupVersionKind().GroupKind()})
}

func fakeKey(gvr schema.GroupVersionResource, obj *unstructured.Unstructured) string {
	return gvr.Resource + "/" + obj.GetNamespace() + "/" + obj.GetName()
}

func (f *fakeMember) fail(verb string) error {
	if errs := f.errs[verb]; len(errs) > 0 {
		f.errs[verb] = errs[1:]
		return errs[0]
	}
	return nil
}

func (f *fakeMember) write(verb string, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) error {
	f.writes = append(f.writes, verb+" "+fakeKey(gvr, obj))
	return f.fail(verb)
}

func (f *fakeMember) store(gvr schema.GroupVersionResource, obj *unstructured.Unstructured) *unstructured.Unstructured {
	f.rv++
	stored := obj.DeepCopy()
	stored.SetResourceVersion(fmt.Sprint(f.rv))
	f.objects[fakeKey(gvr, obj)] = stored
	return stored.DeepCopy()
}

func (f *fakeMember) api() memberObjects {
	get := func(_ context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		// A NotFound injected: the object was not there yet at this read.
		if err := f.fail("get"); apierrors.IsNotFound(err) {
			return nil, nil
		} else if err != nil {
			return nil, err
		}
		if o, ok := f.objects[fakeKey(gvr, obj)]; ok {
			return o.DeepCopy(), nil
		}
		return nil, nil
	}
	return memberObjects{
		resource: fakeResource,
		observe: func(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured, probe bool) (*unstructured.Unstructured, error) {
			if o, ok := f.cached[fakeKey(gvr, obj)]; ok {
				return o.DeepCopy(), nil
			}
			if probe {
				return get(ctx, gvr, obj)
			}
			// The informer holds what Flotilla applied, and the objects taken
			// over untouched are watched, once the member had them before
			// this read.
			if f.cached != nil || f.unseen {
				return nil, nil
			}
			key := fakeKey(gvr, obj)
			if o, ok := f.objects[key]; ok && (applied(o) || f.watched[key] != "") {
				return o.DeepCopy(), nil
			}
			return nil, nil
		},
		get: get,
		create: func(_ context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			if err := f.write("create", gvr, obj); err != nil {
				return nil, err
			}
			if _, ok := f.objects[fakeKey(gvr, obj)]; ok {
				return nil, apierrors.NewAlreadyExists(gvr.GroupResource(), obj.GetName())
			}
			return f.store(gvr, obj), nil
		},
		update: func(_ context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			if err := f.write("update", gvr, obj); err != nil {
				return nil, err
			}
			return f.store(gvr, obj), nil
		},
		apply: func(_ context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			if err := f.write("apply", gvr, obj); err != nil {
				return nil, err
			}
			return f.store(gvr, obj), nil
		},
		patch: func(_ context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured, data []byte) error {
			f.patches = append(f.patches, string(data))
			return f.write("patch", gvr, obj)
		},
		delete: func(_ context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) error {
			if err := f.write("delete", gvr, obj); err != nil {
				return err
			}
			if stored := f.objects[fakeKey(gvr, obj)]; stored == nil || stored.GetUID() != obj.GetUID() {
				return fmt.Errorf("delete %s: precondition failed: the UID differs", fakeKey(gvr, obj))
			}
			delete(f.objects, fakeKey(gvr, obj))
			return nil
		},
		watch: func(gvr schema.GroupVersionResource, obj *unstructured.Unstructured, work string) error {
			f.watched[fakeKey(gvr, obj)] = work
			return nil
		},
		unwatch: func(gvr schema.GroupVersionResource, obj *unstructured.Unstructured) {
			delete(f.watched, fakeKey(gvr, obj))
		},
	}
}

// fakeWorks records the patches of Works as "type[/subresource] body" and
// answers with the Work, its status taken from a status patch.
type fakeWorks struct {
	err     error
	patches []string
}

func (f *fakeWorks) patch(_ context.Context, work *workv1alpha1.Work, pt types.PatchType, data []byte, subresources ...string) (*workv1alpha1.Work, error) {
	kind := map[types.PatchType]string{types.MergePatchType: "merge", types.JSONPatchType: "json"}[pt]
	if len(subresources) > 0 {
		kind += "/" + strings.Join(subresources, "/")
	}
	f.patches = append(f.patches, kind+" "+string(data))
	if f.err != nil {
		return nil, f.err
	}
	out := work.DeepCopy()
	// The server's version after the patch: past one another writer made
	// meanwhile, unseen by the caller.
	if n, err := strconv.Atoi(work.ResourceVersion); err == nil {
		out.ResourceVersion = strconv.Itoa(n + 2)
	} else {
		out.ResourceVersion += "+1"
	}
	if len(subresources) > 0 {
		patched := struct {
			Status workv1alpha1.WorkStatus `json:"status"`
		}{}
		if err := jsonUnmarshal(data, &patched); err != nil {
			return nil, err
		}
		out.Status = patched.Status
	}
	return out, nil
}

// fakeEvents records events as "object type reason message", the object
// "Work/<name>" or, for a template, "<Kind>/<name>@<uid>".
type fakeEvents struct{ events []string }

func (f *fakeEvents) event(obj runtime.Object, eventType, reason, message string) {
	name := ""
	switch o := obj.(type) {
	case *corev1.ObjectReference:
		name = o.Kind + "/" + o.Name + "@" + string(o.UID)
	case *workv1alpha1.Work:
		name = "Work/" + o.Name
	}
	f.events = append(f.events, name+" "+eventType+" "+reason+" "+message)
}
