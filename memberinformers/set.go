// Package memberinformers keeps informers of every Ready member's pods and
// nodes, trimmed to what locating them and the HPA arithmetic need. The
// metrics adapter uses them to ask only the members that have the pods or
// nodes a request names; the FederatedHPA controller reads the pods of a
// workload in every member from them.
package memberinformers

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/memberclient"
)

// Set runs the informers of every Ready member.
type Set struct {
	clusters func() ([]*clusterv1alpha1.Cluster, error)
	client   func(*clusterv1alpha1.Cluster) (*memberclient.Client, error)
	resync   time.Duration
	trigger  chan struct{}

	mu      sync.RWMutex
	members map[string]*member
}

// member is the informers of one cluster, built from one connection.
type member struct {
	name   string
	key    string
	client *memberclient.Client
	pods   cache.SharedIndexInformer
	nodes  cache.SharedIndexInformer
	cancel context.CancelFunc
}

// New returns a Set over the clusters listed by clusters, reached with
// client. Nothing runs before Run.
func New(clusters func() ([]*clusterv1alpha1.Cluster, error), client func(*clusterv1alpha1.Cluster) (*memberclient.Client, error)) *Set {
	return &Set{clusters: clusters, client: client, resync: 30 * time.Second, trigger: make(chan struct{}, 1), members: map[string]*member{}}
}

// Trigger asks for the set of members to be reconciled soon (a Cluster
// changed).
func (s *Set) Trigger() {
	select {
	case s.trigger <- struct{}{}:
	default:
	}
}

// Run reconciles the members until ctx ends, then stops their informers.
func (s *Set) Run(ctx context.Context) {
	logger := klog.FromContext(ctx).WithName("member-informers")
	ticker := time.NewTicker(s.resync)
	defer ticker.Stop()
	for {
		if err := s.sync(ctx); err != nil {
			logger.Error(err, "Reconciling member informers")
		}
		select {
		case <-ctx.Done():
			s.apply(ctx, nil)
			return
		case <-s.trigger:
			time.Sleep(100 * time.Millisecond) // coalesce a burst of changes
		case <-ticker.C:
		}
	}
}

func (s *Set) sync(ctx context.Context) error {
	clusters, err := s.clusters()
	if err != nil {
		return err
	}
	want := map[string]*memberclient.Client{}
	for _, c := range clusters {
		if !meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady) || c.DeletionTimestamp != nil {
			continue
		}
		cl, err := s.client(c)
		if err != nil {
			klog.FromContext(ctx).V(2).Info("No client for member", "cluster", c.Name, "err", err)
			continue
		}
		want[c.Name] = cl
	}
	s.apply(ctx, want)
	return nil
}

// apply starts the members wanted and not running (or running with another
// connection) and stops the others.
func (s *Set) apply(ctx context.Context, want map[string]*memberclient.Client) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, m := range s.members {
		if cl, ok := want[name]; !ok || cl.Key() != m.key {
			m.cancel()
			delete(s.members, name)
		}
	}
	for name, cl := range want {
		if _, ok := s.members[name]; ok {
			continue
		}
		s.members[name] = start(ctx, name, cl)
	}
}

func start(ctx context.Context, name string, cl *memberclient.Client) *member {
	ctx, cancel := context.WithCancel(ctx)
	f := informers.NewSharedInformerFactoryWithOptions(cl.Clientset, 0, informers.WithTransform(Trim))
	m := &member{name: name, key: cl.Key(), client: cl, cancel: cancel,
		pods: f.Core().V1().Pods().Informer(), nodes: f.Core().V1().Nodes().Informer()}
	f.Start(ctx.Done())
	return m
}

// Member is one member's informers at the time of the call.
type Member struct {
	Name   string
	Client *memberclient.Client
	// Pods and Nodes read the member's informers; they are complete only
	// when Synced.
	Pods   corelisters.PodLister
	Nodes  corelisters.NodeLister
	Synced bool
}

// Members returns the members whose informers run, in no order.
func (s *Set) Members() []Member {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]Member, 0, len(s.members))
	for _, m := range s.members {
		out = append(out, m.snapshot())
	}
	return out
}

// Member returns one member's informers.
func (s *Set) Member(name string) (Member, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	m, ok := s.members[name]
	if !ok {
		return Member{}, false
	}
	return m.snapshot(), true
}

func (m *member) snapshot() Member {
	return Member{Name: m.name, Client: m.client,
		Pods:   corelisters.NewPodLister(m.pods.GetIndexer()),
		Nodes:  corelisters.NewNodeLister(m.nodes.GetIndexer()),
		Synced: m.pods.HasSynced() && m.nodes.HasSynced()}
}

// HasPods reports whether the member may have pods of namespace ("" for
// all) matching selector: true when it has one, or when its informer has
// not synced yet and it cannot tell.
func (m Member) HasPods(namespace string, selector labels.Selector) bool {
	if !m.Synced {
		return true
	}
	pods, err := m.Pods.Pods(namespace).List(selector)
	return err != nil || len(pods) > 0
}

// HasNodes is HasPods for nodes.
func (m Member) HasNodes(selector labels.Selector) bool {
	if !m.Synced {
		return true
	}
	nodes, err := m.Nodes.List(selector)
	return err != nil || len(nodes) > 0
}

// Trim keeps of pods and nodes what the metrics adapter and the HPA
// arithmetic read: identity, labels, containers' (and sidecars') requests, node name,
// phase, conditions and start time. Everything else (managed fields,
// annotations, volumes, images, container statuses, node images) is
// dropped before it reaches the cache.
func Trim(obj any) (any, error) {
	switch o := obj.(type) {
	case *corev1.Pod:
		containers := make([]corev1.Container, len(o.Spec.Containers))
		for i, c := range o.Spec.Containers {
			containers[i] = corev1.Container{Name: c.Name, Resources: corev1.ResourceRequirements{Requests: c.Resources.Requests}}
		}
		// Restartable init containers (sidecars) count towards requests.
		var sidecars []corev1.Container
		for _, c := range o.Spec.InitContainers {
			if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
				sidecars = append(sidecars, corev1.Container{Name: c.Name, RestartPolicy: c.RestartPolicy,
					Resources: corev1.ResourceRequirements{Requests: c.Resources.Requests}})
			}
		}
		p := &corev1.Pod{
			TypeMeta:   o.TypeMeta,
			ObjectMeta: trimMeta(o.ObjectMeta),
			Spec:       corev1.PodSpec{Containers: containers, InitContainers: sidecars, NodeName: o.Spec.NodeName, Resources: o.Spec.Resources},
			Status:     corev1.PodStatus{Phase: o.Status.Phase, Conditions: o.Status.Conditions, StartTime: o.Status.StartTime},
		}
		return p, nil
	case *corev1.Node:
		return &corev1.Node{TypeMeta: o.TypeMeta, ObjectMeta: trimMeta(o.ObjectMeta),
			Status: corev1.NodeStatus{Conditions: o.Status.Conditions, Capacity: o.Status.Capacity, Allocatable: o.Status.Allocatable}}, nil
	}
	return obj, nil
}

func trimMeta(m metav1.ObjectMeta) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace, UID: m.UID, ResourceVersion: m.ResourceVersion,
		Labels: m.Labels, CreationTimestamp: m.CreationTimestamp, DeletionTimestamp: m.DeletionTimestamp}
}
