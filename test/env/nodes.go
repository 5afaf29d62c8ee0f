package env

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// NodeOptions shape the fake nodes of a member. Zero values take the
// defaults of a realistic machine: 32 CPUs, 256Gi of memory, 110 pods.
type NodeOptions struct {
	Count  int               `json:"count"`
	CPU    string            `json:"cpu,omitempty"`
	Memory string            `json:"memory,omitempty"`
	Pods   string            `json:"pods,omitempty"`
	Labels map[string]string `json:"labels,omitempty"`
}

func (o NodeOptions) withDefaults() NodeOptions {
	if o.CPU == "" {
		o.CPU = "32"
	}
	if o.Memory == "" {
		o.Memory = "256Gi"
	}
	if o.Pods == "" {
		o.Pods = "110"
	}
	return o
}

// nodeName is the name of a member's i-th fake node. It starts with the
// member's name, as nodes of different clusters are named apart in a real
// fleet, so that a node found across members (search, multi-cluster get)
// names its cluster.
func nodeName(member string, i int) string {
	return member + "-kwok-node-" + strconv.Itoa(i)
}

// fakeNode returns a Node kwok manages. kwok fills in conditions, addresses,
// daemon endpoints and node info; capacity is ours.
func fakeNode(name string, o NodeOptions) (*corev1.Node, error) {
	capacity := corev1.ResourceList{}
	for res, v := range map[corev1.ResourceName]string{corev1.ResourceCPU: o.CPU, corev1.ResourceMemory: o.Memory, corev1.ResourcePods: o.Pods, corev1.ResourceEphemeralStorage: "1Ti"} {
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return nil, fmt.Errorf("node %s: %s %q: %w", name, res, v, err)
		}
		capacity[res] = q
	}
	labels := map[string]string{
		"kubernetes.io/hostname": name,
		"kubernetes.io/os":       "linux",
		"kubernetes.io/arch":     "amd64",
		"type":                   "kwok",
	}
	maps.Copy(labels, o.Labels)
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:   name,
			Labels: labels,
			Annotations: map[string]string{
				"kwok.x-k8s.io/node":           "fake",
				"node.alpha.kubernetes.io/ttl": "0",
				// Where metrics-server scrapes kwok's emulated resource usage.
				"metrics.k8s.io/resource-metrics-path": "/metrics/nodes/" + name + "/metrics/resource",
			},
		},
		Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity.DeepCopy()},
	}, nil
}

// createNodes creates the fake nodes (idempotently) and waits until all are Ready.
func createNodes(ctx context.Context, cs kubernetes.Interface, names []string, o NodeOptions, timeout time.Duration) error {
	for _, name := range names {
		node, err := fakeNode(name, o)
		if err != nil {
			return err
		}
		if _, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating node %s: %w", name, err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		notReady, err := notReadyNodes(ctx, cs, names)
		if err == nil && len(notReady) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("nodes %v not Ready after %s (last error: %v)", notReady, timeout, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func notReadyNodes(ctx context.Context, cs kubernetes.Interface, names []string) ([]string, error) {
	var notReady []string
	for _, name := range names {
		n, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return names, err
		}
		if !nodeReady(n) {
			notReady = append(notReady, name)
		}
	}
	return notReady, nil
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
