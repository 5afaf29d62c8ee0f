package multiget

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/tools/cache"

	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	"github.com/flotilla-io/flotilla/names"
)

// DriftColumn follows ADOPTION with -o wide: whether the member object
// drifted from what the control plane applied, as its Work records.
const DriftColumn = "DRIFT"

// The values of DriftColumn.
const (
	// DriftOpen: the member object differs from what was applied, and it
	// was not written back (the apply mode leaves it, or writing failed).
	DriftOpen = "Open"
	// DriftCorrected: it drifted, and the applied values were written back.
	DriftCorrected = "Corrected"
	// NoDrift: its Work records no drift.
	NoDrift = "No"
	// DriftUnknown: not a member object the control plane applied, or its
	// Work could not be read.
	DriftUnknown = "-"
)

// maxWorkReads bounds the Works one get reads for DRIFT; rows beyond show
// DriftUnknown.
const maxWorkReads = 100

// DriftOf is the DRIFT cell of the member object kind namespace/name in w,
// the Work that applies it.
func DriftOf(w *workv1alpha1.Work, kind, namespace, name string) string {
	for _, ms := range w.Status.ManifestStatuses {
		id := ms.Identifier
		if id.Kind != kind || id.Namespace != namespace || id.Name != name {
			continue
		}
		switch {
		case len(ms.Drift) == 0:
			return NoDrift
		case meta.IsStatusConditionTrue(w.Status.Conditions, workv1alpha1.WorkDrifted):
			return DriftOpen
		}
		return DriftCorrected
	}
	return DriftUnknown
}

// driftLookup reads the Works of member objects.
type driftLookup struct {
	// work reads a Work; nil when there is none.
	work func(ctx context.Context, namespace, name string) (*workv1alpha1.Work, error)
}

// markDrift sets the Drift cells of the member parts' rows the control
// plane applied (karmada.io/managed): their Work is the one of the
// template of the same kind, namespace and name, in the cluster's
// execution namespace. A Work that cannot be read leaves DriftUnknown.
func (l driftLookup) markDrift(ctx context.Context, parts []Part) {
	works := map[string]*workv1alpha1.Work{}
	for i := range parts {
		p := &parts[i]
		if p.ControlPlane || p.Table == nil || p.Mapping == nil {
			continue
		}
		kind := p.Mapping.GroupVersionKind.Kind
		for _, row := range p.Table.Rows {
			m := rowMeta(row)
			if m == nil || m.GetLabels()[workv1alpha1.ManagedByKarmadaLabel] != workv1alpha1.ManagedByKarmadaLabelValue {
				continue
			}
			ns, name := names.ExecutionNamespace(p.Cluster), names.WorkName(kind, m.GetName(), m.GetNamespace())
			key := ns + "/" + name
			w, read := works[key]
			if !read {
				if len(works) >= maxWorkReads {
					continue
				}
				w, _ = l.work(ctx, ns, name)
				works[key] = w
			}
			if w == nil {
				continue
			}
			if p.Drift == nil {
				p.Drift = map[string]string{}
			}
			p.Drift[cache.NewObjectName(m.GetNamespace(), m.GetName()).String()] = DriftOf(w, kind, m.GetNamespace(), m.GetName())
		}
	}
}

// newDriftLookup reads the control plane of cp as the caller.
func newDriftLookup(cp genericclioptions.RESTClientGetter) (driftLookup, error) {
	cfg, err := cp.ToRESTConfig()
	if err != nil {
		return driftLookup{}, err
	}
	karmada, err := versioned.NewForConfig(cfg)
	if err != nil {
		return driftLookup{}, err
	}
	return driftLookup{work: func(ctx context.Context, namespace, name string) (*workv1alpha1.Work, error) {
		w, err := karmada.WorkV1alpha1().Works(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		return w, nil
	}}, nil
}
