package chartapply

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	aggregator "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"
)

// FieldManager is the server-side apply manager of what init applies.
const FieldManager = "flotillactl-init"

// Clients reach the cluster init installs into.
type Clients struct {
	Core       kubernetes.Interface
	Dynamic    dynamic.Interface
	Aggregator aggregator.Interface
	// Mapper maps the chart's kinds to resources.
	Mapper meta.RESTMapper
}

// NewClients builds the clients of the cluster of cfg.
func NewClients(cfg *rest.Config) (Clients, error) {
	core, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return Clients{}, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return Clients{}, err
	}
	agg, err := aggregator.NewForConfig(cfg)
	if err != nil {
		return Clients{}, err
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return Clients{}, err
	}
	return Clients{Core: core, Dynamic: dyn, Aggregator: agg,
		Mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))}, nil
}

// Installer applies and removes one release.
type Installer struct {
	Clients
	Release, Namespace string
	// Labels go on the inventory ConfigMap.
	Labels map[string]string
	// DryRun sends every write with dryRun=All: the server validates and
	// admits, nothing is stored.
	DryRun bool
	// Out receives a line per change.
	Out io.Writer
}

func (in *Installer) dryRun() []string {
	if in.DryRun {
		return []string{metav1.DryRunAll}
	}
	return nil
}

func (in *Installer) say(format string, args ...any) {
	suffix := ""
	if in.DryRun {
		suffix = " (server dry run)"
	}
	fmt.Fprintf(in.Out, format+suffix+"\n", args...)
}

// resource maps an object's kind to its resource client.
func (in *Installer) resource(apiVersion, kind, namespace string) (dynamic.ResourceInterface, error) {
	gvk := schema.FromAPIVersionAndKind(apiVersion, kind)
	m, err := in.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, fmt.Errorf("%s %s is not served by the cluster (is what provides it installed?): %w", apiVersion, kind, err)
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return in.Dynamic.Resource(m.Resource).Namespace(namespace), nil
	}
	return in.Dynamic.Resource(m.Resource), nil
}

// Apply makes the cluster hold objs: it creates the namespace when
// missing, applies each object server-side (force: the chart owns its
// fields), records what it applied in the inventory and deletes what an
// earlier init created that objs no longer has. It is safe to run again.
func (in *Installer) Apply(ctx context.Context, objs []*unstructured.Unstructured) (*Inventory, error) {
	old, err := in.Inventory(ctx)
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, err
	}
	inv := &Inventory{}
	if old != nil {
		inv.CreatedNamespace = old.CreatedNamespace
	}
	created, err := in.ensureNamespace(ctx)
	if err != nil {
		return nil, err
	}
	inv.CreatedNamespace = inv.CreatedNamespace || created
	for _, o := range objs {
		r, err := in.applyOne(ctx, o)
		if err != nil {
			return nil, err
		}
		inv.Objects = append(inv.Objects, r)
	}
	if old != nil {
		if err := in.deleteAll(ctx, stale(old.Objects, inv.Objects)); err != nil {
			return nil, fmt.Errorf("deleting what the chart no longer makes: %w", err)
		}
	}
	if err := in.saveInventory(ctx, inv); err != nil {
		return nil, err
	}
	return inv, nil
}

func (in *Installer) ensureNamespace(ctx context.Context) (created bool, err error) {
	nss := in.Core.CoreV1().Namespaces()
	if _, err := nss.Get(ctx, in.Namespace, metav1.GetOptions{}); err == nil {
		return false, nil
	} else if !apierrors.IsNotFound(err) {
		return false, fmt.Errorf("reading namespace %s: %w", in.Namespace, err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: in.Namespace}}
	if _, err := nss.Create(ctx, ns, metav1.CreateOptions{DryRun: in.dryRun()}); err != nil && !apierrors.IsAlreadyExists(err) {
		return false, fmt.Errorf("creating namespace %s: %w", in.Namespace, err)
	}
	in.say("namespace/%s created", in.Namespace)
	return true, nil
}

func (in *Installer) applyOne(ctx context.Context, o *unstructured.Unstructured) (Ref, error) {
	ref := Ref{APIVersion: o.GetAPIVersion(), Kind: o.GetKind(), Namespace: o.GetNamespace(), Name: o.GetName()}
	res, err := in.resource(ref.APIVersion, ref.Kind, ref.Namespace)
	if err != nil {
		return ref, err
	}
	// Read first, only to say what the apply did.
	before := ""
	if cur, err := res.Get(ctx, ref.Name, metav1.GetOptions{}); err == nil {
		before = cur.GetResourceVersion()
	} else if !apierrors.IsNotFound(err) {
		return ref, fmt.Errorf("reading %s: %w", ref, err)
	}
	out, err := res.Apply(ctx, ref.Name, o, metav1.ApplyOptions{FieldManager: FieldManager, Force: true, DryRun: in.dryRun()})
	if err != nil {
		return ref, fmt.Errorf("applying %s: %w", ref, err)
	}
	ref.UID = out.GetUID()
	verb := "configured"
	switch before {
	case "":
		verb = "created"
	case out.GetResourceVersion():
		verb = "unchanged"
	}
	in.say("%s %s", strings.ToLower(ref.Kind)+"/"+ref.Name, verb)
	return ref, nil
}

// Inventory reads what init created for the release; a NotFound error
// when it never ran.
func (in *Installer) Inventory(ctx context.Context) (*Inventory, error) {
	cm, err := in.Core.CoreV1().ConfigMaps(in.Namespace).Get(ctx, InventoryName(in.Release), metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return decodeInventory(cm)
}

func (in *Installer) saveInventory(ctx context.Context, inv *Inventory) error {
	cm, err := inv.configMap(in.Release, in.Namespace, in.Labels)
	if err != nil {
		return err
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(cm)
	if err != nil {
		return err
	}
	_, err = in.Dynamic.Resource(corev1.SchemeGroupVersion.WithResource("configmaps")).Namespace(in.Namespace).
		Apply(ctx, cm.Name, &unstructured.Unstructured{Object: u}, metav1.ApplyOptions{FieldManager: FieldManager, Force: true, DryRun: in.dryRun()})
	if err != nil {
		return fmt.Errorf("recording what init created in configmap %s/%s: %w", in.Namespace, cm.Name, err)
	}
	return nil
}

// Remove deletes what init created for the release, newest kinds first,
// each only if its uid is still the one init recorded; then the inventory
// and, when init created it, the namespace. Objects already gone are not
// errors. Without an inventory it deletes nothing and says so.
func (in *Installer) Remove(ctx context.Context) error {
	inv, err := in.Inventory(ctx)
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("no configmap %s/%s: flotillactl init did not install release %q in namespace %s, so nothing is removed", in.Namespace, InventoryName(in.Release), in.Release, in.Namespace)
	}
	if err != nil {
		return err
	}
	if err := in.deleteAll(ctx, inv.Objects); err != nil {
		return err
	}
	cms := in.Core.CoreV1().ConfigMaps(in.Namespace)
	if err := cms.Delete(ctx, InventoryName(in.Release), metav1.DeleteOptions{DryRun: in.dryRun()}); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	in.say("configmap/%s deleted", InventoryName(in.Release))
	if inv.CreatedNamespace {
		if err := in.Core.CoreV1().Namespaces().Delete(ctx, in.Namespace, metav1.DeleteOptions{DryRun: in.dryRun()}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		in.say("namespace/%s deleted (init created it)", in.Namespace)
	}
	return nil
}

func (in *Installer) deleteAll(ctx context.Context, refs []Ref) error {
	var errs []error
	background := metav1.DeletePropagationBackground
	for _, r := range uninstallOrder(refs) {
		res, err := in.resource(r.APIVersion, r.Kind, r.Namespace)
		if err != nil {
			if meta.IsNoMatchError(err) {
				continue // the kind is gone, and its objects with it
			}
			errs = append(errs, err)
			continue
		}
		opts := metav1.DeleteOptions{DryRun: in.dryRun(), PropagationPolicy: &background}
		if r.UID != "" {
			opts.Preconditions = &metav1.Preconditions{UID: &r.UID}
		}
		err = res.Delete(ctx, r.Name, opts)
		switch {
		case apierrors.IsNotFound(err):
			in.say("%s already gone", r)
		case apierrors.IsConflict(err):
			// The uid differs: someone else made an object of that name since.
			in.say("%s kept: it is not the object init created", r)
		case err != nil:
			errs = append(errs, fmt.Errorf("deleting %s: %w", r, err))
		default:
			in.say("%s deleted", r)
		}
	}
	return errors.Join(errs...)
}

// WaitAPIServices waits until every APIService among refs is Available,
// printing the count as it moves; on timeout the error names each one not
// Available with its condition's reason and message.
func (in *Installer) WaitAPIServices(ctx context.Context, refs []Ref, timeout, interval time.Duration) error {
	var names []string
	for _, r := range refs {
		if r.Kind == "APIService" {
			names = append(names, r.Name)
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		return nil
	}
	lastReady := -1
	var notReady []string
	err := wait.PollUntilContextTimeout(ctx, interval, timeout, true, func(ctx context.Context) (bool, error) {
		notReady = notReady[:0]
		for _, name := range names {
			a, err := in.Aggregator.ApiregistrationV1().APIServices().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				notReady = append(notReady, fmt.Sprintf("%s (%v)", name, err))
				continue
			}
			if why, ok := available(a); !ok {
				notReady = append(notReady, name+" ("+why+")")
			}
		}
		if ready := len(names) - len(notReady); ready != lastReady {
			lastReady = ready
			fmt.Fprintf(in.Out, "waiting for the APIServices: %d/%d Available\n", ready, len(names))
		}
		return len(notReady) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("after %s, %d of %d APIServices are not Available (check the flotilla-apiserver pods in namespace %s: kubectl -n %s get pods,events):\n  %s",
			timeout, len(notReady), len(names), in.Namespace, in.Namespace, strings.Join(notReady, "\n  "))
	}
	return nil
}

// available returns whether a is Available, and why not.
func available(a *apiregv1.APIService) (string, bool) {
	for _, c := range a.Status.Conditions {
		if c.Type == apiregv1.Available {
			if c.Status == apiregv1.ConditionTrue {
				return "", true
			}
			return c.Reason + ": " + c.Message, false
		}
	}
	return "no Available condition yet", false
}
