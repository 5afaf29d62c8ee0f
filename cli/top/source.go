package top

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	metricsapi "k8s.io/metrics/pkg/apis/metrics"
	metricsv1beta1 "k8s.io/metrics/pkg/client/clientset/versioned/typed/metrics/v1beta1"

	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	"github.com/flotilla-io/flotilla/cli/clusterproxy"
	"github.com/flotilla-io/flotilla/cli/controlplane"
)

// Member is what top reads of one member cluster.
type Member struct {
	// Metrics reads the member's metrics.k8s.io.
	Metrics metricsv1beta1.MetricsV1beta1Interface
	// Core reads its pods and nodes.
	Core corev1client.CoreV1Interface
	// MetricsAPI fails unless the member serves metrics.k8s.io v1beta1 to
	// the caller.
	MetricsAPI func(context.Context) error
}

// Source finds the member clusters and their clients.
type Source interface {
	// Clusters returns names once each is known to be a member, or every
	// member, sorted, when names is empty.
	Clusters(ctx context.Context, names []string) ([]string, error)
	// Member returns the clients of cluster.
	Member(cluster string) (Member, error)
}

// proxySource reaches members through the control plane's proxy.
type proxySource struct {
	cp       *rest.Config
	karmada  versioned.Interface
	protobuf bool
}

// NewSource returns the Source of the control plane cp: each member is
// read through clusters/{name}/proxy as cp's user; protobuf asks
// metrics.k8s.io for protocol buffers (kubectl's --use-protocol-buffers).
func NewSource(cp *rest.Config, protobuf bool) (Source, error) {
	karmada, err := versioned.NewForConfig(cp)
	if err != nil {
		return nil, fmt.Errorf("building the karmada.io client for %s: %w", cp.Host, err)
	}
	return &proxySource{cp: cp, karmada: karmada, protobuf: protobuf}, nil
}

// SourceOf returns the Source of the control plane flags locates.
func SourceOf(flags genericclioptions.RESTClientGetter, protobuf bool) (Source, error) {
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	return NewSource(rest.AddUserAgent(rest.CopyConfig(cfg), controlplane.UserAgent), protobuf)
}

func (s *proxySource) Clusters(ctx context.Context, names []string) ([]string, error) {
	if len(names) > 0 {
		var errs []error
		for _, n := range names {
			errs = append(errs, clusterproxy.CheckCluster(ctx, s.karmada, n))
		}
		return names, errors.Join(errs...)
	}
	list, err := s.karmada.ClusterV1alpha1().Clusters().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing the member clusters: %w", err)
	}
	for _, c := range list.Items {
		names = append(names, c.Name)
	}
	sort.Strings(names)
	return names, nil
}

func (s *proxySource) Member(cluster string) (Member, error) {
	cfg := clusterproxy.Config(s.cp, cluster)
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return Member{}, err
	}
	mcfg := rest.CopyConfig(cfg)
	if s.protobuf {
		mcfg.ContentType = "application/vnd.kubernetes.protobuf"
	}
	metrics, err := metricsv1beta1.NewForConfig(mcfg)
	if err != nil {
		return Member{}, err
	}
	return Member{Metrics: metrics, Core: kube.CoreV1(), MetricsAPI: func(ctx context.Context) error {
		// One request, not the member's whole discovery; Error decodes a
		// refusal's Status into its message.
		err := kube.CoreV1().RESTClient().Get().AbsPath("/apis", metricsapi.GroupName, "v1beta1").Do(ctx).Error()
		if apierrors.IsNotFound(err) {
			return errMetricsAPI
		}
		return err
	}}, nil
}

// errMetricsAPI is kubectl top's error for a cluster without metrics.k8s.io.
var errMetricsAPI = errors.New("metrics API not available")

// answer is one member's rows, or why there are none.
type answer[T any] struct {
	cluster string
	rows    []T
	err     error
}

// gather reads every cluster concurrently, in the order of clusters.
func gather[T any](ctx context.Context, src Source, clusters []string, read func(context.Context, string, Member) ([]T, error)) []answer[T] {
	answers := make([]answer[T], len(clusters))
	var wg sync.WaitGroup
	for i, c := range clusters {
		wg.Go(func() {
			answers[i].cluster = c
			m, err := src.Member(c)
			if err == nil {
				answers[i].rows, err = read(ctx, c, m)
			}
			answers[i].err = err
		})
	}
	wg.Wait()
	return answers
}

// merge keeps every member's rows and joins the errors, each naming its
// member as karmadactl does ("cluster(member2): ..."). When one object
// was named and asked of every member (anyMember), the members without it
// are no error as long as one has it.
func merge[T any](answers []answer[T], anyMember bool, notFound func(error) bool) ([]T, error) {
	var rows []T
	for _, a := range answers {
		rows = append(rows, a.rows...)
	}
	var errs []error
	for _, a := range answers {
		if a.err == nil || (anyMember && len(rows) > 0 && notFound(a.err)) {
			continue
		}
		errs = append(errs, fmt.Errorf("cluster(%s): %w", a.cluster, a.err))
	}
	return rows, errors.Join(errs...)
}
