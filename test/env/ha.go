package env

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/flotilla-io/flotilla/names"
)

// HAOptions run flotilla-apiserver as several replicas on an etcd cluster of
// its own, behind one Service of the host that the aggregator balances
// over (--enable-aggregator-routing). Nil Options.HA runs one replica with
// embedded etcd.
type HAOptions struct {
	// Replicas is the number of flotilla-apiserver processes. Default 2.
	Replicas int `json:"replicas"`
	// EtcdMembers is the size of their etcd cluster. Default 3.
	EtcdMembers int `json:"etcdMembers"`
}

func (o HAOptions) withDefaults() HAOptions {
	if o.Replicas == 0 {
		o.Replicas = 2
	}
	if o.EtcdMembers == 0 {
		o.EtcdMembers = 3
	}
	return o
}

// HA is the running HA topology: the etcd members and the replicas' ports.
// The replicas' processes are the host's components ReplicaComponent(i).
type HA struct {
	// HostIP is the machine's first non-loopback IPv4 address: the replicas
	// bind there, because an endpoint of a Service may not be loopback.
	HostIP string `json:"hostIP"`
	// EtcdURLs are the client URLs of the etcd members, in order.
	EtcdURLs []string `json:"etcdURLs"`
	// Etcd are the etcd members' processes, in order.
	Etcd []*Process `json:"etcd"`
	// ReplicaPorts are the replicas' secure ports, in order.
	ReplicaPorts []int `json:"replicaPorts"`
	// ReplicaMetricsPorts serve each replica's Prometheus metrics over
	// plain HTTP on loopback (--metrics-bind-address).
	ReplicaMetricsPorts []int `json:"replicaMetricsPorts"`
}

// endpointSliceManager is the manager label of the EndpointSlices the test
// bed writes for the replicas, in place of an endpoints controller.
const endpointSliceManager = "flotilla-testbed"

// servicePortName is the port name the Service and its EndpointSlices share.
const servicePortName = "https"

// ErrNoHostIP says the machine has no address the replicas can be reached
// at through a Service.
var ErrNoHostIP = errors.New("the HA test bed needs a non-loopback IPv4 address (a Service's endpoints may not be loopback), and this machine has none")

// HostIPv4 returns the machine's first non-loopback, non-link-local IPv4
// address of an interface that is up, or ErrNoHostIP.
func HostIPv4() (net.IP, error) {
	ifaces, err := net.Interfaces()
	if err != nil {
		return nil, err
	}
	var addrs []net.Addr
	for _, i := range ifaces {
		if i.Flags&net.FlagUp == 0 || i.Flags&net.FlagLoopback != 0 {
			continue
		}
		a, err := i.Addrs()
		if err != nil {
			return nil, err
		}
		addrs = append(addrs, a...)
	}
	return firstUnicastIPv4(addrs)
}

// firstUnicastIPv4 returns the first global unicast IPv4 address of addrs.
func firstUnicastIPv4(addrs []net.Addr) (net.IP, error) {
	for _, a := range addrs {
		n, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		if ip := n.IP.To4(); ip != nil && ip.IsGlobalUnicast() {
			return ip, nil
		}
	}
	return nil, ErrNoHostIP
}

// ReplicaConfig reaches replica i directly, past the aggregator, as the
// host's admin; the replica's certificate is not verified (loopback or
// this machine's own address, tests only).
func (e *Environment) ReplicaConfig(i int) (*rest.Config, error) {
	cfg, err := e.Host.RESTConfig()
	if err != nil {
		return nil, err
	}
	cfg = rest.CopyConfig(cfg)
	cfg.Host = e.ReplicaURL(i)
	cfg.CAFile, cfg.CAData = "", nil
	cfg.Insecure = true
	return cfg, nil
}

// replicaReady checks that replica i is ready and authenticates the host
// admin's client certificate: /readyz answers anonymous requests before
// the delegated authentication has loaded the host's client CA, and until
// then the aggregator's requests would be refused too.
func (e *Environment) replicaReady(i int) func(context.Context) error {
	ready := healthz(e.ReplicaURL(i) + "/readyz")
	return func(ctx context.Context) error {
		if err := ready(ctx); err != nil {
			return err
		}
		cfg, err := e.ReplicaConfig(i)
		if err != nil {
			return err
		}
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return err
		}
		_, err = cs.Discovery().RESTClient().Get().AbsPath("/apis/cluster.karmada.io/v1alpha1/clusters").DoRaw(ctx)
		return err
	}
}

// ReplicaComponent is the process and log name of replica i.
func ReplicaComponent(i int) string { return FlotillaComponent + "-" + strconv.Itoa(i) }

// flotillaService is the Service the APIServices point at and the lease the
// controllers are elected with: flotilla-apiserver's defaults.
func flotillaDefaults() (service, namespace, leaseNamespace, lease string) {
	return names.ServerService, names.SystemNamespace, names.SystemNamespace, names.ControllersLease
}

// startEtcdCluster starts the HA etcd members side by side on loopback ports
// and waits until each is healthy (which needs a leader).
func (e *Environment) startEtcdCluster(ctx context.Context, members int) error {
	for attempt := 1; ; attempt++ {
		ports, err := freePorts(2 * members)
		if err != nil {
			return err
		}
		e.HA.EtcdURLs = nil
		var initial []string
		for i := range members {
			e.HA.EtcdURLs = append(e.HA.EtcdURLs, "http://127.0.0.1:"+strconv.Itoa(ports[2*i]))
			initial = append(initial, etcdMemberName(i)+"=http://127.0.0.1:"+strconv.Itoa(ports[2*i+1]))
		}
		e.HA.Etcd = make([]*Process, members)
		var startErr error
		for i := range members {
			peer := "http://127.0.0.1:" + strconv.Itoa(ports[2*i+1])
			client := e.HA.EtcdURLs[i]
			p, err := startProcess(e.Host.Name, etcdMemberName(i), e.bin(binEtcd), []string{
				"--name=" + etcdMemberName(i), "--data-dir=" + filepath.Join(e.Host.Dir, etcdMemberName(i)),
				"--logger=zap", "--log-level=warn",
				"--listen-client-urls=" + client, "--advertise-client-urls=" + client,
				"--listen-peer-urls=" + peer, "--initial-advertise-peer-urls=" + peer,
				"--initial-cluster=" + strings.Join(initial, ","), "--initial-cluster-state=new",
				"--quota-backend-bytes=" + strconv.Itoa(4<<30),
				// As the host's etcd: test data is disposable.
				"--unsafe-no-fsync",
			}, e.logFile(e.Host.Name, etcdMemberName(i)), e.Options.Detach)
			if err != nil {
				startErr = err
				break
			}
			e.HA.Etcd[i] = p
		}
		if startErr == nil {
			var wg sync.WaitGroup
			errs := make([]error, members)
			for i, p := range e.HA.Etcd {
				wg.Go(func() {
					errs[i] = p.waitFor(ctx, e.Options.Timeout, "healthy", p.servedBy(urlPort(e.HA.EtcdURLs[i]), healthz(e.HA.EtcdURLs[i]+"/health")))
				})
			}
			wg.Wait()
			startErr = errors.Join(errs...)
		}
		if startErr == nil {
			return nil
		}
		clash := false
		for _, p := range e.HA.Etcd {
			if p != nil {
				p.Stop(0)
				clash = clash || strings.Contains(tail(p.LogFile, 5), portClashMessage)
				_ = os.RemoveAll(filepath.Join(e.Host.Dir, p.Component))
			}
		}
		if !clash || attempt == 3 {
			return startErr
		}
	}
}

func etcdMemberName(i int) string { return "flotilla-etcd-" + strconv.Itoa(i) }

// writeHAPKI writes one CA and one serving certificate that every replica
// serves with, so that they agree on the APIServices' caBundle. It is
// valid for the Service's name, which the aggregator verifies.
func (e *Environment) writeHAPKI(dir, serviceDNS string, hostIP net.IP) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	ca, err := NewCA(FlotillaComponent + "-ca")
	if err != nil {
		return err
	}
	if err := ca.WriteFiles(dir, "ca"); err != nil {
		return err
	}
	kp, err := ca.Issue(CertRequest{CommonName: serviceDNS, DNSNames: []string{serviceDNS, "localhost"},
		IPs: []net.IP{net.ParseIP("127.0.0.1"), hostIP}})
	if err != nil {
		return err
	}
	return kp.WriteFiles(dir, "serving")
}

// startFlotillaHA starts the etcd cluster, the host's Service for the
// replicas and the replicas, publishes an EndpointSlice per ready replica
// and waits until the host serves flotilla-apiserver's APIs.
func (e *Environment) startFlotillaHA(ctx context.Context) error {
	o := e.Options.HA.withDefaults()
	ip, err := HostIPv4()
	if err != nil {
		return err
	}
	e.HA = &HA{HostIP: ip.String()}
	if err := e.startEtcdCluster(ctx, o.EtcdMembers); err != nil {
		return err
	}
	service, namespace, _, _ := flotillaDefaults()
	pki := filepath.Join(e.Host.Dir, "flotilla", "pki")
	if err := e.writeHAPKI(pki, service+"."+namespace+".svc", ip); err != nil {
		return fmt.Errorf("flotilla-apiserver certificates: %w", err)
	}
	if err := e.createFlotillaService(ctx); err != nil {
		return err
	}
	bin := e.Options.Flotilla.Binary
	if bin == "" {
		bin = e.bin(FlotillaComponent)
	}
	e.HA.ReplicaPorts = make([]int, o.Replicas)
	e.HA.ReplicaMetricsPorts = make([]int, o.Replicas)
	procs := make([]*Process, o.Replicas)
	errs := make([]error, o.Replicas)
	var wg sync.WaitGroup
	for i := range o.Replicas {
		wg.Go(func() {
			procs[i], errs[i] = retryOnPortClash(func() (*Process, error) {
				ports, err := freePortsAt(e.HA.HostIP, 1)
				if err != nil {
					return nil, err
				}
				e.HA.ReplicaPorts[i] = ports[0]
				metrics, err := freePorts(1)
				if err != nil {
					return nil, err
				}
				e.HA.ReplicaMetricsPorts[i] = metrics[0]
				args := append([]string{
					"--kubeconfig=" + e.Host.Kubeconfig,
					"--etcd-servers=" + strings.Join(e.HA.EtcdURLs, ","),
					"--tls-cert-file=" + filepath.Join(pki, "serving.crt"), "--tls-private-key-file=" + filepath.Join(pki, "serving.key"),
					"--apiservice-ca-file=" + filepath.Join(pki, "ca.crt"),
					"--bind-address=" + e.HA.HostIP, "--secure-port=" + strconv.Itoa(ports[0]),
					"--leader-elect=true",
					// As the chart's replicas: keep serving a moment after
					// SIGTERM, while the endpoint is withdrawn.
					"--shutdown-delay-duration=" + replicaShutdownDelay.String(),
					"--metrics-bind-address=127.0.0.1:" + strconv.Itoa(metrics[0]),
				}, e.Options.Flotilla.Args...)
				p, err := startProcess(e.Host.Name, ReplicaComponent(i), bin, args, e.logFile(e.Host.Name, ReplicaComponent(i)), e.Options.Detach)
				if err != nil {
					return nil, err
				}
				return p, p.waitFor(ctx, e.Options.Timeout, "ready", e.replicaReady(i))
			})
		})
	}
	wg.Wait()
	for _, p := range procs {
		if p != nil {
			e.Host.Processes = append(e.Host.Processes, p)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if err := e.SyncFlotillaEndpoints(ctx); err != nil {
		return err
	}
	return e.waitFlotillaServed(ctx, procs[0])
}

// ReplicaURL is replica i's own address, past the aggregator.
func (e *Environment) ReplicaURL(i int) string {
	return "https://" + net.JoinHostPort(e.HA.HostIP, strconv.Itoa(e.HA.ReplicaPorts[i]))
}

// createFlotillaService creates the selector-less Service the APIServices
// point at (port 443); the replicas, started without
// --service-external-name, leave it alone.
func (e *Environment) createFlotillaService(ctx context.Context) error {
	cs, err := e.Host.Client()
	if err != nil {
		return err
	}
	service, namespace, _, _ := flotillaDefaults()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: service, Namespace: namespace},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{
			Name: servicePortName, Port: 443, TargetPort: intstr.FromString(servicePortName), Protocol: corev1.ProtocolTCP,
		}}},
	}
	if _, err := cs.CoreV1().Services(namespace).Create(ctx, svc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the Service %s/%s: %w", namespace, service, err)
	}
	return nil
}

// SyncFlotillaEndpoints does what an endpoints controller does when a pod
// starts or dies: it publishes one EndpointSlice (one endpoint: HostIP and
// the replica's port) for each running replica and deletes the slice of
// each replica that is not running. The aggregator, with
// --enable-aggregator-routing, picks a random ready endpoint of the
// Service's slices per request. The slices never change otherwise, so only
// creates and deletes are needed, and only where the state differs.
func (e *Environment) SyncFlotillaEndpoints(ctx context.Context) error {
	if e.HA == nil {
		return errors.New("the environment does not run flotilla-apiserver in HA mode")
	}
	cs, err := e.Host.Client()
	if err != nil {
		return err
	}
	service, namespace, _, _ := flotillaDefaults()
	slices := cs.DiscoveryV1().EndpointSlices(namespace)
	for i, port := range e.HA.ReplicaPorts {
		name := ReplicaComponent(i)
		p := e.Host.Process(name)
		running := p != nil && p.owned()
		_, err := slices.Get(ctx, name, metav1.GetOptions{})
		switch {
		case err != nil && !apierrors.IsNotFound(err):
			return err
		case err == nil && !running:
			if err := e.withdrawReplica(ctx, i); err != nil {
				return err
			}
		case apierrors.IsNotFound(err) && running:
			slice := &discoveryv1.EndpointSlice{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: map[string]string{
					discoveryv1.LabelServiceName: service, discoveryv1.LabelManagedBy: endpointSliceManager,
				}},
				AddressType: discoveryv1.AddressTypeIPv4,
				Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{e.HA.HostIP}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
				Ports:       []discoveryv1.EndpointPort{{Name: ptr.To(servicePortName), Port: ptr.To(int32(port)), Protocol: ptr.To(corev1.ProtocolTCP)}},
			}
			if _, err := slices.Create(ctx, slice, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("publishing %s's endpoint: %w", name, err)
			}
		}
	}
	return nil
}

// Replica returns the process of replica i, or nil.
func (e *Environment) Replica(i int) *Process {
	return e.Host.Process(ReplicaComponent(i))
}

// Replicas is the number of flotilla-apiserver replicas in HA mode (0 otherwise).
func (e *Environment) Replicas() int {
	if e.HA == nil {
		return 0
	}
	return len(e.HA.ReplicaPorts)
}

// FlotillaLeader returns the replica that holds the controllers' Lease,
// or -1 when none of the running replicas does (no holder, an expired
// holder that was killed). The manager's identity ends in _<pid>.
func (e *Environment) FlotillaLeader(ctx context.Context) (int, error) {
	cs, err := e.Host.Client()
	if err != nil {
		return -1, err
	}
	_, _, leaseNamespace, lease := flotillaDefaults()
	l, err := cs.CoordinationV1().Leases(leaseNamespace).Get(ctx, lease, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return -1, nil
	}
	if err != nil {
		return -1, err
	}
	return e.replicaOfIdentity(ptr.Deref(l.Spec.HolderIdentity, "")), nil
}

// replicaOfIdentity maps a lease holder identity (<hostname>_<pid>) to the
// running replica with that process id, or -1.
func (e *Environment) replicaOfIdentity(id string) int {
	i := strings.LastIndexByte(id, '_')
	if i < 0 {
		return -1
	}
	pid, err := strconv.Atoi(id[i+1:])
	if err != nil {
		return -1
	}
	for r := range e.Replicas() {
		if p := e.Replica(r); p != nil && p.PID == pid && p.owned() {
			return r
		}
	}
	return -1
}

// KillReplica kills replica i with SIGKILL, as `kill -9` does. Its
// endpoint stays published until SyncFlotillaEndpoints, as a dead pod's
// does until the endpoints controller sees it.
func (e *Environment) KillReplica(i int) error {
	p := e.Replica(i)
	if p == nil {
		return fmt.Errorf("no replica %d", i)
	}
	p.Kill()
	return nil
}

// replicaShutdownDelay is the replicas' --shutdown-delay-duration: longer
// than it takes the test bed (DrainReplica's lag) and the host's
// aggregator to withdraw a stopping replica's endpoint.
const replicaShutdownDelay = 2 * time.Second

// DrainReplica stops replica i as Kubernetes stops a pod: SIGTERM reaches
// it, and its endpoint is withdrawn lag later (the endpoints controller
// and the aggregator's informer see a terminating pod a moment after the
// kubelet signals it); SIGKILL follows after grace. It reports whether the
// replica ended by itself within grace.
func (e *Environment) DrainReplica(ctx context.Context, i int, lag, grace time.Duration) (bool, error) {
	p := e.Replica(i)
	if p == nil {
		return false, fmt.Errorf("no replica %d", i)
	}
	ended := make(chan bool, 1)
	go func() { ended <- p.Stop(grace) }()
	select {
	case <-time.After(lag):
	case <-ctx.Done():
	}
	err := e.withdrawReplica(ctx, i)
	return <-ended, err
}

// withdrawReplica deletes replica i's EndpointSlice.
func (e *Environment) withdrawReplica(ctx context.Context, i int) error {
	cs, err := e.Host.Client()
	if err != nil {
		return err
	}
	_, namespace, _, _ := flotillaDefaults()
	err = cs.DiscoveryV1().EndpointSlices(namespace).Delete(ctx, ReplicaComponent(i), metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// StopReplica stops replica i with SIGTERM, as a rolling update or `kubectl
// delete pod` does, and SIGKILL after grace. It reports whether the replica
// ended by itself within grace. Its endpoint stays published until
// SyncFlotillaEndpoints.
func (e *Environment) StopReplica(i int, grace time.Duration) (bool, error) {
	p := e.Replica(i)
	if p == nil {
		return false, fmt.Errorf("no replica %d", i)
	}
	return p.Stop(grace), nil
}

// RestartReplica starts replica i again with the same flags and port, waits
// until it is ready and publishes its endpoint. A running replica is left
// as it is.
func (e *Environment) RestartReplica(ctx context.Context, i int) error {
	p := e.Replica(i)
	if p == nil {
		return fmt.Errorf("no replica %d", i)
	}
	if p.owned() {
		return e.SyncFlotillaEndpoints(ctx)
	}
	if err := p.Restart(); err != nil {
		return err
	}
	if err := p.waitFor(ctx, e.Options.Timeout, "ready", e.replicaReady(i)); err != nil {
		return err
	}
	return e.SyncFlotillaEndpoints(ctx)
}

// EtcdMember returns the process of etcd member i of the HA cluster, or nil.
func (e *Environment) EtcdMember(i int) *Process {
	if e.HA == nil || i < 0 || i >= len(e.HA.Etcd) {
		return nil
	}
	return e.HA.Etcd[i]
}

// RestartEtcdMember starts a killed etcd member again with its data and
// waits until it is healthy (back in the cluster, which has a leader).
func (e *Environment) RestartEtcdMember(ctx context.Context, i int) error {
	p := e.EtcdMember(i)
	if p == nil {
		return fmt.Errorf("no etcd member %d", i)
	}
	if p.owned() {
		return nil
	}
	if err := p.Restart(); err != nil {
		return err
	}
	return p.waitFor(ctx, e.Options.Timeout, "healthy", p.servedBy(urlPort(e.HA.EtcdURLs[i]), healthz(e.HA.EtcdURLs[i]+"/health")))
}

// stopHA stops the etcd members (the replicas are the host's processes).
func (e *Environment) stopHA(grace time.Duration) {
	if e.HA == nil {
		return
	}
	var wg sync.WaitGroup
	for _, p := range e.HA.Etcd {
		if p != nil {
			wg.Go(func() { p.Stop(grace) })
		}
	}
	wg.Wait()
}

// EtcdLeader returns the etcd member that leads the HA cluster now, as the
// members' status says.
func (e *Environment) EtcdLeader(ctx context.Context) (int, error) {
	if e.HA == nil {
		return -1, errors.New("the environment does not run flotilla-apiserver in HA mode")
	}
	c, err := clientv3.New(clientv3.Config{Endpoints: e.HA.EtcdURLs, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return -1, err
	}
	defer func() { _ = c.Close() }() // a read-only client
	ids := make(map[uint64]int, len(e.HA.EtcdURLs))
	var leader uint64
	for i, url := range e.HA.EtcdURLs {
		if p := e.HA.Etcd[i]; p == nil || !p.owned() {
			continue
		}
		st, err := c.Status(ctx, url)
		if err != nil {
			return -1, fmt.Errorf("status of etcd member %d: %w", i, err)
		}
		ids[st.Header.MemberId], leader = i, st.Leader
	}
	if i, ok := ids[leader]; ok {
		return i, nil
	}
	return -1, errors.New("no running etcd member leads the cluster")
}
