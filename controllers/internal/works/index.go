package works

import (
	"k8s.io/client-go/tools/cache"

	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/names"
)

// OwnerKey is "<namespace>/<name>" of the object a Work derives from, as
// two of its labels name it; "" when either is missing.
func OwnerKey(w *workv1alpha1.Work, namespaceLabel, nameLabel string) string {
	ns, name := w.Labels[namespaceLabel], w.Labels[nameLabel]
	if ns == "" || name == "" {
		return ""
	}
	return ns + "/" + name
}

// OwnerIndexFunc indexes Works by their OwnerKey.
func OwnerIndexFunc(namespaceLabel, nameLabel string) cache.IndexFunc {
	return func(obj any) ([]string, error) {
		if w, ok := obj.(*workv1alpha1.Work); ok {
			if key := OwnerKey(w, namespaceLabel, nameLabel); key != "" {
				return []string{key}, nil
			}
		}
		return nil, nil
	}
}

// AddIndex adds the index name to the shared informer unless another
// controller already did.
func AddIndex(inf cache.SharedIndexInformer, name string, fn cache.IndexFunc) error {
	if _, ok := inf.GetIndexer().GetIndexers()[name]; ok {
		return nil
	}
	return inf.AddIndexers(cache.Indexers{name: fn})
}

// Indexed returns the Works of key in the index name.
func Indexed(idx cache.Indexer, name, key string) ([]*workv1alpha1.Work, error) {
	objs, err := idx.ByIndex(name, key)
	if err != nil {
		return nil, err
	}
	out := make([]*workv1alpha1.Work, 0, len(objs))
	for _, o := range objs {
		if w, ok := o.(*workv1alpha1.Work); ok {
			out = append(out, w)
		}
	}
	return out, nil
}

// BindingKey is the names.BindingKey of the (Cluster)ResourceBinding a Work
// belongs to, as its annotations name it; false when they do not.
func BindingKey(w *workv1alpha1.Work) (string, bool) {
	if name := w.Annotations[workv1alpha2.ClusterResourceBindingAnnotationKey]; name != "" {
		return names.BindingKey("", name), true
	}
	ns, name := w.Annotations[workv1alpha2.ResourceBindingNamespaceAnnotationKey], w.Annotations[workv1alpha2.ResourceBindingNameAnnotationKey]
	if ns == "" || name == "" {
		return "", false
	}
	return names.BindingKey(ns, name), true
}
