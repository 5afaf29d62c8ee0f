package manager

import (
	"context"
	"reflect"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"

	"github.com/flotilla-io/flotilla/controllers/detector"
)

// coldInformers is how many of the controllers' informers the last
// takeover had to start (list) itself: the standby keeps the others
// synced while it waits for the lease (warm). A figure above 0 means
// warmInformers misses a kind some controller reads.
var coldInformers = metrics.NewGauge(&metrics.GaugeOpts{
	Namespace: "flotilla", Subsystem: "controllers", Name: "cold_informers",
	Help:           "Informers of the controllers that the last takeover of the lease had to start and list itself: those the standby did not keep synced while it waited.",
	StabilityLevel: metrics.ALPHA,
})

// warmInformersStarted is how many informers the standby had kept synced
// for the last takeover.
var warmInformersStarted = metrics.NewGauge(&metrics.GaugeOpts{
	Namespace: "flotilla", Subsystem: "controllers", Name: "warm_informers",
	Help:           "Informers of the controllers that this replica kept synced while it waited for the lease, as of its last takeover (0: it has not led).",
	StabilityLevel: metrics.ALPHA,
})

func init() { legacyregistry.MustRegister(coldInformers, warmInformersStarted) }

// warmInformers are the informers the controllers read, besides Clusters
// (the process's, run by their owner) and the templates (whose kinds the
// detector chooses from the policies): a replica waiting for the lease
// runs them, so that a takeover finds their caches full and the
// controllers' handlers, registered at the takeover, are replayed from
// memory instead of a list of every object.
func warmInformers(c *Context) []cache.SharedIndexInformer {
	k, h := c.KarmadaInformers, c.HostInformers
	policy, work, flotilla := k.Policy().V1alpha1(), k.Work(), k.Flotilla().V1alpha1()
	return []cache.SharedIndexInformer{
		work.V1alpha2().ResourceBindings().Informer(),
		work.V1alpha2().ClusterResourceBindings().Informer(),
		work.V1alpha1().Works().Informer(),
		policy.PropagationPolicies().Informer(),
		policy.ClusterPropagationPolicies().Informer(),
		policy.OverridePolicies().Informer(),
		policy.ClusterOverridePolicies().Informer(),
		policy.FederatedResourceQuotas().Informer(),
		policy.ClusterTaintPolicies().Informer(),
		flotilla.ResourceRevisions().Informer(),
		flotilla.RolloutStrategies().Informer(),
		flotilla.RolloutRuns().Informer(),
		k.Autoscaling().V1alpha1().FederatedHPAs().Informer(),
		k.Autoscaling().V1alpha1().CronFederatedHPAs().Informer(),
		k.Apps().V1alpha1().WorkloadRebalancers().Informer(),
		k.Networking().V1alpha1().MultiClusterServices().Informer(),
		k.Remedy().V1alpha1().Remedies().Informer(),

		h.Core().V1().Namespaces().Informer(),
		h.Core().V1().Services().Informer(),
		h.Scheduling().V1().PriorityClasses().Informer(),
		h.Certificates().V1().CertificateSigningRequests().Informer(),
		h.Coordination().V1().Leases().Informer(),
		h.Autoscaling().V2().HorizontalPodAutoscalers().Informer(),
		h.Rbac().V1().ClusterRoles().Informer(),
		h.Rbac().V1().ClusterRoleBindings().Informer(),
	}
}

// templatesEvery is how often a standby brings the template informers it
// keeps warm up to the policies and bindings (besides at once when a
// policy is made or changed).
const templatesEvery = 30 * time.Second

// warm starts the informers of warmInformers under ctx (the process's,
// not a lease's: they outlive a lost lease, as the process does) and,
// once they have synced and until took is closed (the takeover), the
// informers of the templates the policies and bindings name, as the
// detector would (detector.WantedKinds). It returns the kinds of the
// factories' informers started, for coldAtTakeover.
func warm(ctx context.Context, c *Context, took <-chan struct{}) map[reflect.Type]bool {
	start := time.Now()
	infs := warmInformers(c)
	c.KarmadaInformers.Start(ctx.Done())
	c.HostInformers.Start(ctx.Done())
	go func() {
		log := klog.FromContext(ctx)
		synced := make([]cache.InformerSynced, len(infs))
		for i, inf := range infs {
			synced[i] = inf.HasSynced
		}
		if !cache.WaitForCacheSync(ctx.Done(), synced...) {
			return
		}
		log.Info("The controllers' informers are synced while this replica waits for the lease", "informers", len(infs), "took", time.Since(start))
		p, w := c.KarmadaInformers.Policy().V1alpha1(), c.KarmadaInformers.Work().V1alpha2()
		// A policy made or changed may name a new kind: look again at once.
		kick := make(chan struct{}, 1)
		poke := func(any) {
			select {
			case kick <- struct{}{}:
			default:
			}
		}
		onPolicy := cache.ResourceEventHandlerFuncs{AddFunc: poke, UpdateFunc: func(_, o any) { poke(o) }}
		for _, inf := range []cache.SharedIndexInformer{p.PropagationPolicies().Informer(), p.ClusterPropagationPolicies().Informer()} {
			if _, err := inf.AddEventHandler(onPolicy); err != nil {
				log.Error(err, "Watching the policies for the template kinds to keep warm")
			}
		}
		tick := time.NewTicker(templatesEvery)
		defer tick.Stop()
		for {
			want, err := detector.WantedKinds(p.PropagationPolicies().Lister(), p.ClusterPropagationPolicies().Lister(),
				w.ResourceBindings().Lister(), w.ClusterResourceBindings().Lister())
			if err == nil {
				c.warmTemplates(ctx, took, want)
			}
			select {
			case <-ctx.Done():
				return
			case <-took:
				return
			case <-tick.C:
			case <-kick:
			}
		}
	}()
	return startedKinds(c)
}

// warmTemplates has the template informers of want run (under ctx), unless
// the takeover has begun: then the detector chooses them.
func (c *Context) warmTemplates(ctx context.Context, took <-chan struct{}, want map[schema.GroupVersionKind]bool) {
	c.warmMu.Lock()
	defer c.warmMu.Unlock()
	select {
	case <-took:
		return
	default:
	}
	if missing := c.Templates.Ensure(ctx, want); len(missing) > 0 {
		klog.FromContext(ctx).V(2).Info("Kinds not served by the host yet", "kinds", missing)
	}
}

// tookOver closes took, once no warmTemplates runs.
func (c *Context) tookOver(took chan struct{}) {
	c.warmMu.Lock()
	defer c.warmMu.Unlock()
	close(took)
}

// startedKinds are the kinds of the informers the controllers' factories
// have started.
func startedKinds(c *Context) map[reflect.Type]bool {
	done := make(chan struct{})
	close(done) // nothing is waited for: only the kinds are wanted
	out := map[reflect.Type]bool{}
	for t := range c.KarmadaInformers.WaitForCacheSync(done) {
		out[t] = true
	}
	for t := range c.HostInformers.WaitForCacheSync(done) {
		out[t] = true
	}
	return out
}

// coldAtTakeover, called once the controllers have started, reports the
// informers they started that warm had not (and sets coldInformers).
func coldAtTakeover(ctx context.Context, c *Context, warmed map[reflect.Type]bool, took time.Duration) {
	var cold []string
	for t := range startedKinds(c) {
		if !warmed[t] {
			cold = append(cold, t.String())
		}
	}
	sort.Strings(cold)
	coldInformers.Set(float64(len(cold)))
	warmInformersStarted.Set(float64(len(warmed)))
	log := klog.FromContext(ctx)
	log.Info("Started the controllers", "took", took, "warmInformers", len(warmed), "coldInformers", len(cold))
	if len(cold) > 0 {
		log.Info("Some informers of the controllers were not kept warm while this replica waited for the lease", "kinds", cold)
	}
}
