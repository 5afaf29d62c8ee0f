package manager

import (
	"context"
	"fmt"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla-io/flotilla/controllers/agentregistration"
	"github.com/flotilla-io/flotilla/controllers/binding"
	"github.com/flotilla-io/flotilla/controllers/cluster"
	"github.com/flotilla-io/flotilla/controllers/clusterprofile"
	"github.com/flotilla-io/flotilla/controllers/clusterstatus"
	"github.com/flotilla-io/flotilla/controllers/clustertaintpolicy"
	"github.com/flotilla-io/flotilla/controllers/cronfederatedhpa"
	"github.com/flotilla-io/flotilla/controllers/dependencies"
	"github.com/flotilla-io/flotilla/controllers/deploymentreplicassyncer"
	"github.com/flotilla-io/flotilla/controllers/descheduler"
	"github.com/flotilla-io/flotilla/controllers/detector"
	"github.com/flotilla-io/flotilla/controllers/eviction"
	"github.com/flotilla-io/flotilla/controllers/execution"
	"github.com/flotilla-io/flotilla/controllers/federatedhpa"
	"github.com/flotilla-io/flotilla/controllers/federatedresourcequota"
	"github.com/flotilla-io/flotilla/controllers/hpascaletargetmarker"
	"github.com/flotilla-io/flotilla/controllers/mcs"
	"github.com/flotilla-io/flotilla/controllers/namespace"
	"github.com/flotilla-io/flotilla/controllers/placementdecision"
	"github.com/flotilla-io/flotilla/controllers/remedy"
	"github.com/flotilla-io/flotilla/controllers/rollout"
	"github.com/flotilla-io/flotilla/controllers/scheduler"
	"github.com/flotilla-io/flotilla/controllers/status"
	"github.com/flotilla-io/flotilla/controllers/unifiedauth"
	"github.com/flotilla-io/flotilla/controllers/workloadrebalancer"
	"github.com/flotilla-io/flotilla/interpreter"
	"github.com/flotilla-io/flotilla/inventory"
	"github.com/flotilla-io/flotilla/names"
	"github.com/flotilla-io/flotilla/overrides"
	"github.com/flotilla-io/flotilla/placement"
)

// writeWorkers is the number of workers of the controllers on the write
// path. Each write waits for an etcd commit (tens of milliseconds with
// fsync); etcd batches concurrent commits, so throughput comes from many
// writes in flight, not from CPU.
const writeWorkers = 32

// Controllers returns every controller by name. Each entry builds its
// controller from the Context and starts it.
func Controllers() map[string]InitFunc {
	return map[string]InitFunc{
		cluster.ControllerName:       startCluster,
		detector.ControllerName:      startDetector,
		scheduler.ControllerName:     startScheduler,
		binding.ControllerName:       startBinding,
		execution.ControllerName:     startExecution,
		status.ControllerName:        startStatus,
		namespace.ControllerName:     startNamespace,
		dependencies.ControllerName:  startDependencies,
		clusterstatus.ControllerName: startClusterStatus,
		unifiedauth.ControllerName:   startUnifiedAuth,

		federatedhpa.ControllerName:             startFederatedHPA,
		cronfederatedhpa.ControllerName:         startCronFederatedHPA,
		hpascaletargetmarker.ControllerName:     startHPAScaleTargetMarker,
		deploymentreplicassyncer.ControllerName: startDeploymentReplicasSyncer,

		federatedresourcequota.SyncControllerName:   startFederatedResourceQuotaSync,
		federatedresourcequota.StatusControllerName: startFederatedResourceQuotaStatus,

		names.AgentRegistrationController: startAgentRegistration,

		clustertaintpolicy.ControllerName: startClusterTaintPolicy,
		workloadrebalancer.ControllerName: startWorkloadRebalancer,
		remedy.ControllerName:             startRemedy,

		mcs.ServiceExportControllerName:       startServiceExport,
		mcs.ServiceImportControllerName:       startServiceImport,
		mcs.MultiClusterServiceControllerName: startMultiClusterService,

		eviction.TaintManagerName:        startTaintManager,
		eviction.GracefulEvictionName:    startGracefulEviction,
		eviction.ApplicationFailoverName: startApplicationFailover,

		descheduler.ControllerName: startDescheduler,

		rollout.ControllerName: startRollout,

		clusterprofile.ControllerName:    startClusterProfile,
		placementdecision.ControllerName: startPlacementDecision,
	}
}

// startClusterProfile publishes a ClusterProfile per Cluster in the
// inventory namespace, its access provider the control plane's cluster
// proxy.
func startClusterProfile(ctx context.Context, c *Context) error {
	access := inventory.Access{Server: c.Options.ClusterProfileServer, CAData: c.HostConfig.CAData}
	if access.Server == "" {
		access.Server = c.HostConfig.Host
	}
	if len(access.CAData) == 0 && c.HostConfig.CAFile != "" {
		ca, err := os.ReadFile(c.HostConfig.CAFile)
		if err != nil {
			return fmt.Errorf("reading the host's CA for the cluster profiles: %w", err)
		}
		access.CAData = ca
	}
	ctrl, err := clusterprofile.New(c.KarmadaInformers.Cluster().V1alpha1().Clusters(), c.HostDynamic, c.Host, c.Options.ClusterProfileNamespace, access)
	if err != nil {
		return err
	}
	go ctrl.Run(ctx, 2)
	return nil
}

// startPlacementDecision publishes each binding's chosen clusters as
// PlacementDecisions referring to the ClusterProfiles.
func startPlacementDecision(ctx context.Context, c *Context) error {
	work := c.KarmadaInformers.Work().V1alpha2()
	ctrl, err := placementdecision.New(work.ResourceBindings(), work.ClusterResourceBindings(), c.KarmadaInformers.Cluster().V1alpha1().Clusters(),
		c.HostDynamic, c.Host, c.Options.ClusterProfileNamespace)
	if err != nil {
		return err
	}
	go ctrl.Run(ctx, 2)
	return nil
}

// disabledByDefault are the controllers "*" leaves out: they run only
// when --controllers names them. The descheduler is one: Karmada's is a
// component of its own, installed only when asked for.
var disabledByDefault = map[string]bool{descheduler.ControllerName: true}

// startDescheduler takes the replicas their members cannot schedule off
// dynamically divided bindings, so the scheduler places them elsewhere.
func startDescheduler(ctx context.Context, c *Context) error {
	ctrl, err := descheduler.New(c.Options.Descheduler, c.KarmadaInformers.Work().V1alpha2().ResourceBindings(),
		c.KarmadaInformers.Cluster().V1alpha1().Clusters(), c.Karmada, c.Hub, c.Recorder)
	if err != nil {
		return err
	}
	go ctrl.Run(ctx, 4)
	return nil
}

// startMultiClusterService propagates the Services of CrossCluster
// MultiClusterServices to their providers and consumers, and gives the
// consumers the providers' endpoints (collected by serviceExport).
func startMultiClusterService(ctx context.Context, c *Context) error {
	ctrl, err := mcs.NewService(c.KarmadaInformers.Networking().V1alpha1().MultiClusterServices(), c.KarmadaInformers.Work().V1alpha1().Works(),
		c.KarmadaInformers.Work().V1alpha2().ResourceBindings(), c.KarmadaInformers.Cluster().V1alpha1().Clusters(),
		c.HostInformers.Core().V1().Services(), c.Karmada, c.Host, c.Recorder)
	if err != nil {
		return err
	}
	go ctrl.Run(ctx, 2)
	return nil
}

// startServiceExport collects the members' EndpointSlices of the Services
// their ServiceExports export, or provide to a MultiClusterService,
// reading the members through the hub, and keeps the exported ones'
// copies on the host.
func startServiceExport(ctx context.Context, c *Context) error {
	ctrl, err := mcs.NewExport(c.Hub, c.KarmadaInformers.Work().V1alpha1().Works(), c.KarmadaInformers.Cluster().V1alpha1().Clusters(),
		c.KarmadaInformers.Networking().V1alpha1().MultiClusterServices(), c.Karmada, c.Host, c.Members, c.Recorder)
	if err != nil {
		return err
	}
	go ctrl.Run(ctx, 4)
	return nil
}

// startServiceImport gives the members importing a service with a
// ServiceImport its derived Service and the collected EndpointSlices.
func startServiceImport(ctx context.Context, c *Context) error {
	ctrl, err := mcs.NewImport(c.Hub, c.KarmadaInformers.Work().V1alpha1().Works(), c.KarmadaInformers.Cluster().V1alpha1().Clusters(),
		c.Karmada, c.Members, c.Recorder)
	if err != nil {
		return err
	}
	go ctrl.Run(ctx, 4)
	return nil
}

// startTaintManager evicts bindings from clusters with NoExecute taints
// they do not tolerate, when --enable-no-execute-taint-eviction is set.
func startTaintManager(ctx context.Context, c *Context) error {
	if !c.Options.EnableNoExecuteTaintEviction {
		return nil
	}
	w := c.KarmadaInformers.Work().V1alpha2()
	opts := c.Options.Taints
	opts.GracefulEvictionTimeout = c.Options.GracefulEvictionTimeout
	ctrl, err := eviction.NewTaintManager(w.ResourceBindings(), w.ClusterResourceBindings(), c.KarmadaInformers.Cluster().V1alpha1().Clusters(),
		c.Karmada, c.Recorder, opts)
	if err != nil {
		return err
	}
	go ctrl.Run(ctx, 4)
	return nil
}

// startGracefulEviction ends GracefulEvictionTasks once the workload is
// healthy elsewhere or their grace period is over.
func startGracefulEviction(ctx context.Context, c *Context) error {
	w := c.KarmadaInformers.Work().V1alpha2()
	ctrl, err := eviction.NewGracefulEviction(w.ResourceBindings(), w.ClusterResourceBindings(), c.Karmada, c.Recorder, c.Options.GracefulEvictionTimeout)
	if err != nil {
		return err
	}
	go ctrl.Run(ctx, 4)
	return nil
}

// startApplicationFailover evicts bindings from the clusters where their
// workload has been unhealthy longer than their policy's
// failover.application tolerates.
func startApplicationFailover(ctx context.Context, c *Context) error {
	w := c.KarmadaInformers.Work().V1alpha2()
	ctrl, err := eviction.NewApplicationFailover(w.ResourceBindings(), w.ClusterResourceBindings(), c.Karmada, c.Recorder, c.Options.GracefulEvictionTimeout)
	if err != nil {
		return err
	}
	go ctrl.Run(ctx, 4)
	return nil
}

// startWorkloadRebalancer reschedules the workloads WorkloadRebalancers name.
func startWorkloadRebalancer(ctx context.Context, c *Context) error {
	ctrl, err := workloadrebalancer.New(c.KarmadaInformers.Apps().V1alpha1().WorkloadRebalancers(), c.Karmada)
	if err != nil {
		return err
	}
	go ctrl.Run(ctx, 1)
	return nil
}

// startRemedy writes clusters' remedyActions as Remedies say.
func startRemedy(ctx context.Context, c *Context) error {
	ctrl, err := remedy.New(c.KarmadaInformers.Cluster().V1alpha1().Clusters(),
		c.KarmadaInformers.Remedy().V1alpha1().Remedies(), c.Karmada)
	if err != nil {
		return err
	}
	go ctrl.Run(ctx, 1)
	return nil
}

// startClusterTaintPolicy taints clusters as ClusterTaintPolicies say.
func startClusterTaintPolicy(ctx context.Context, c *Context) error {
	ctrl, err := clustertaintpolicy.New(c.KarmadaInformers.Cluster().V1alpha1().Clusters(),
		c.KarmadaInformers.Policy().V1alpha1().ClusterTaintPolicies(), c.Karmada, c.Recorder)
	if err != nil {
		return err
	}
	go ctrl.Run(ctx, 1)
	return nil
}

// startAgentRegistration decides on the certificate requests of
// flotilla-agents (Pull mode) on the host.
func startAgentRegistration(ctx context.Context, c *Context) error {
	ctrl, err := agentregistration.New(c.HostInformers.Certificates().V1().CertificateSigningRequests(),
		c.KarmadaInformers.Cluster().V1alpha1().Clusters(), c.Host, c.Karmada)
	if err != nil {
		return err
	}
	ctrl.MaxPerToken = c.Options.MaxClustersPerToken
	// One worker: the count of a token's registrations is read, then grows.
	go ctrl.Run(ctx, 1)
	return nil
}

func startCluster(ctx context.Context, c *Context) error {
	ctrl, err := cluster.New(c.KarmadaInformers.Cluster().V1alpha1().Clusters(), c.Karmada, c.Host, unifiedauth.Cleanup(c.Members), c.Recorder)
	if err != nil {
		return err
	}
	go ctrl.Run(ctx, 2)
	leases := c.HostInformers.Coordination().V1().Leases()
	go ctrl.NewMonitor(leases.Lister(), c.Options.ClusterMonitorGracePeriod).Run(ctx, 5*time.Second)
	return nil
}

func startClusterStatus(ctx context.Context, c *Context) error {
	ctrl, err := clusterstatus.New(c.KarmadaInformers.Cluster().V1alpha1().Clusters(), c.Karmada, c.Host, c.Members, c.Hub, clusterstatus.Options{
		Interval: c.Options.ClusterStatusUpdateFrequency, FailureThreshold: c.Options.ClusterFailureThreshold, Workers: 4,
		CacheSyncTimeout: c.Options.ClusterCacheSyncTimeout,
		LeaseDuration:    c.Options.ClusterMonitorGracePeriod,
	})
	if err != nil {
		return err
	}
	go ctrl.Run(ctx)
	return nil
}

func startUnifiedAuth(ctx context.Context, c *Context) error {
	rbac := c.HostInformers.Rbac().V1()
	ctrl, err := unifiedauth.New(c.KarmadaInformers.Cluster().V1alpha1().Clusters(), rbac.ClusterRoles(), rbac.ClusterRoleBindings(),
		c.KarmadaInformers.Work().V1alpha1().Works(), c.Karmada, c.Recorder)
	if err != nil {
		return err
	}
	go ctrl.Run(ctx, 2)
	return nil
}

func startDetector(ctx context.Context, c *Context) error {
	p, w := c.KarmadaInformers.Policy().V1alpha1(), c.KarmadaInformers.Work().V1alpha2()
	ctrl, err := detector.New(c.Templates, p.PropagationPolicies(), p.ClusterPropagationPolicies(), p.OverridePolicies(),
		w.ResourceBindings(), w.ClusterResourceBindings(), c.HostInformers.Scheduling().V1().PriorityClasses(), c.Karmada,
		interpreter.QuotaScoped{Interpreter: c.Interpreter, Enabled: c.Options.ResourceQuotaEstimate}, c.Recorder)
	if err != nil {
		return err
	}
	ctrl.MultiplePodTemplates = c.Options.MultiplePodTemplatesScheduling
	c.Customizations.AddChangeHandler(ctrl.InterpreterChanged)
	go ctrl.Run(ctx, writeWorkers)
	return nil
}

func startBinding(ctx context.Context, c *Context) error {
	p, w := c.KarmadaInformers.Policy().V1alpha1(), c.KarmadaInformers.Work()
	ctrl, err := binding.New(c.Templates, w.V1alpha2().ResourceBindings(), w.V1alpha2().ClusterResourceBindings(), w.V1alpha1().Works(),
		c.KarmadaInformers.Cluster().V1alpha1().Clusters(), p.ClusterOverridePolicies(), p.OverridePolicies(),
		c.KarmadaInformers.Flotilla().V1alpha1().ResourceRevisions(),
		c.Karmada, c.Interpreter, overrides.Apply, placement.DivideCompletions, c.Recorder)
	if err != nil {
		return err
	}
	c.Customizations.AddChangeHandler(ctrl.InterpreterChanged)
	go ctrl.Run(ctx, writeWorkers)
	return nil
}

// startRollout rolls the template changes of policies naming a
// RolloutStrategy out stage by stage.
func startRollout(ctx context.Context, c *Context) error {
	p, w, f := c.KarmadaInformers.Policy().V1alpha1(), c.KarmadaInformers.Work(), c.KarmadaInformers.Flotilla().V1alpha1()
	ctrl, err := rollout.New(c.Templates, w.V1alpha2().ResourceBindings(), w.V1alpha2().ClusterResourceBindings(), w.V1alpha1().Works(),
		c.KarmadaInformers.Cluster().V1alpha1().Clusters(), p.PropagationPolicies(), p.ClusterPropagationPolicies(),
		f.RolloutStrategies(), f.ResourceRevisions(), f.RolloutRuns(), c.Karmada, c.Recorder)
	if err != nil {
		return err
	}
	go ctrl.Run(ctx, 4)
	return nil
}

func startNamespace(ctx context.Context, c *Context) error {
	ctrl, err := namespace.New(c.HostInformers.Core().V1().Namespaces(), c.KarmadaInformers.Cluster().V1alpha1().Clusters(),
		c.KarmadaInformers.Work().V1alpha1().Works(), c.KarmadaInformers.Policy().V1alpha1().ClusterOverridePolicies(),
		c.Karmada, namespace.ApplyClusterOverrides, c.Options.SkippedPropagatingNamespaces)
	if err != nil {
		return err
	}
	go ctrl.Run(ctx, 2)
	return nil
}

func startDependencies(ctx context.Context, c *Context) error {
	ctrl, err := dependencies.New(c.Templates, c.KarmadaInformers.Work().V1alpha2().ResourceBindings(), c.Karmada, c.Interpreter, c.Recorder)
	if err != nil {
		return err
	}
	go ctrl.Run(ctx, 2)
	return nil
}

func startScheduler(ctx context.Context, c *Context) error {
	w := c.KarmadaInformers.Work().V1alpha2()
	// The accurate estimator reads the members' nodes, pods and quotas
	// from the member hub, and takes what the scheduler assumes there.
	ctrl, err := scheduler.New(w.ResourceBindings(), w.ClusterResourceBindings(), c.KarmadaInformers.Cluster().V1alpha1().Clusters(),
		c.KarmadaInformers.Policy().V1alpha1().FederatedResourceQuotas(), c.Karmada, c.Recorder, c.Hub.MaxReplicasAssuming)
	if err != nil {
		return err
	}
	ctrl.SetAssumptionTTL(c.Options.AssumptionTTL)
	ctrl.SetHealthInterpreted(func(gvk schema.GroupVersionKind) bool {
		return c.Interpreter.HookEnabled(gvk, interpreter.InterpretHealth)
	})
	go ctrl.Run(ctx, writeWorkers/2)
	return nil
}

func startExecution(ctx context.Context, c *Context) error {
	ctrl, err := execution.New(c.KarmadaInformers.Work().V1alpha1().Works(), c.KarmadaInformers.Cluster().V1alpha1().Clusters(),
		c.Karmada, c.Members, c.Hub, c.Interpreter, c.Recorder, execution.Options{Workers: writeWorkers / 2})
	if err != nil {
		return err
	}
	go ctrl.Run(ctx)
	return nil
}

func startStatus(ctx context.Context, c *Context) error {
	w := c.KarmadaInformers.Work()
	ctrl, err := status.New(w.V1alpha1().Works(), c.KarmadaInformers.Cluster().V1alpha1().Clusters(), w.V1alpha2().ResourceBindings(), w.V1alpha2().ClusterResourceBindings(),
		c.Karmada, c.HostDynamic, c.HostMapper, c.Interpreter, c.Recorder)
	if err != nil {
		return err
	}
	ctrl.SetTemplateCache(c.Templates)
	go ctrl.Run(ctx, writeWorkers/2)
	return nil
}

// startFederatedHPA reads member pods from the member hub.
func startFederatedHPA(ctx context.Context, c *Context) error {
	source, err := federatedhpa.NewMetricsSource(c.HostConfig, c.HostMapper)
	if err != nil {
		return err
	}
	ctrl, err := federatedhpa.New(c.Options.HPA, c.KarmadaInformers.Autoscaling().V1alpha1().FederatedHPAs(),
		c.KarmadaInformers.Work().V1alpha2().ResourceBindings(), c.Karmada, c.HostScales, c.HostMapper, c.Hub, source, c.Recorder)
	if err != nil {
		return err
	}
	go ctrl.Run(ctx, 4)
	return nil
}

func startCronFederatedHPA(ctx context.Context, c *Context) error {
	ctrl, err := cronfederatedhpa.New(c.KarmadaInformers.Autoscaling().V1alpha1().CronFederatedHPAs(), c.Karmada,
		c.HostScales, c.HostMapper, c.Recorder, time.Now)
	if err != nil {
		return err
	}
	go ctrl.Run(ctx, 4)
	return nil
}

// startHPAScaleTargetMarker marks the templates member HPAs scale, so
// members keep the replicas their HPAs set.
func startHPAScaleTargetMarker(ctx context.Context, c *Context) error {
	ctrl, err := hpascaletargetmarker.New(c.HostInformers.Autoscaling().V2().HorizontalPodAutoscalers(), c.HostDynamic, c.HostMapper)
	if err != nil {
		return err
	}
	go ctrl.Run(ctx, 1)
	return nil
}

// startDeploymentReplicasSyncer writes the members' summed replicas back
// into marked Deployment templates.
func startDeploymentReplicasSyncer(ctx context.Context, c *Context) error {
	ctrl, err := deploymentreplicassyncer.New(c.Host, c.KarmadaInformers.Work().V1alpha2().ResourceBindings())
	if err != nil {
		return err
	}
	go ctrl.Run(ctx, 1)
	return nil
}

// startFederatedResourceQuotaSync delivers the static assignments of
// FederatedResourceQuotas to their clusters as ResourceQuota Works.
func startFederatedResourceQuotaSync(ctx context.Context, c *Context) error {
	ctrl, err := federatedresourcequota.NewSync(c.KarmadaInformers.Policy().V1alpha1().FederatedResourceQuotas(),
		c.KarmadaInformers.Work().V1alpha1().Works(), c.KarmadaInformers.Cluster().V1alpha1().Clusters(), c.Karmada, c.Recorder)
	if err != nil {
		return err
	}
	go ctrl.Run(ctx, 2)
	return nil
}

// startFederatedResourceQuotaStatus collects the member ResourceQuotas'
// status, and what the bindings use, into their FederatedResourceQuotas.
func startFederatedResourceQuotaStatus(ctx context.Context, c *Context) error {
	ctrl, err := federatedresourcequota.NewStatus(c.KarmadaInformers.Policy().V1alpha1().FederatedResourceQuotas(),
		c.KarmadaInformers.Work().V1alpha1().Works(), c.KarmadaInformers.Work().V1alpha2().ResourceBindings(), c.Karmada, c.Recorder)
	if err != nil {
		return err
	}
	go ctrl.Run(ctx, 2)
	return nil
}
