package explainapi

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
	flotillavalidation "github.com/flotilla-io/flotilla/apis/flotilla/validation"
	"github.com/flotilla-io/flotilla/apis/policy/mutation"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	policyvalidation "github.com/flotilla-io/flotilla/apis/policy/validation"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/names"
	"github.com/flotilla-io/flotilla/overrides"
	"github.com/flotilla-io/flotilla/placement"
	"github.com/flotilla-io/flotilla/selectors"
)

// MaxReviewedExisting bounds the existing templates one review lists.
const MaxReviewedExisting = 1000

// ReviewConfig is what dry-run placement needs: the same inputs the
// detector, scheduler and binding controller read, as this replica holds
// them.
type ReviewConfig struct {
	// Clusters lists every Cluster.
	Clusters func() ([]*clusterv1alpha1.Cluster, error)
	// Estimate is the accurate estimator; nil: the resource summaries.
	Estimate Estimator
	// Workload is how the interpreter reads the templates of a kind for
	// their bindings (as the detector asks it).
	Workload func(gvk schema.GroupVersionKind) selectors.Workload
	// Policies lists the control plane's PropagationPolicies and
	// ClusterPropagationPolicies.
	Policies func(ctx context.Context) (pps, cpps []*selectors.Policy, err error)
	// Overrides lists the control plane's ClusterOverridePolicies and
	// OverridePolicies.
	Overrides func(ctx context.Context) ([]*policyv1alpha1.ClusterOverridePolicy, []*policyv1alpha1.OverridePolicy, error)
	// Binding returns the spec and status of a template's binding (by the
	// binding's namespace and name); ok is false when there is none.
	Binding func(ctx context.Context, namespace, name string) (spec *workv1alpha2.ResourceBindingSpec, status *workv1alpha2.ResourceBindingStatus, ok bool, err error)
	// NamespaceBindings lists the ResourceBindings of a namespace (the
	// peers of a workload affinity group, the use of its quotas).
	NamespaceBindings func(ctx context.Context, namespace string) ([]*workv1alpha2.ResourceBinding, error)
	// Quotas are the overall limits of a namespace's
	// FederatedResourceQuotas, by name.
	Quotas func(ctx context.Context, namespace string) (map[string]corev1.ResourceList, error)
	// Templates reaches the templates on the host.
	Templates Templates
	// Authorizer says whether the caller may list a kind's templates
	// (nil: everyone may).
	Authorizer authorizer.Authorizer
}

// Templates reaches the resource templates where they are stored.
type Templates interface {
	// Mapping is how a kind is served; a kind not served is a NoMatch
	// error.
	Mapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error)
	// DryRunApply answers what applying obj would make of it, writing
	// nothing (defaults set, merged with the object it would update).
	DryRunApply(ctx context.Context, m *meta.RESTMapping, obj *unstructured.Unstructured) (*unstructured.Unstructured, error)
	// List calls each for the templates of a kind in namespace (all when
	// empty), a page at a time, until each returns false.
	List(ctx context.Context, m *meta.RESTMapping, namespace string, each func(*unstructured.Unstructured) bool) error
}

// ReviewREST creates PlacementReviews: it answers and stores nothing.
type ReviewREST struct{ cfg ReviewConfig }

var (
	_ rest.Creater                  = &ReviewREST{}
	_ rest.Scoper                   = &ReviewREST{}
	_ rest.SingularNameProvider     = &ReviewREST{}
	_ rest.GroupVersionKindProvider = &ReviewREST{}
)

// NewReviewREST returns the placementreviews storage.
func NewReviewREST(cfg ReviewConfig) *ReviewREST { return &ReviewREST{cfg: cfg} }

// New returns an empty PlacementReview.
func (r *ReviewREST) New() runtime.Object { return &flotillav1alpha1.PlacementReview{} }

// Destroy releases nothing.
func (r *ReviewREST) Destroy() {}

// NamespaceScoped is false: a review names the namespaces of its objects.
func (r *ReviewREST) NamespaceScoped() bool { return false }

// GetSingularName is the resource's singular name.
func (r *ReviewREST) GetSingularName() string { return "placementreview" }

// GroupVersionKind is PlacementReview's.
func (r *ReviewREST) GroupVersionKind(schema.GroupVersion) schema.GroupVersionKind {
	return flotillav1alpha1.SchemeGroupVersion.WithKind(flotillav1alpha1.PlacementReviewKind)
}

// Create reviews the placement of the review's manifests and returns the
// review with its status.
func (r *ReviewREST) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, _ *metav1.CreateOptions) (runtime.Object, error) {
	rev, ok := obj.(*flotillav1alpha1.PlacementReview)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a PlacementReview: %T", obj))
	}
	if errs := flotillavalidation.ValidatePlacementReview(rev); len(errs) > 0 {
		return nil, apierrors.NewInvalid(flotillav1alpha1.SchemeGroupVersion.WithKind(flotillav1alpha1.PlacementReviewKind).GroupKind(), rev.Name, errs)
	}
	if createValidation != nil {
		if err := createValidation(ctx, obj.DeepCopyObject()); err != nil {
			return nil, err
		}
	}
	in, errs := r.parse(rev)
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(flotillav1alpha1.SchemeGroupVersion.WithKind(flotillav1alpha1.PlacementReviewKind).GroupKind(), rev.Name, errs)
	}
	status, err := r.review(ctx, in, rev.Spec.Existing != flotillav1alpha1.ReviewExistingIgnore)
	if err != nil {
		return nil, err
	}
	out := rev.DeepCopy()
	out.Status = *status
	return out, nil
}

// manifests are a review's objects, sorted out.
type manifests struct {
	templates []manifestTemplate
	pps, cpps []*selectors.Policy
	cops      []*policyv1alpha1.ClusterOverridePolicy
	ops       []*policyv1alpha1.OverridePolicy
}

// manifestTemplate is a resource template of the manifests; mapping is nil
// when its kind is not served (invalid says why).
type manifestTemplate struct {
	obj     *unstructured.Unstructured
	mapping *meta.RESTMapping
	invalid string
}

// parse sorts the review's objects into templates and policies, the
// policies defaulted and validated as their registry would.
func (r *ReviewREST) parse(rev *flotillav1alpha1.PlacementReview) (*manifests, field.ErrorList) {
	var errs field.ErrorList
	in := &manifests{}
	for i, raw := range rev.Spec.Objects {
		p := field.NewPath("spec", "objects").Index(i)
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(raw.Raw); err != nil {
			errs = append(errs, field.Invalid(p, "", "not a Kubernetes object: "+err.Error()))
			continue
		}
		gvk := u.GroupVersionKind()
		if gvk.Group == policyv1alpha1.GroupName {
			errs = append(errs, in.addPolicy(u, gvk, p)...)
			continue
		}
		t := manifestTemplate{obj: u}
		m, err := r.cfg.Templates.Mapping(gvk)
		switch {
		case meta.IsNoMatchError(err):
			t.invalid = fmt.Sprintf("the control plane does not serve %s %s", gvk.GroupVersion(), gvk.Kind)
		case err != nil:
			t.invalid = err.Error()
		case m.Scope.Name() == meta.RESTScopeNameNamespace && u.GetNamespace() == "":
			errs = append(errs, field.Required(p.Child("metadata", "namespace"), "a namespaced object names its namespace"))
			continue
		case m.Scope.Name() != meta.RESTScopeNameNamespace && u.GetNamespace() != "":
			errs = append(errs, field.Invalid(p.Child("metadata", "namespace"), u.GetNamespace(), gvk.Kind+" is cluster-scoped"))
			continue
		default:
			t.mapping = m
		}
		in.templates = append(in.templates, t)
	}
	return in, errs
}

// addPolicy adds a policy of the manifests, defaulted and validated.
func (in *manifests) addPolicy(u *unstructured.Unstructured, gvk schema.GroupVersionKind, p *field.Path) field.ErrorList {
	under := func(errs field.ErrorList) field.ErrorList {
		for _, e := range errs {
			e.Field = p.String() + "." + e.Field
		}
		return errs
	}
	decode := func(into any) field.ErrorList {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, into, true); err != nil {
			return field.ErrorList{field.Invalid(p, gvk.Kind, err.Error())}
		}
		return nil
	}
	needNamespace := func() field.ErrorList {
		if u.GetNamespace() == "" {
			return field.ErrorList{field.Required(p.Child("metadata", "namespace"), "a namespaced object names its namespace")}
		}
		return nil
	}
	switch gvk.Kind {
	case "PropagationPolicy":
		pp := &policyv1alpha1.PropagationPolicy{}
		if errs := append(needNamespace(), decode(pp)...); len(errs) > 0 {
			return errs
		}
		mutation.MutatePropagationPolicy(pp, true)
		if errs := policyvalidation.ValidatePropagationPolicy(pp); len(errs) > 0 {
			return under(errs)
		}
		in.pps = append(in.pps, selectors.FromPP(pp))
	case "ClusterPropagationPolicy":
		cpp := &policyv1alpha1.ClusterPropagationPolicy{}
		if errs := decode(cpp); len(errs) > 0 {
			return errs
		}
		mutation.MutateClusterPropagationPolicy(cpp, true)
		if errs := policyvalidation.ValidateClusterPropagationPolicy(cpp); len(errs) > 0 {
			return under(errs)
		}
		in.cpps = append(in.cpps, selectors.FromCPP(cpp))
	case "OverridePolicy":
		op := &policyv1alpha1.OverridePolicy{}
		if errs := append(needNamespace(), decode(op)...); len(errs) > 0 {
			return errs
		}
		mutation.MutateOverridePolicy(op)
		if errs := policyvalidation.ValidateOverridePolicy(op); len(errs) > 0 {
			return under(errs)
		}
		in.ops = append(in.ops, op)
	case "ClusterOverridePolicy":
		cop := &policyv1alpha1.ClusterOverridePolicy{}
		if errs := decode(cop); len(errs) > 0 {
			return errs
		}
		if errs := policyvalidation.ValidateClusterOverridePolicy(cop); len(errs) > 0 {
			return under(errs)
		}
		in.cops = append(in.cops, cop)
	default:
		return field.ErrorList{field.NotSupported(p.Child("kind"), gvk.Kind,
			[]string{"PropagationPolicy", "ClusterPropagationPolicy", "OverridePolicy", "ClusterOverridePolicy"})}
	}
	return nil
}

// reviewer holds what one review decides from.
type reviewer struct {
	*ReviewREST
	clusters  []*clusterv1alpha1.Cluster
	pps, cpps []*selectors.Policy
	cops      []*policyv1alpha1.ClusterOverridePolicy
	ops       []*policyv1alpha1.OverridePolicy
	// placed is what the templates reviewed so far would use, by
	// namespace and binding name: applied together, they share their
	// namespace's quotas.
	placed map[string]map[string]corev1.ResourceList
	// byName are the clusters by name.
	byName map[string]*clusterv1alpha1.Cluster
	// bindings and quotas are each namespace's, listed once per review.
	bindings map[string][]*workv1alpha2.ResourceBinding
	quotas   map[string]map[string]corev1.ResourceList
}

// review answers the review of in; existing adds the control plane's
// policies, override policies and templates.
func (r *ReviewREST) review(ctx context.Context, in *manifests, existing bool) (*flotillav1alpha1.PlacementReviewStatus, error) {
	clusters, err := r.cfg.Clusters()
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	clusters = slices.Clone(clusters)
	slices.SortFunc(clusters, func(a, b *clusterv1alpha1.Cluster) int { return cmp.Compare(a.Name, b.Name) })
	rv := &reviewer{ReviewREST: r, clusters: clusters, pps: in.pps, cpps: in.cpps, cops: in.cops, ops: in.ops,
		placed: map[string]map[string]corev1.ResourceList{}, byName: map[string]*clusterv1alpha1.Cluster{},
		bindings: map[string][]*workv1alpha2.ResourceBinding{}, quotas: map[string]map[string]corev1.ResourceList{}}
	for _, c := range clusters {
		rv.byName[c.Name] = c
	}
	if existing {
		if err := rv.addExisting(ctx); err != nil {
			return nil, err
		}
	}
	status := &flotillav1alpha1.PlacementReviewStatus{Estimator: flotillav1alpha1.EstimatorResourceSummary}
	if r.cfg.Estimate != nil {
		status.Estimator = flotillav1alpha1.EstimatorAccurate
	}
	seen := map[string]bool{}
	for _, t := range in.templates {
		seen[templateKey(t.obj)] = true
		status.Templates = append(status.Templates, rv.manifestTemplate(ctx, t))
	}
	if !existing {
		return status, nil
	}
	err = rv.claimedExisting(ctx, in, func(obj *unstructured.Unstructured, m *meta.RESTMapping) {
		if seen[templateKey(obj)] {
			return
		}
		seen[templateKey(obj)] = true
		if len(status.Templates)-len(in.templates) >= MaxReviewedExisting {
			status.Omitted++
			return
		}
		tp := rv.place(ctx, obj, m)
		tp.Existing = true
		status.Templates = append(status.Templates, tp)
	})
	return status, err
}

// addExisting adds the control plane's policies and override policies to
// those of the manifests, which replace the existing ones of their names.
func (rv *reviewer) addExisting(ctx context.Context) error {
	pps, cpps, err := rv.cfg.Policies(ctx)
	if err != nil {
		return err
	}
	cops, ops, err := rv.cfg.Overrides(ctx)
	if err != nil {
		return err
	}
	rv.pps = merge(rv.pps, pps, (*selectors.Policy).Key)
	rv.cpps = merge(rv.cpps, cpps, (*selectors.Policy).Key)
	rv.cops = merge(rv.cops, cops, func(p *policyv1alpha1.ClusterOverridePolicy) string { return p.Name })
	rv.ops = merge(rv.ops, ops, func(p *policyv1alpha1.OverridePolicy) string { return p.Namespace + "/" + p.Name })
	return nil
}

// merge is mine followed by the existing objects none of mine replaces.
func merge[T any](mine, existing []T, key func(T) string) []T {
	have := map[string]bool{}
	for _, o := range mine {
		have[key(o)] = true
	}
	for _, o := range existing {
		if !have[key(o)] {
			mine = append(mine, o)
		}
	}
	return mine
}

// manifestTemplate reviews a template of the manifests, as applying it
// would make it.
func (rv *reviewer) manifestTemplate(ctx context.Context, t manifestTemplate) flotillav1alpha1.TemplatePlacement {
	if t.mapping == nil {
		tp := templatePlacement(t.obj)
		tp.Result, tp.Message = flotillav1alpha1.ReviewInvalid, t.invalid
		return tp
	}
	obj, err := rv.cfg.Templates.DryRunApply(ctx, t.mapping, t.obj)
	switch {
	case apierrors.IsNotFound(err):
		// Its namespace does not exist yet (the manifests may create it):
		// the template as written.
		obj = t.obj
	case err != nil:
		tp := templatePlacement(t.obj)
		tp.Result, tp.Message = flotillav1alpha1.ReviewInvalid, "applying it would fail: "+err.Error()
		return tp
	}
	return rv.place(ctx, obj, t.mapping)
}

// claimedExisting calls each for the existing templates a policy of the
// manifests would claim, of the kinds and namespaces its resource
// selectors name and the caller may list.
func (rv *reviewer) claimedExisting(ctx context.Context, in *manifests, each func(*unstructured.Unstructured, *meta.RESTMapping)) error {
	mine := map[string]bool{}
	for _, p := range slices.Concat(in.pps, in.cpps) {
		mine[p.Key()] = true
	}
	listed := map[string]bool{}
	for _, p := range slices.Concat(in.pps, in.cpps) {
		for _, sel := range p.Spec.ResourceSelectors {
			m, err := rv.cfg.Templates.Mapping(schema.FromAPIVersionAndKind(sel.APIVersion, sel.Kind))
			if err != nil {
				continue // a kind not served has no templates
			}
			ns := sel.Namespace
			if !p.Cluster {
				ns = p.Namespace
			}
			if m.Scope.Name() != meta.RESTScopeNameNamespace {
				ns = ""
			}
			key := m.Resource.String() + "|" + ns
			if listed[key] || !rv.mayList(ctx, m.Resource, ns) {
				continue
			}
			listed[key] = true
			err = rv.cfg.Templates.List(ctx, m, ns, func(obj *unstructured.Unstructured) bool {
				if never(obj) != "" {
					return true
				}
				chosen, ok := selectors.ChoosePolicy(rv.pps, rv.cpps, obj, rv.current(obj))
				if ok && mine[chosen.Key()] {
					each(obj, m)
				}
				return ctx.Err() == nil
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// mayList tells whether the caller may list resource in namespace (all
// namespaces when empty).
func (rv *reviewer) mayList(ctx context.Context, resource schema.GroupVersionResource, namespace string) bool {
	if rv.cfg.Authorizer == nil {
		return true
	}
	u, ok := genericapirequest.UserFrom(ctx)
	if !ok {
		return false
	}
	d, _, err := rv.cfg.Authorizer.Authorize(ctx, authorizer.AttributesRecord{User: u, Verb: "list", APIGroup: resource.Group,
		APIVersion: resource.Version, Resource: resource.Resource, Namespace: namespace, ResourceRequest: true})
	return err == nil && d == authorizer.DecisionAllow
}

// never says why a template is never propagated, or "".
func never(obj *unstructured.Unstructured) string {
	ns := obj.GetNamespace()
	switch {
	case ns != "" && names.ReservedNamespace(ns), ns == "" && obj.GetKind() == "Namespace" && names.ReservedNamespace(obj.GetName()):
		return "templates of namespace " + cmp.Or(ns, obj.GetName()) + " are never propagated"
	case obj.GetLabels()[workv1alpha2.ResourceTemplateClaimedByLabel] != "":
		return "the template is claimed by " + obj.GetLabels()[workv1alpha2.ResourceTemplateClaimedByLabel]
	}
	return ""
}

// current is the policy of the review that claims obj now, as its claim
// labels say.
func (rv *reviewer) current(obj *unstructured.Unstructured) *selectors.Policy {
	cl, ok := selectors.ClaimOf(obj.GetLabels(), obj.GetAnnotations())
	if !ok {
		return nil
	}
	ps := rv.pps
	if cl.Cluster {
		ps = rv.cpps
	}
	for _, p := range ps {
		if p.Key() == cl.Key() && p.ID == cl.ID {
			return p
		}
	}
	return nil
}

// place reviews one template: the policy that would claim it, the binding
// spec it would make, the scheduler's decision and the overrides of each
// chosen cluster.
func (rv *reviewer) place(ctx context.Context, obj *unstructured.Unstructured, m *meta.RESTMapping) flotillav1alpha1.TemplatePlacement {
	tp := templatePlacement(obj)
	if why := never(obj); why != "" {
		tp.Result, tp.Message = flotillav1alpha1.ReviewNoPolicy, why
		return tp
	}
	p, ok := selectors.ChoosePolicy(rv.pps, rv.cpps, obj, rv.current(obj))
	if !ok {
		tp.Result, tp.Message = flotillav1alpha1.ReviewNoPolicy, "no PropagationPolicy or ClusterPropagationPolicy selects the template: it would not be propagated"
		return tp
	}
	tp.Policy = policyName(p)
	ns, binding := obj.GetNamespace(), names.BindingName(obj.GetKind(), obj.GetName())
	spec, status, found, err := rv.cfg.Binding(ctx, ns, binding)
	if err != nil {
		tp.Result, tp.Message = flotillav1alpha1.ReviewInvalid, "reading its binding: "+err.Error()
		return tp
	}
	var existing *workv1alpha2.ResourceBindingSpec
	if found && spec.Resource.UID == obj.GetUID() {
		existing = spec
	} else {
		status = &workv1alpha2.ResourceBindingStatus{}
	}
	w := rv.cfg.Workload(m.GroupVersionKind)
	want, err := selectors.BindingSpec(obj, p, existing, w)
	if err != nil {
		tp.Result, tp.Message = flotillav1alpha1.ReviewInvalid, err.Error()
		return tp
	}
	if want.Components == nil && w.Replicas != nil {
		tp.Replicas = &want.Replicas
	}
	if existing != nil {
		want.Clusters = existing.Clusters
	}
	in := placement.Input{Spec: want, Status: status, Clusters: rv.clusters, Estimate: estimator(rv.cfg.Estimate, want)}
	var peers []*workv1alpha2.ResourceBinding
	if ns != "" {
		if peers, err = rv.namespaceBindings(ctx, ns); err != nil {
			tp.Result, tp.Message = flotillav1alpha1.ReviewInvalid, "listing the bindings of its namespace: "+err.Error()
			return tp
		}
	}
	if g := want.WorkloadAffinityGroups; g != nil {
		in.Affinity, in.AntiAffinity = placement.Peers(binding, g, slices.Values(peers))
	}
	dec, err := placement.Schedule(in)
	if err == nil {
		err = rv.checkQuotas(ctx, ns, binding, want, dec.Clusters, peers)
	}
	if err != nil {
		tp.Result, tp.Message = flotillav1alpha1.ReviewUnschedulable, err.Error()
		return tp
	}
	if ns != "" {
		if rv.placed[ns] == nil {
			rv.placed[ns] = map[string]corev1.ResourceList{}
		}
		rv.placed[ns][binding] = placement.BindingUsage(want, dec.Clusters)
	}
	tp.Result = flotillav1alpha1.ReviewPlaced
	for _, target := range dec.Clusters {
		rc := flotillav1alpha1.ReviewedCluster{Name: target.Name}
		if tp.Replicas != nil {
			rc.Replicas = &target.Replicas
		}
		if c := rv.byName[target.Name]; c != nil {
			annos, err := overrides.Apply(obj.DeepCopy(), c, rv.cops, rv.ops)
			if err != nil {
				tp.Result, tp.Message = flotillav1alpha1.ReviewInvalid, fmt.Sprintf("overriding it for cluster %s: %v", c.Name, err)
				return tp
			}
			rc.Overrides = appliedOverrides(annos, obj.GetNamespace())
		}
		tp.Clusters = append(tp.Clusters, rc)
	}
	return tp
}

// namespaceBindings are the ResourceBindings of ns, listed once per review.
func (rv *reviewer) namespaceBindings(ctx context.Context, ns string) ([]*workv1alpha2.ResourceBinding, error) {
	if list, ok := rv.bindings[ns]; ok {
		return list, nil
	}
	list, err := rv.cfg.NamespaceBindings(ctx, ns)
	if err == nil {
		rv.bindings[ns] = list
	}
	return list, err
}

// checkQuotas is the scheduler's quota check (placement.CheckQuotas) of
// binding ns/name placed on clusters, the namespace's other bindings being
// those of the control plane and the templates reviewed before it.
func (rv *reviewer) checkQuotas(ctx context.Context, ns, name string, spec *workv1alpha2.ResourceBindingSpec, clusters []workv1alpha2.TargetCluster,
	bindings []*workv1alpha2.ResourceBinding) error {
	if ns == "" {
		return nil
	}
	overalls, listed := rv.quotas[ns]
	if !listed {
		var err error
		if overalls, err = rv.cfg.Quotas(ctx, ns); err != nil {
			return err
		}
		rv.quotas[ns] = overalls
	}
	return placement.CheckQuotas(ns, spec, clusters, overalls, func() (corev1.ResourceList, error) {
		var used []corev1.ResourceList
		for _, b := range bindings {
			if _, reviewed := rv.placed[ns][b.Name]; !reviewed && b.Name != name {
				used = append(used, placement.BindingUsage(&b.Spec, b.Spec.Clusters))
			}
		}
		for n, u := range rv.placed[ns] {
			if n != name {
				used = append(used, u)
			}
		}
		return placement.Add(used...), nil
	})
}

// estimator asks e for the binding's namespace (or its requirements').
func estimator(e Estimator, spec *workv1alpha2.ResourceBindingSpec) placement.Estimator {
	if e == nil {
		return nil
	}
	ns := spec.Resource.Namespace
	return func(c *clusterv1alpha1.Cluster, req *workv1alpha2.ReplicaRequirements) (int64, bool) {
		in := ns
		if req != nil && req.Namespace != "" {
			in = req.Namespace
		}
		return e(c.Name, in, req)
	}
}

// appliedOverrides names the override policies the applied-overrides
// annotations of a template of namespace record, cluster ones first, each
// once, in order.
func appliedOverrides(annos map[string]string, namespace string) []string {
	var out []string
	for _, k := range []struct{ anno, kind string }{
		{policyv1alpha1.AppliedClusterOverridesAnnotation, "ClusterOverridePolicy "},
		{policyv1alpha1.AppliedOverridesAnnotation, "OverridePolicy " + namespace + "/"},
	} {
		var shadows []overrides.OverridePolicyShadow
		if err := json.Unmarshal([]byte(annos[k.anno]), &shadows); err != nil && annos[k.anno] != "" {
			continue
		}
		for _, s := range shadows {
			name := k.kind + s.PolicyName
			if !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	return out
}

// policyName names a policy as a review says it.
func policyName(p *selectors.Policy) string {
	if p.Cluster {
		return "ClusterPropagationPolicy " + p.Name
	}
	return "PropagationPolicy " + p.Namespace + "/" + p.Name
}

// templatePlacement is the identity of obj's review entry.
func templatePlacement(obj *unstructured.Unstructured) flotillav1alpha1.TemplatePlacement {
	return flotillav1alpha1.TemplatePlacement{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// templateKey identifies a template among the review's.
func templateKey(obj *unstructured.Unstructured) string {
	return obj.GroupVersionKind().GroupKind().String() + "|" + obj.GetNamespace() + "|" + obj.GetName()
}
