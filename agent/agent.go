package agent

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	"github.com/flotilla-io/flotilla/apis/generated/informers/externalversions"
	"github.com/flotilla-io/flotilla/controllers/clusterstatus"
	"github.com/flotilla-io/flotilla/controllers/execution"
	"github.com/flotilla-io/flotilla/interpreter/informed"
	"github.com/flotilla-io/flotilla/member"
	"github.com/flotilla-io/flotilla/names"
	"github.com/flotilla-io/flotilla/telemetry"
	"github.com/flotilla-io/flotilla/tunnel"
)

// Config is what the agent runs with.
type Config struct {
	Options *Options
	// ControlPlane reaches the host API server (and through it
	// flotilla-apiserver) with the agent's identity.
	ControlPlane *rest.Config
	// Member reaches the member cluster.
	Member *rest.Config

	// rotation renews ControlPlane's client certificate; nil without one
	// (see newCertRotation).
	rotation *certRotation
}

// Config builds the configuration from the options. When the control-plane
// kubeconfig holds the agent's client certificate, ControlPlane reads it
// from the certificate directory (--cert-dir), where Run renews it before it
// expires (see rotation.go).
func (o *Options) Config() (*Config, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	cp, err := clientcmd.BuildConfigFromFlags("", o.ControlPlaneKubeconfig)
	if err != nil {
		return nil, fmt.Errorf("control-plane kubeconfig: %w", err)
	}
	var member *rest.Config
	if o.MemberKubeconfig == "" {
		member, err = rest.InClusterConfig()
	} else {
		member, err = clientcmd.BuildConfigFromFlags("", o.MemberKubeconfig)
	}
	if err != nil {
		return nil, fmt.Errorf("member kubeconfig: %w", err)
	}
	rotation, cp, err := newCertRotation(o, cp)
	if err != nil {
		return nil, err
	}
	cp.QPS, cp.Burst = 100, 200
	member.QPS, member.Burst = 200, 400
	return &Config{Options: o, ControlPlane: cp, Member: member, rotation: rotation}, nil
}

// Run runs the agent until ctx ends: with leader election in the member,
// only the elected replica works.
func (c *Config) Run(ctx context.Context) error {
	local, err := member.NewClient(c.Member)
	if err != nil {
		return err
	}
	// Every replica serves its metrics, elected or not.
	if _, err := telemetry.Serve(ctx, c.Options.MetricsBindAddress); err != nil {
		return err
	}
	// Every replica renews its certificate, elected or not, so that a
	// replica taking over holds a valid one.
	if c.rotation != nil {
		if err := c.rotation.start(ctx, local.Clientset); err != nil {
			return err
		}
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, syscall.SIGUSR1)
		defer signal.Stop(sigs)
		go c.rotation.renewOnSignal(ctx, sigs)
	}
	if !c.Options.LeaderElect {
		return c.work(ctx, local)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: c.Options.LeaderElectNamespace}}
	if _, err := local.Clientset.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the leader election namespace in the member: %w", err)
	}
	host, _ := os.Hostname()
	id := fmt.Sprintf("%s_%d", host, os.Getpid())
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, c.Options.LeaderElectNamespace, "flotilla-agent-"+c.Options.ClusterName,
		local.Clientset.CoreV1(), local.Clientset.CoordinationV1(), resourcelock.ResourceLockConfig{Identity: id})
	if err != nil {
		return err
	}
	var workErr error
	leaderelection.RunOrDie(ctx, leaderelection.LeaderElectionConfig{
		Lock: lock, ReleaseOnCancel: true,
		LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) { workErr = c.work(ctx, local) },
			OnStoppedLeading: func() { klog.FromContext(ctx).Info("Not the active agent", "identity", id) },
		},
	})
	return workErr
}

// work runs the agent's controllers until ctx ends.
func (c *Config) work(ctx context.Context, local *member.Client) error {
	log := klog.FromContext(ctx)
	name := c.Options.ClusterName
	karmada, err := versioned.NewForConfig(c.ControlPlane)
	if err != nil {
		return err
	}
	host, err := kubernetes.NewForConfig(c.ControlPlane)
	if err != nil {
		return err
	}
	if err := ensureCluster(ctx, karmada, local.Clientset, name, c.Options.ClusterAPIEndpoint); err != nil {
		return err
	}
	members := member.NewCache(nil)
	members.Pin(name, local)

	// Only the agent's own Cluster and execution namespace are watched:
	// its identity may read nothing else.
	own := externalversions.NewSharedInformerFactoryWithOptions(karmada, 0,
		externalversions.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", name).String()
		}))
	es := externalversions.NewSharedInformerFactoryWithOptions(karmada, 0, externalversions.WithNamespace(names.ExecutionNamespace(name)))
	config := externalversions.NewSharedInformerFactory(karmada, 0)
	_, interp, interpSynced, err := informed.New(config, nil)
	if err != nil {
		return err
	}
	recorder, stop, err := newRecorder(host, name)
	if err != nil {
		return err
	}
	defer stop()

	clusters := own.Cluster().V1alpha1().Clusters()
	// The member hub of the agent's one member: its pods and nodes for
	// the status summaries, the objects execution applied.
	hub := member.NewHub(func() ([]*clusterv1alpha1.Cluster, error) { return clusters.Lister().List(labels.Everything()) }, members.Get)
	if err := hub.TriggerOn(clusters.Informer()); err != nil {
		return err
	}
	exec, err := execution.New(es.Work().V1alpha1().Works(), clusters, karmada, members, hub, interp, recorder,
		execution.Options{Workers: c.Options.Workers, Agent: name})
	if err != nil {
		return err
	}
	status, err := clusterstatus.New(clusters, karmada, host, members, hub, clusterstatus.Options{
		Interval: c.Options.ClusterStatusUpdateFrequency, LeaseDuration: c.Options.ClusterLeaseDuration,
		FailureThreshold: 3 * c.Options.ClusterStatusUpdateFrequency, Workers: 1, Agent: name,
		CacheSyncTimeout: c.Options.ClusterCacheSyncTimeout,
	})
	if err != nil {
		return err
	}
	config.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), interpSynced...) {
		return ctx.Err()
	}
	own.Start(ctx.Done())
	es.Start(ctx.Done())
	go hub.Run(ctx)
	go status.Run(ctx)
	go exec.Run(ctx)
	// The tunnel: the control plane reaches the member through it
	// (clusters/{name}/proxy, search, metrics) without a route to it.
	go func() {
		if err := tunnel.RunAgent(ctx, c.ControlPlane, name, c.Member); err != nil {
			log.Error(err, "The tunnel to the control plane cannot run")
		}
	}()
	log.Info("Agent running", "cluster", name, "executionNamespace", names.ExecutionNamespace(name))
	<-ctx.Done()
	return nil
}

// ensureCluster makes sure the agent's Cluster exists, in Pull mode. With
// registration the control plane created it (an agent may not create
// Clusters); an agent with broader rights creates it itself, with endpoint
// as its apiEndpoint. An agent never changes the apiEndpoint of a
// registered Cluster: the control plane refuses it, since where a cluster
// is reached is a control-plane admin's decision.
func ensureCluster(ctx context.Context, karmada versioned.Interface, member kubernetes.Interface, name, endpoint string) error {
	cur, err := karmada.ClusterV1alpha1().Clusters().Get(ctx, name, metav1.GetOptions{})
	if err == nil {
		if endpoint != "" && cur.Spec.APIEndpoint != endpoint {
			klog.FromContext(ctx).Info("The Cluster's apiEndpoint differs from --cluster-api-endpoint; an agent may not change it, a control-plane admin may",
				"cluster", name, "apiEndpoint", cur.Spec.APIEndpoint, "clusterAPIEndpoint", endpoint)
		}
		return nil
	}
	if !apierrors.IsNotFound(err) {
		return err
	}
	id := ""
	if ns, err := member.CoreV1().Namespaces().Get(ctx, metav1.NamespaceSystem, metav1.GetOptions{}); err == nil {
		id = string(ns.UID)
	}
	cl := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Pull, ID: id, APIEndpoint: endpoint}}
	if _, err := karmada.ClusterV1alpha1().Clusters().Create(ctx, cl, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("cluster %s is not registered (register it with flotillactl register): %w", name, err)
	}
	return nil
}

// newRecorder records events on the control plane. The agent's identity
// may write events only in its execution namespace: events on other
// objects (templates in user namespaces) are dropped here rather than
// refused there.
func newRecorder(host kubernetes.Interface, cluster string) (record.EventRecorder, func(), error) {
	r, shutdown, err := telemetry.NewEventRecorder(host.CoreV1().Events(names.ExecutionNamespace(cluster)), corev1.EventSource{Component: "flotilla-agent", Host: cluster})
	if err != nil {
		return nil, nil, err
	}
	return &namespaceRecorder{EventRecorder: r, namespace: names.ExecutionNamespace(cluster)}, shutdown, nil
}
