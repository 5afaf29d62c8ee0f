package assumed

import (
	"encoding/json"
	"hash/fnv"
	"maps"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/estimator"
)

// DefaultTTL is how long an assumption is kept at most, the time Karmada's
// scheduler keeps its own: long enough for a workload's pods to be
// created and bound in a member that is not starved, short enough that a
// workload that never makes pods (a custom kind whose pods never appear, a
// Work that cannot be applied, pods the member refuses) does not hold room
// for long.
const DefaultTTL = 5 * time.Minute

// Cache is the scheduler's assumptions, per binding and cluster. A binding
// is known by its key (names.BindingKey); a workload's replicas on a
// cluster are counted per component (single-template workloads have one,
// named ""), each with its requests per replica. It is safe for concurrent
// use. A nil *Cache assumes nothing.
type Cache struct {
	ttl time.Duration
	now func() time.Time

	mu       sync.Mutex
	bindings map[string]*binding
	// clusters are the sums of the entries of each cluster, kept up to
	// date with every change, so that For does not walk the entries.
	clusters map[string]*totals
	// next is the earliest expiry of an entry; zero when there is none.
	next time.Time
	// seq counts the changes of bindings, to tell whether one changed.
	seq uint64
}

// New returns an empty Cache whose assumptions expire ttl after they were
// last added to; now is its clock (nil: time.Now).
func New(ttl time.Duration, now func() time.Time) *Cache {
	if now == nil {
		now = time.Now
	}
	return &Cache{ttl: ttl, now: now, bindings: map[string]*binding{}, clusters: map[string]*totals{}}
}

// binding is what is assumed of one binding.
type binding struct {
	// namespace is where its replicas run ("" for a cluster-scoped
	// binding); their quotas are that namespace's.
	namespace string
	// components: the workload is described by spec.components.
	components bool
	// version is the resourceVersion the scheduler's last write of the
	// binding replaced: an observation of that version is older than the
	// write, and says nothing of it.
	version  string
	clusters map[string]*entry
	// seq is the Cache's seq at the binding's last change.
	seq uint64
}

// clone is a deep copy of b (nil for nil).
func (b *binding) clone() *binding {
	if b == nil {
		return nil
	}
	out := *b
	out.clusters = make(map[string]*entry, len(b.clusters))
	for cluster, e := range b.clusters {
		ce := *e
		ce.parts = make(map[string]*part, len(e.parts))
		for name, p := range e.parts {
			cp := *p // shapes are replaced, never changed
			ce.parts[name] = &cp
		}
		out.clusters[cluster] = &ce
	}
	return &out
}

// entry is what is assumed of one binding on one cluster.
type entry struct {
	parts   map[string]*part
	expires time.Time
	// seen is the fingerprint of the binding's collected status for the
	// cluster when replicas were last added: a release needs a status
	// collected since.
	seen uint64
}

// part is one component of a workload on one cluster.
type part struct {
	// assumed are the replicas whose pods are not taken to exist yet;
	// assigned is what the cluster was last seen assigned.
	assumed, assigned int64
	shape
}

// shape is what one replica takes.
type shape struct {
	priorityClass string
	// requests are in the units of estimator.Value.
	requests []quantity
}

// quantity is an amount of one resource. Workloads request few resources:
// a short list is cheaper than a map to add up.
type quantity struct {
	name  corev1.ResourceName
	value int64
}

// totals are the sums of one cluster's entries.
type totals struct {
	nodes amount
	// quota are those of the entries of each namespace, by the replicas'
	// priority class.
	quota map[string]map[string]*amount
	// nodesView and quotaView are nodes and quota as For returns them,
	// made when first asked for after a change: the estimates of every
	// binding share them until the next change.
	nodesView *estimator.Usage
	quotaView map[string]map[string]estimator.Usage
}

// amount is a number of pods and what they request.
type amount struct {
	pods     int64
	requests []quantity
}

// add adds sign times n replicas of s.
func (a *amount) add(n, sign int64, s shape) {
	a.pods += sign * n
	for _, r := range s.requests {
		i := slices.IndexFunc(a.requests, func(q quantity) bool { return q.name == r.name })
		if i < 0 {
			a.requests = append(a.requests, quantity{name: r.name})
			i = len(a.requests) - 1
		}
		if a.requests[i].value += sign * n * r.value; a.requests[i].value == 0 {
			a.requests = slices.Delete(a.requests, i, i+1)
		}
	}
}

func (a *amount) zero() bool { return a.pods == 0 && len(a.requests) == 0 }

func (a *amount) usage() estimator.Usage {
	requests := make(map[corev1.ResourceName]int64, len(a.requests))
	for _, q := range a.requests {
		requests[q.name] = q.value
	}
	return estimator.UsageOf(a.pods, requests)
}

// Assume records a scheduling result written for the binding of key: what
// result adds on each cluster over spec.clusters (the result it replaced),
// per component, is assumed; a cluster the result no longer assigns, or
// assigns fewer replicas, releases what was assumed there (the fewer
// replicas are taken from the assumed ones first: the pods that do not
// exist yet are those the member will not create). version is the
// resourceVersion the write replaced; status is the binding's status
// before it, whose collected status of each cluster a release must differ
// from. Every cluster added to expires the Cache's ttl from now.
//
// The scheduler may assume a result before it writes it, so that no other
// decision is made between its estimate and the assumption; undo takes
// the assumption back when the write fails: it restores what was assumed
// of the binding before, unless the binding's assumptions have changed
// since (observed, forgotten, expired), when it leaves them as they are.
func (c *Cache) Assume(key, version string, spec *workv1alpha2.ResourceBindingSpec, status *workv1alpha2.ResourceBindingStatus, result []workv1alpha2.TargetCluster) (undo func()) {
	if c == nil {
		return func() {}
	}
	components := len(spec.Components) > 0
	shapes := shapesOf(spec)
	before, after := replicas(spec.Clusters, components), replicas(result, components)
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expire(now)
	b := c.bindings[key]
	if (b == nil && !adds(before, after)) || maps.EqualFunc(before, after, maps.Equal) {
		// Nothing assumed and nothing to assume, or the result is the
		// one the binding holds: what is assumed stays as it is.
		return func() {}
	}
	was := b.clone()
	if b == nil {
		b = &binding{clusters: map[string]*entry{}}
	}
	b.namespace, b.components, b.version = spec.Resource.Namespace, components, version
	for cluster := range b.clusters {
		if _, ok := after[cluster]; !ok {
			c.remove(b, cluster)
		}
	}
	for cluster, parts := range after {
		e := b.clusters[cluster]
		if e == nil {
			e = &entry{parts: map[string]*part{}}
		} else {
			c.account(cluster, b, e, -1)
		}
		for name := range e.parts {
			if _, ok := parts[name]; !ok {
				delete(e.parts, name) // a component the workload no longer has
			}
		}
		added := false
		for name, n := range parts {
			p := e.parts[name]
			if p == nil {
				p = &part{}
				e.parts[name] = p
			}
			p.shape = shapes[name]
			if old := before[cluster][name]; n > old {
				p.assumed += n - old
				added = true
			} else {
				p.assumed = max(p.assumed-(old-n), 0)
			}
			p.assigned = n
		}
		if added {
			e.expires = now.Add(c.ttl)
			e.seen = fingerprint(statusOf(status.AggregatedStatus, cluster))
			if c.next.IsZero() || e.expires.Before(c.next) {
				c.next = e.expires
			}
		}
		c.put(b, cluster, e)
	}
	c.changed(b)
	c.keep(key, b)
	left, seq := c.bindings[key], b.seq
	return func() { c.restore(key, left, seq, was) }
}

// restore puts back what was assumed of the binding of key (was) when the
// Cache still holds what Assume left (left, at seq).
func (c *Cache) restore(key string, left *binding, seq uint64, was *binding) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cur := c.bindings[key]
	if cur != left || (cur != nil && cur.seq != seq) {
		return
	}
	if cur != nil {
		c.forget(key, cur)
	}
	if was == nil {
		return
	}
	for cluster, e := range was.clusters {
		c.account(cluster, was, e, 1)
		if c.next.IsZero() || e.expires.Before(c.next) {
			c.next = e.expires
		}
	}
	c.changed(was)
	c.bindings[key] = was
}

// changed marks b as changed.
func (c *Cache) changed(b *binding) {
	c.seq++
	b.seq = c.seq
}

// Observed is what Observe reads of a binding: its resourceVersion, the
// clusters it is assigned and their collected status.
type Observed struct {
	Version  string
	Clusters []workv1alpha2.TargetCluster
	Status   []workv1alpha2.AggregatedStatusItem
	// HealthUninterpreted: the binding's kind has no health
	// interpretation, so its objects count Healthy whatever runs (as in
	// Karmada's work status): its health shows no pods.
	HealthUninterpreted bool
}

// Observe brings the assumptions of the binding of key in line with the
// binding as read reads it now (ok false: it is gone, and everything
// assumed of it is released). read is called only when something is
// assumed of the binding, with the Cache locked, so that a write recorded
// by Assume is never undone by an older read: the caller reads the
// binding from a cache no older than the one its writes were decided on.
// A read of the version the last write replaced changes nothing.
//
// A cluster the binding is no longer assigned releases what was assumed
// there; fewer replicas release that many (taken from the assumed ones
// first). A cluster whose collected status has changed since the
// assumption and shows the workload's pods releases it: the status is
// Healthy (Karmada's signal: the workload's pods run), or, for a
// single-template workload, its status reports as many replicas as the
// cluster is assigned (Deployments, ReplicaSets and StatefulSets count
// their created pods in status.replicas). The collected status is chosen
// over the member's pods because it is kind-independent and names the
// workload: the members' pods do not say which binding they belong to. A
// kind whose pods never appear reports neither (it has no health
// interpretation, its status has no replicas) and keeps its assumption
// until it expires (its Health, Healthy as for any kind without a health
// interpretation, is not taken for a sign: Observed.HealthUninterpreted).
func (c *Cache) Observe(key string, read func() (Observed, bool)) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.bindings[key]
	if b == nil {
		return
	}
	o, ok := read()
	if !ok {
		c.forget(key, b)
		return
	}
	if o.Version == b.version {
		return
	}
	assigned := replicas(o.Clusters, b.components)
	for cluster, e := range b.clusters {
		parts, ok := assigned[cluster]
		if !ok {
			c.remove(b, cluster)
			continue
		}
		if s := statusOf(o.Status, cluster); s != nil && fingerprint(s) != e.seen && released(s, b.components, parts, !o.HealthUninterpreted) {
			c.remove(b, cluster)
			continue
		}
		c.account(cluster, b, e, -1)
		for name, p := range e.parts {
			n := parts[name]
			if n < p.assigned {
				p.assumed = max(p.assumed-(p.assigned-n), 0)
			}
			p.assigned = n
		}
		c.put(b, cluster, e)
	}
	c.changed(b)
	c.keep(key, b)
}

// Forget releases everything assumed of the binding of key (it was
// deleted).
func (c *Cache) Forget(key string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if b := c.bindings[key]; b != nil {
		c.forget(key, b)
	}
}

// For returns what is assumed on cluster, for an estimate of replicas of
// namespace: every binding's on the nodes, the namespace's for its quotas.
// The binding of except is left out: the replicas a binding holds on a
// cluster are added back to what the cluster can run for that binding
// anyway (they may run there already), its assumption with them. Expired
// assumptions are dropped first. What For returns may be shared with other
// callers until the next change: read it, never change it.
func (c *Cache) For(cluster, namespace, except string) estimator.Assumed {
	if c == nil {
		return estimator.Assumed{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expire(c.now())
	t := c.clusters[cluster]
	if t == nil {
		return estimator.Assumed{}
	}
	var own *entry
	var ownNamespace string
	if b := c.bindings[except]; b != nil {
		own, ownNamespace = b.clusters[cluster], b.namespace
	}
	if own == nil {
		return t.view(namespace)
	}
	nodes := amount{pods: t.nodes.pods, requests: slices.Clone(t.nodes.requests)}
	quota := map[string]*amount{}
	for class, a := range t.quota[namespace] {
		quota[class] = &amount{pods: a.pods, requests: slices.Clone(a.requests)}
	}
	for _, p := range own.parts {
		nodes.add(p.assumed, -1, p.shape)
		if ownNamespace == namespace {
			if a := quota[p.priorityClass]; a != nil {
				if a.add(p.assumed, -1, p.shape); a.zero() {
					delete(quota, p.priorityClass)
				}
			}
		}
	}
	return assumedOf(&nodes, quota)
}

// Len returns the number of clusters some binding has assumptions on,
// counted once per binding.
func (c *Cache) Len() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, b := range c.bindings {
		n += len(b.clusters)
	}
	return n
}

// view is what is assumed on the cluster for an estimate in namespace
// (shared: read-only).
func (t *totals) view(namespace string) estimator.Assumed {
	if t.nodesView == nil {
		u := t.nodes.usage()
		t.nodesView = &u
	}
	out := estimator.Assumed{Nodes: *t.nodesView}
	quota, ok := t.quota[namespace]
	if !ok {
		return out
	}
	if out.Quota = t.quotaView[namespace]; out.Quota == nil {
		out.Quota = quotaOf(quota)
		if t.quotaView == nil {
			t.quotaView = map[string]map[string]estimator.Usage{}
		}
		t.quotaView[namespace] = out.Quota
	}
	return out
}

func assumedOf(nodes *amount, quota map[string]*amount) estimator.Assumed {
	var out estimator.Assumed
	if !nodes.zero() {
		out.Nodes = nodes.usage()
	}
	out.Quota = quotaOf(quota)
	return out
}

// quotaOf is quota as estimator.Assumed holds it (nil when empty).
func quotaOf(quota map[string]*amount) map[string]estimator.Usage {
	var out map[string]estimator.Usage
	for class, a := range quota {
		if a.zero() {
			continue
		}
		if out == nil {
			out = make(map[string]estimator.Usage, len(quota))
		}
		out[class] = a.usage()
	}
	return out
}

// put stores e as the binding's entry on cluster and adds it to the
// cluster's totals, or drops it when nothing is assumed in it any more.
// The caller has taken e out of the totals (or e is new).
func (c *Cache) put(b *binding, cluster string, e *entry) {
	for name, p := range e.parts {
		if p.assumed == 0 {
			delete(e.parts, name)
		}
	}
	if len(e.parts) == 0 {
		delete(b.clusters, cluster)
		return
	}
	b.clusters[cluster] = e
	c.account(cluster, b, e, 1)
}

// remove drops the binding's entry on cluster.
func (c *Cache) remove(b *binding, cluster string) {
	if e := b.clusters[cluster]; e != nil {
		c.account(cluster, b, e, -1)
		delete(b.clusters, cluster)
	}
}

// keep stores b under key, or drops it when nothing is assumed of it.
func (c *Cache) keep(key string, b *binding) {
	if len(b.clusters) == 0 {
		delete(c.bindings, key)
		return
	}
	c.bindings[key] = b
}

func (c *Cache) forget(key string, b *binding) {
	for cluster := range b.clusters {
		c.remove(b, cluster)
	}
	delete(c.bindings, key)
}

// account adds (sign 1) or takes away (-1) the entry's replicas to or from
// the cluster's totals.
func (c *Cache) account(cluster string, b *binding, e *entry, sign int64) {
	t := c.clusters[cluster]
	if t == nil {
		t = &totals{quota: map[string]map[string]*amount{}}
		c.clusters[cluster] = t
	}
	t.nodesView = nil
	delete(t.quotaView, b.namespace)
	for _, p := range e.parts {
		t.nodes.add(p.assumed, sign, p.shape)
		if b.namespace == "" {
			continue
		}
		byClass := t.quota[b.namespace]
		if byClass == nil {
			byClass = map[string]*amount{}
			t.quota[b.namespace] = byClass
		}
		a := byClass[p.priorityClass]
		if a == nil {
			a = &amount{}
			byClass[p.priorityClass] = a
		}
		if a.add(p.assumed, sign, p.shape); a.zero() {
			delete(byClass, p.priorityClass)
		}
		if len(byClass) == 0 {
			delete(t.quota, b.namespace)
		}
	}
	if t.nodes.zero() && len(t.quota) == 0 {
		delete(c.clusters, cluster)
	}
}

// expire drops the entries whose time has come, when one has.
func (c *Cache) expire(now time.Time) {
	if c.next.IsZero() || now.Before(c.next) {
		return
	}
	c.next = time.Time{}
	for key, b := range c.bindings {
		for cluster, e := range b.clusters {
			if !now.Before(e.expires) {
				c.remove(b, cluster)
				c.changed(b)
				continue
			}
			if c.next.IsZero() || e.expires.Before(c.next) {
				c.next = e.expires
			}
		}
		c.keep(key, b)
	}
}

// shapesOf returns what one replica of each component takes.
func shapesOf(spec *workv1alpha2.ResourceBindingSpec) map[string]shape {
	if len(spec.Components) == 0 {
		var s shape
		if r := spec.ReplicaRequirements; r != nil {
			s = shapeOf(r.PriorityClassName, r.ResourceRequest)
		}
		return map[string]shape{"": s}
	}
	out := make(map[string]shape, len(spec.Components))
	for _, comp := range spec.Components {
		var s shape
		if r := comp.ReplicaRequirements; r != nil {
			s = shapeOf(r.PriorityClassName, r.ResourceRequest)
		}
		out[comp.Name] = s
	}
	return out
}

func shapeOf(priorityClass string, request corev1.ResourceList) shape {
	s := shape{priorityClass: priorityClass}
	for name, q := range request {
		if v := estimator.Value(name, q); v > 0 {
			s.requests = append(s.requests, quantity{name: name, value: v})
		}
	}
	return s
}

// replicas maps each cluster of a result to its replicas per component
// (single-template workloads: "").
func replicas(clusters []workv1alpha2.TargetCluster, components bool) map[string]map[string]int64 {
	out := make(map[string]map[string]int64, len(clusters))
	for _, tc := range clusters {
		parts := map[string]int64{}
		if components {
			for _, comp := range tc.Components {
				parts[comp.Name] += int64(max(comp.Replicas, 0))
			}
		} else {
			parts[""] = int64(max(tc.Replicas, 0))
		}
		out[tc.Name] = parts
	}
	return out
}

// adds tells whether after assigns some cluster more replicas of some
// component than before.
func adds(before, after map[string]map[string]int64) bool {
	for cluster, parts := range after {
		for name, n := range parts {
			if n > before[cluster][name] {
				return true
			}
		}
	}
	return false
}

func statusOf(items []workv1alpha2.AggregatedStatusItem, cluster string) *workv1alpha2.AggregatedStatusItem {
	for i := range items {
		if items[i].ClusterName == cluster {
			return &items[i]
		}
	}
	return nil
}

// fingerprint identifies a collected status (0: none).
func fingerprint(s *workv1alpha2.AggregatedStatusItem) uint64 {
	if s == nil {
		return 0
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(s.Health))
	_, _ = h.Write([]byte{0})
	if s.Status != nil {
		_, _ = h.Write(s.Status.Raw)
	}
	return h.Sum64()
}

// released tells whether a collected status shows the pods of what the
// cluster is assigned (parts).
func released(s *workv1alpha2.AggregatedStatusItem, components bool, parts map[string]int64, health bool) bool {
	if health && s.Health == workv1alpha2.ResourceHealthy {
		return true
	}
	if components || s.Status == nil || parts[""] == 0 {
		return false
	}
	var reported struct {
		Replicas *int64 `json:"replicas"`
	}
	if err := json.Unmarshal(s.Status.Raw, &reported); err != nil || reported.Replicas == nil {
		return false
	}
	return *reported.Replicas >= parts[""]
}
