package agent

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
	ref "k8s.io/client-go/tools/reference"
)

// namespaceRecorder records only the events of objects in one namespace.
type namespaceRecorder struct {
	record.EventRecorder
	namespace string
}

func (r *namespaceRecorder) keep(obj runtime.Object) bool {
	if m, err := meta.Accessor(obj); err == nil {
		return m.GetNamespace() == r.namespace
	}
	if o, err := ref.GetReference(nil, obj); err == nil {
		return o.Namespace == r.namespace
	}
	return false
}

func (r *namespaceRecorder) Event(obj runtime.Object, eventtype, reason, message string) {
	if r.keep(obj) {
		r.EventRecorder.Event(obj, eventtype, reason, message)
	}
}

func (r *namespaceRecorder) Eventf(obj runtime.Object, eventtype, reason, messageFmt string, args ...any) {
	if r.keep(obj) {
		r.EventRecorder.Eventf(obj, eventtype, reason, messageFmt, args...)
	}
}

func (r *namespaceRecorder) AnnotatedEventf(obj runtime.Object, annotations map[string]string, eventtype, reason, messageFmt string, args ...any) {
	if r.keep(obj) {
		r.EventRecorder.AnnotatedEventf(obj, annotations, eventtype, reason, messageFmt, args...)
	}
}
