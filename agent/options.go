// Package agent is flotilla-agent: it runs next to a member the control plane
// cannot reach (Pull mode; docs/compatibility.md, Clusters) and does for that
// member alone what the control plane does for push members: it applies the
// Works of the cluster's execution namespace (the same execution controller,
// no-op skip included), reports the cluster's status and renews its heartbeat
// Lease, reading the interpreter customizations from the control plane. Its
// control-plane identity is the cluster's own (system:karmada:agent:<cluster>):
// it watches only its Cluster and its execution namespace. It renews that
// identity's client certificate before it expires (rotation.go).
package agent

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/flotilla-io/flotilla/names"
	"github.com/flotilla-io/flotilla/telemetry"
)

// Options are the agent's flags.
type Options struct {
	// ClusterName is the name of the member's Cluster on the control plane.
	ClusterName string
	// ControlPlaneKubeconfig reaches the control plane (the host API server)
	// with the agent's identity.
	ControlPlaneKubeconfig string
	// MemberKubeconfig reaches the member; empty: in-cluster.
	MemberKubeconfig string
	// ClusterStatusUpdateFrequency is how often the status is reported.
	ClusterStatusUpdateFrequency time.Duration
	// ClusterLeaseDuration is the heartbeat Lease's duration.
	ClusterLeaseDuration time.Duration
	// ClusterCacheSyncTimeout bounds the wait for the member's node and pod
	// caches before the status (and first Ready) is reported.
	ClusterCacheSyncTimeout time.Duration
	// LeaderElect runs one active agent among replicas, by a Lease in the
	// member.
	LeaderElect bool
	// LeaderElectNamespace holds that Lease, in the member.
	LeaderElectNamespace string
	// Workers is the number of Works applied at once.
	Workers int
	// CertDir holds the agent's renewed control-plane client certificates;
	// empty: flotilla-agent-certs next to ControlPlaneKubeconfig.
	CertDir string
	// AgentNamespace is the member namespace of the agent's kubeconfig
	// Secret (karmada-agent-config), updated with each renewed
	// certificate; empty: not updated.
	AgentNamespace string
	// ClusterAPIEndpoint, when set, is written to the Cluster's
	// spec.apiEndpoint (informative: the control plane reaches a pull
	// member only through the agent's tunnel).
	ClusterAPIEndpoint string
	// MetricsBindAddress is where the agent's Prometheus metrics are
	// served over plain HTTP (Karmada's --metrics-bind-address); empty or
	// "0": not served.
	MetricsBindAddress string
}

// NewOptions returns the defaults.
func NewOptions() *Options {
	return &Options{
		ClusterStatusUpdateFrequency: 10 * time.Second,
		ClusterLeaseDuration:         40 * time.Second,
		ClusterCacheSyncTimeout:      2 * time.Minute,
		LeaderElect:                  true,
		LeaderElectNamespace:         names.SystemNamespace,
		Workers:                      8,
		AgentNamespace:               names.SystemNamespace,
		MetricsBindAddress:           telemetry.DefaultBindAddress,
	}
}

// AddFlags adds the options' flags to fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.ClusterName, "cluster-name", o.ClusterName, "Name of the member's Cluster on the control plane.")
	fs.StringVar(&o.ControlPlaneKubeconfig, "control-plane-kubeconfig", o.ControlPlaneKubeconfig,
		"Kubeconfig of the control plane with the agent's identity (written by flotillactl register).")
	fs.StringVar(&o.MemberKubeconfig, "member-kubeconfig", o.MemberKubeconfig, "Kubeconfig of the member; empty: in-cluster configuration.")
	fs.DurationVar(&o.ClusterStatusUpdateFrequency, "cluster-status-update-frequency", o.ClusterStatusUpdateFrequency, "How often the cluster's status is reported.")
	fs.DurationVar(&o.ClusterLeaseDuration, "cluster-lease-duration", o.ClusterLeaseDuration, "Duration of the cluster's heartbeat Lease.")
	fs.DurationVar(&o.ClusterCacheSyncTimeout, "cluster-cache-sync-timeout", o.ClusterCacheSyncTimeout,
		"How long to wait for the member's node and pod caches to list; the cluster's status, Ready included, is reported only once they have.")
	fs.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect, "Run one active agent among replicas, elected by a Lease in the member.")
	fs.StringVar(&o.LeaderElectNamespace, "leader-elect-resource-namespace", o.LeaderElectNamespace, "Namespace of the member holding the leader election Lease.")
	fs.IntVar(&o.Workers, "concurrent-work-syncs", o.Workers, "Works applied at once.")
	fs.StringVar(&o.ClusterAPIEndpoint, "cluster-api-endpoint", o.ClusterAPIEndpoint,
		"The member's API endpoint, written to its Cluster's spec.apiEndpoint when the agent creates the Cluster itself (informative: the control plane uses the tunnel); an agent never changes a registered Cluster's endpoint.")
	fs.StringVar(&o.CertDir, "cert-dir", o.CertDir,
		"Directory of the agent's control-plane client certificates, renewed before they expire when --control-plane-kubeconfig holds the agent's certificate. Default: "+defaultCertDirName+" next to --control-plane-kubeconfig.")
	fs.StringVar(&o.AgentNamespace, "agent-namespace", o.AgentNamespace,
		"Member namespace of the Secret karmada-agent-config (key karmada.config) holding the agent's kubeconfig, updated with each renewed certificate; empty: not updated.")
	fs.StringVar(&o.MetricsBindAddress, telemetry.BindAddressFlag, o.MetricsBindAddress,
		"Address (host:port) serving the agent's Prometheus metrics at "+telemetry.Path+" over plain HTTP, on every replica; empty or 0 disables it.")
}

// Validate checks the options.
func (o *Options) Validate() error {
	switch {
	case o.ClusterName == "":
		return fmt.Errorf("--cluster-name is required")
	case o.ControlPlaneKubeconfig == "":
		return fmt.Errorf("--control-plane-kubeconfig is required")
	case o.ClusterStatusUpdateFrequency <= 0 || o.ClusterLeaseDuration <= 0:
		return fmt.Errorf("--cluster-status-update-frequency and --cluster-lease-duration must be positive")
	}
	if o.AgentNamespace != "" {
		if msgs := validation.IsDNS1123Label(o.AgentNamespace); len(msgs) > 0 {
			return fmt.Errorf("invalid --agent-namespace %q: %s", o.AgentNamespace, strings.Join(msgs, "; "))
		}
	}
	return nil
}
