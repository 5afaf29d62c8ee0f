// Command testbed runs the local Flotilla environment behind `make up` and
// `make down`: a host cluster and members member1..member3 (member1..memberN
// with --members N: the members past member3 are trimmed, see
// env.TrimmedMembers), as real Kubernetes processes that outlive the command,
// with one kubeconfig for all.
//
//	testbed up    start what is not running, wait until ready, print usage
//	testbed down  stop everything `up` started (safe to run twice)
//	testbed ps    list the running components with their PID and resident memory
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	searchv1alpha1 "github.com/flotilla-io/flotilla/apis/search/v1alpha1"
	"github.com/flotilla-io/flotilla/test/env"
)

// fullMembers are the members the e2e suites know, with every component.
// pushMembers are joined in push mode by `up`; pullMember is registered in
// Pull mode and run by its flotilla-agent. Members past them (--members)
// are trimmed and joined in push mode.
var (
	fullMembers = []string{"member1", "member2", "member3"}
	pushMembers = []string{"member1", "member2"}
	pullMember  = "member3"
)

// alphaFeatures turn on, in the local environment, the features Karmada
// keeps behind alpha feature gates, as Karmada's local development setup
// (hack/local-up-karmada.sh) enables its alpha gates; flotilla-apiserver's
// defaults stay Karmada's (off).
var alphaFeatures = []string{
	"--multiple-pod-templates-scheduling", // MultiplePodTemplatesScheduling
	"--resource-quota-estimate",           // ResourceQuotaEstimate
	"--enable-no-execute-taint-eviction",  // as local-up-karmada.sh's karmada-controller-manager
	"--controllers=*,descheduler",         // local-up-karmada.sh deploys karmada-descheduler
}

func main() {
	root, err := env.RepoRoot()
	if err != nil {
		fail(err)
	}
	out := filepath.Join(root, "_output")
	fs := flag.NewFlagSet("testbed", flag.ExitOnError)
	stateDir := fs.String("state-dir", filepath.Join(out, "up"), "where the running environment keeps its state")
	logDir := fs.String("log-dir", filepath.Join(out, "logs"), "where components write <cluster>/<component>.log")
	kubeconfig := fs.String("kubeconfig", filepath.Join(out, "kubeconfig"), "the kubeconfig to write")
	nodes := fs.Int("nodes", 2, "fake nodes per member (of member1..member3; trimmed members have one)")
	members := fs.Int("members", len(fullMembers), "members to run: member1..member3 with every component, the others trimmed (make up MEMBERS=N)")
	ha := fs.Bool("ha", false, "run flotilla-apiserver as 2 replicas on a 3-member etcd cluster of its own, balanced by the host's aggregator (make up HA=1)")
	resolution := fs.Duration("metrics-resolution", env.DefaultMetricsResolution, "how often each member's metrics-server scrapes (at least 10s)")
	if len(os.Args) < 2 {
		fail(errors.New("usage: testbed up|down|ps [flags]"))
	}
	_ = fs.Parse(os.Args[2:])

	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	switch os.Args[1] {
	case "up":
		err = up(ctx, *stateDir, *logDir, *kubeconfig, *members, *nodes, *resolution, *ha)
	case "down":
		err = down(*stateDir, *kubeconfig)
	case "ps":
		err = ps(*stateDir)
	default:
		err = fmt.Errorf("unknown command %q: usage: testbed up|down|ps", os.Args[1])
	}
	if err != nil {
		fail(err)
	}
}

func up(ctx context.Context, stateDir, logDir, kubeconfig string, members, nodes int, resolution time.Duration, ha bool) error {
	if members < len(fullMembers) {
		return fmt.Errorf("--members %d: at least %d (%s)", members, len(fullMembers), strings.Join(fullMembers, ", "))
	}
	if e, err := env.Load(stateDir); err == nil {
		switch err := e.Check(ctx); {
		case err != nil:
			fmt.Printf("The environment in %s is not healthy (%v); restarting it.\n", stateDir, err)
		case len(e.Members) != members:
			fmt.Printf("The environment in %s runs %d members, not %d; restarting it.\n", stateDir, len(e.Members), members)
		default:
			fmt.Println("The environment is already up.")
			usage(e, kubeconfig)
			return nil
		}
		e.Stop(10 * time.Second)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.RemoveAll(stateDir); err != nil {
		return err
	}
	opts := env.Options{StateDir: stateDir, LogDir: logDir, Detach: true, Flotilla: &env.FlotillaOptions{Args: alphaFeatures}, MetricsResolution: resolution}
	if ha {
		opts.HA = &env.HAOptions{}
	}
	for _, m := range fullMembers {
		opts.Members = append(opts.Members, env.MemberOptions{Name: m, Nodes: env.NodeOptions{Count: nodes}})
	}
	opts.Members = append(opts.Members, env.TrimmedMembers(len(fullMembers)+1, members)...)
	names := make([]string, len(opts.Members))
	for i, m := range opts.Members {
		names[i] = m.Name
	}
	join := append(slices.Clone(pushMembers), names[len(fullMembers):]...)
	start := time.Now()
	fmt.Printf("Starting host and %s (logs in %s) ...\n", membersRange(names), logDir)
	e, err := env.Start(ctx, opts)
	if err != nil {
		return err
	}
	if err := writeKubeconfig(e, kubeconfig); err != nil {
		e.Stop(10 * time.Second)
		return err
	}
	fmt.Printf("Clusters ready in %.1f s.\n", time.Since(start).Seconds())
	if err := e.JoinAll(ctx, join); err != nil {
		e.Stop(10 * time.Second)
		return err
	}
	// member3 in Pull mode: registered with a bootstrap token, its agent
	// the only connection between it and the control plane.
	agentKubeconfig, err := e.Register(ctx, pullMember)
	if err != nil {
		e.Stop(10 * time.Second)
		return err
	}
	if _, err := e.StartAgent(ctx, pullMember, agentKubeconfig); err != nil {
		e.Stop(10 * time.Second)
		return err
	}
	if err := e.Save(); err != nil {
		e.Stop(10 * time.Second)
		return err
	}
	if err := e.WaitClustersReady(ctx, names, readyTimeout(len(names))); err != nil {
		e.Stop(10 * time.Second)
		return err
	}
	if err := applySearchSample(ctx, e); err != nil {
		e.Stop(10 * time.Second)
		return err
	}
	fmt.Printf("Ready in %.1f s.\n", time.Since(start).Seconds())
	usage(e, kubeconfig)
	return nil
}

// membersRange names members compactly: "[member1 member2 member3]", or
// "member1..member20" when there are more.
func membersRange(names []string) string {
	if len(names) <= len(fullMembers) {
		return fmt.Sprint(names)
	}
	return names[0] + ".." + names[len(names)-1]
}

// readyTimeout bounds the wait for every Cluster to be Ready: two minutes
// for member1..member3, five seconds more per trimmed member (a margin on
// two cores; the scale bed's 20 members take well under it).
func readyTimeout(members int) time.Duration {
	return 2*time.Minute + time.Duration(max(0, members-len(fullMembers)))*5*time.Second
}

func down(stateDir, kubeconfig string) error {
	e, err := env.Load(stateDir)
	if errors.Is(err, fs.ErrNotExist) {
		fmt.Println("Nothing is running.")
		return nil
	}
	if err != nil {
		return err
	}
	e.Stop(15 * time.Second)
	if err := os.RemoveAll(stateDir); err != nil {
		return err
	}
	if err := os.Remove(kubeconfig); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	fmt.Println("Stopped.")
	return nil
}

// ps prints every component of the running environment with its resident
// memory (VmRSS), the figure docs/performance.md records.
func ps(stateDir string) error {
	e, err := env.Load(stateDir)
	if err != nil {
		return fmt.Errorf("nothing is running (%w)", err)
	}
	procs := []*env.Process{e.Etcd}
	if e.HA != nil {
		procs = append(procs, e.HA.Etcd...)
	}
	for _, c := range e.Clusters() {
		procs = append(procs, c.Processes...)
	}
	var total int64
	fmt.Printf("%-10s %-24s %8s %10s\n", "CLUSTER", "COMPONENT", "PID", "RSS(MiB)")
	for _, p := range procs {
		rss, err := residentKiB(p.PID)
		state := fmt.Sprintf("%10.1f", float64(rss)/1024)
		if err != nil {
			state = "      gone"
		}
		total += rss
		fmt.Printf("%-10s %-24s %8d %s\n", p.Cluster, p.Component, p.PID, state)
	}
	fmt.Printf("%-10s %-24s %8s %10.1f\n", "total", "", "", float64(total)/1024)
	return nil
}

func residentKiB(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("pid %d: no VmRSS", pid)
}

// writeKubeconfig writes one kubeconfig with the contexts flotilla (the
// control plane, current) and one per member, all with admin identities.
func writeKubeconfig(e *env.Environment, path string) error {
	var contexts []env.Context
	for _, c := range e.Clusters() {
		ctx, err := env.AdminContext(c)
		if err != nil {
			return err
		}
		if c == e.Host {
			ctx.Name, ctx.Username = "flotilla", "flotilla-admin"
		}
		contexts = append(contexts, ctx)
	}
	return env.WriteKubeconfig(path, "flotilla", contexts...)
}

func usage(e *env.Environment, kubeconfig string) {
	fmt.Printf(`
Control plane and members are up. Use them with kubectl:

  export KUBECONFIG=%s
  kubectl get clusters                        # the control plane (context "flotilla"): %s joined (Push), member3 registered (Pull, its flotilla-agent)
  kubectl get --raw /apis/cluster.karmada.io/v1alpha1/clusters/member1/proxy/api/v1/nodes
  kubectl --context member1 get nodes         # a member: member1, member2, member3
  kubectl --context member1 top pods -A       # metrics-server; pods use what their
                                              # kwok.x-k8s.io/usage-cpu|memory annotations say
  kubectl get --raw '/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/*/requests_per_second'
                                              # custom metrics of every member: a pod reports what its
                                              # custom-metrics.flotilla.io/<metric> annotation says

Search across members (the ResourceRegistry of samples/search.yaml caches
Deployments, Pods and Nodes of every member):

  kubectl get --raw /apis/search.karmada.io/v1alpha1/search/cache/api/v1/nodes
  kubectl --server "$(kubectl config view --minify -o jsonpath='{.clusters[0].cluster.server}')/apis/search.karmada.io/v1alpha1/proxying/karmada/proxy" get pods -A
  flotillactl search 'kind:Node cluster:member1'

Logs:  %s/<cluster>/<component>.log
Stop:  make down
%s%s`, kubeconfig, strings.Join(pushMembers, " and "), e.Options.LogDir, haUsage(e), trimmedUsage(e))
}

// trimmedUsage is the line `up` adds about trimmed members.
func trimmedUsage(e *env.Environment) string {
	var trimmed []string
	for _, m := range e.Members {
		if m.Trimmed {
			trimmed = append(trimmed, m.Name)
		}
	}
	if len(trimmed) == 0 {
		return ""
	}
	return fmt.Sprintf("Trimmed: %s, joined (Push): kube-apiserver, a kube-controller-manager with only the token and namespace controllers, kwok with one node; objects propagate there, no Pod runs\n",
		membersRange(trimmed))
}

// haUsage is the line `up` adds about the replicas in HA mode.
func haUsage(e *env.Environment) string {
	if e.HA == nil {
		return ""
	}
	return fmt.Sprintf("HA:    %d flotilla-apiserver replicas on %s (EndpointSlices karmada-system/%s-*), etcd cluster %s; the lease holder: kubectl -n karmada-system get lease\n",
		e.Replicas(), e.HA.HostIP, env.FlotillaComponent, strings.Join(e.HA.EtcdURLs, ","))
}

// searchSample is the ResourceRegistry `up` applies.
const searchSample = "samples/search.yaml"

// applySearchSample creates the sample ResourceRegistry (kept if it exists).
func applySearchSample(ctx context.Context, e *env.Environment) error {
	root, err := env.RepoRoot()
	if err != nil {
		return err
	}
	raw, err := os.ReadFile(filepath.Join(root, searchSample))
	if err != nil {
		return err
	}
	var reg searchv1alpha1.ResourceRegistry
	if err := yaml.UnmarshalStrict(raw, &reg); err != nil {
		return fmt.Errorf("%s: %w", searchSample, err)
	}
	cfg, err := e.Host.RESTConfig()
	if err != nil {
		return err
	}
	k, err := versioned.NewForConfig(cfg)
	if err != nil {
		return err
	}
	if _, err := k.SearchV1alpha1().ResourceRegistries().Create(ctx, &reg, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("applying %s: %w", searchSample, err)
	}
	return nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "testbed:", err)
	os.Exit(1)
}
