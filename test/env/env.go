package env

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Binaries the test bed runs, looked up in Options.BinDir.
const (
	binEtcd          = "etcd"
	binAPIServer     = "kube-apiserver"
	binKCM           = "kube-controller-manager"
	binScheduler     = "kube-scheduler"
	binKwok          = "kwok"
	fileKwokStages   = "kwok-stages.yaml"
	stateFile        = "state.json"
	defaultTimeout   = 2 * time.Minute
	portClashMessage = "address already in use"
)

// Options describe an environment. Use them through Start.
type Options struct {
	// BinDir holds the component binaries (make tools links them into
	// _output/bin; make build builds custom-metrics-emulator there).
	// Default: $FLOTILLA_BIN, else <repo>/_output/bin.
	BinDir string `json:"binDir"`
	// StateDir receives etcd's data and every cluster's certificates and
	// kubeconfigs. It must be empty or absent.
	StateDir string `json:"stateDir"`
	// LogDir receives <cluster>/<component>.log. Default: StateDir/logs.
	LogDir string `json:"logDir"`
	// HostName names the control-plane host cluster. Default "host".
	HostName string `json:"hostName"`
	// Members are the member clusters to start beside the host.
	Members []MemberOptions `json:"members"`
	// Detach lets the processes outlive this program (make up). Without it
	// they are killed when this program dies, however it dies.
	Detach bool `json:"detach"`
	// Flotilla, when set, starts flotilla-apiserver once the host is ready.
	Flotilla *FlotillaOptions `json:"flotilla,omitempty"`
	// HA, when set, runs flotilla-apiserver as several replicas on an etcd
	// cluster of its own (see HAOptions); Flotilla then defaults to its
	// zero value.
	HA *HAOptions `json:"ha,omitempty"`
	// Timeout bounds each readiness wait. Default two minutes: generous,
	// because a build may be running beside the tests on two cores.
	Timeout time.Duration `json:"timeout"`
	// MetricsResolution is how often each member's metrics-server scrapes
	// kwok's emulated usage. Default DefaultMetricsResolution (15s); at
	// least MinMetricsResolution (10s), metrics-server's minimum. A new
	// pod's metrics appear after its third scrape: kwok's first reading of
	// a CPU counter is 0, which metrics-server discards, and a rate needs
	// two readings after it.
	MetricsResolution time.Duration `json:"metricsResolution"`
}

// MemberOptions describe one member cluster.
type MemberOptions struct {
	Name  string      `json:"name"`
	Nodes NodeOptions `json:"nodes"`
	// Trimmed runs the member cut down, so that many fit on a small
	// machine: see TrimmedMembers. One fake node unless Nodes.Count says.
	Trimmed bool `json:"trimmed,omitempty"`
}

// Environment is a running topology: one etcd, a host and its members.
type Environment struct {
	Options Options    `json:"options"`
	EtcdURL string     `json:"etcdURL"`
	Etcd    *Process   `json:"etcd"`
	Host    *Cluster   `json:"host"`
	Members []*Cluster `json:"members"`
	// HA is the HA topology of flotilla-apiserver when Options.HA is set.
	HA *HA `json:"ha,omitempty"`
}

// Member returns the member cluster called name, or nil.
func (e *Environment) Member(name string) *Cluster {
	for _, m := range e.Members {
		if m.Name == name {
			return m
		}
	}
	return nil
}

// Clusters returns the host followed by the members.
func (e *Environment) Clusters() []*Cluster {
	return append([]*Cluster{e.Host}, e.Members...)
}

func (o *Options) complete() error {
	if o.BinDir == "" {
		o.BinDir = os.Getenv("FLOTILLA_BIN")
	}
	if o.BinDir == "" {
		root, err := RepoRoot()
		if err != nil {
			return err
		}
		o.BinDir = filepath.Join(root, "_output", "bin")
	}
	if o.StateDir == "" {
		return errors.New("options: StateDir is required")
	}
	if o.LogDir == "" {
		o.LogDir = filepath.Join(o.StateDir, "logs")
	}
	if o.HostName == "" {
		o.HostName = "host"
	}
	if o.Timeout == 0 {
		o.Timeout = defaultTimeout
	}
	if o.MetricsResolution == 0 {
		o.MetricsResolution = DefaultMetricsResolution
	}
	if o.MetricsResolution < MinMetricsResolution {
		return fmt.Errorf("options: MetricsResolution %s is less than metrics-server's minimum %s", o.MetricsResolution, MinMetricsResolution)
	}
	seen := map[string]bool{o.HostName: true}
	for i := range o.Members {
		m := &o.Members[i]
		if m.Name == "" || seen[m.Name] {
			return fmt.Errorf("options: member %d: name %q is empty or used twice", i, m.Name)
		}
		seen[m.Name] = true
		m.Nodes = m.Nodes.withDefaults()
		if m.Nodes.Count == 0 {
			m.Nodes.Count = 2
			if m.Trimmed {
				m.Nodes.Count = 1
			}
		}
	}
	if o.HA != nil {
		ha := o.HA.withDefaults()
		o.HA = &ha
		if o.Flotilla == nil {
			o.Flotilla = &FlotillaOptions{}
		}
		if o.HA.Replicas < 1 || o.HA.EtcdMembers < 1 {
			return fmt.Errorf("options: HA needs at least one replica and one etcd member, got %d and %d", o.HA.Replicas, o.HA.EtcdMembers)
		}
	}
	required := []string{binEtcd, binAPIServer, binKCM, binScheduler, binKwok, fileKwokStages, fileKwokMetrics, binMetricsServer, binCustomMetrics}
	if o.Flotilla != nil && o.Flotilla.Binary == "" {
		required = append(required, FlotillaComponent)
	}
	for _, b := range required {
		if _, err := os.Stat(filepath.Join(o.BinDir, b)); err != nil {
			return fmt.Errorf("%s is missing from %s (run `make tools build`): %w", b, o.BinDir, err)
		}
	}
	return nil
}

// RepoRoot finds the repository root: the nearest directory upwards from the
// working directory whose go.mod declares the Flotilla module.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.Contains(string(data), "module github.com/flotilla-io/flotilla\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside the flotilla repository (no go.mod of github.com/flotilla-io/flotilla above the working directory)")
		}
		dir = parent
	}
}

// Start starts etcd, the host and every member, each Ready, and returns the
// environment. If anything fails, everything already started is stopped.
func Start(ctx context.Context, opts Options) (env *Environment, err error) {
	if err := opts.complete(); err != nil {
		return nil, err
	}
	if entries, err := os.ReadDir(opts.StateDir); err == nil && len(entries) > 0 {
		return nil, fmt.Errorf("state directory %s is not empty", opts.StateDir)
	}
	if err := os.MkdirAll(opts.StateDir, 0o755); err != nil {
		return nil, err
	}
	e := &Environment{Options: opts}
	defer func() {
		if err != nil {
			e.Stop(0)
		}
	}()
	if err := e.startEtcd(ctx); err != nil {
		return nil, err
	}
	e.Host = &Cluster{Name: opts.HostName, Role: RoleHost, Dir: filepath.Join(opts.StateDir, opts.HostName), AggregatorRouting: opts.HA != nil}
	for _, m := range opts.Members {
		c := &Cluster{Name: m.Name, Role: RoleMember, Trimmed: m.Trimmed, Dir: filepath.Join(opts.StateDir, m.Name)}
		for i := range m.Nodes.Count {
			c.Nodes = append(c.Nodes, nodeName(m.Name, i))
		}
		e.Members = append(e.Members, c)
	}

	// Clusters start side by side; each waits only on its own components.
	var wg sync.WaitGroup
	errs := make([]error, len(e.Clusters()))
	for i, c := range e.Clusters() {
		wg.Go(func() { errs[i] = e.startCluster(ctx, c) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	switch {
	case opts.HA != nil:
		if err := e.startFlotillaHA(ctx); err != nil {
			return nil, err
		}
	case opts.Flotilla != nil:
		if err := e.startFlotilla(ctx); err != nil {
			return nil, err
		}
	}
	if err := e.Save(); err != nil {
		return nil, err
	}
	return e, nil
}

// Stop stops every process of the environment: the clusters side by side,
// then the etcd members of HA mode, then etcd. grace is how long each process may take after SIGTERM before
// it is killed; tests pass 0. Stopping twice is harmless.
func (e *Environment) Stop(grace time.Duration) {
	var wg sync.WaitGroup
	for _, c := range e.Clusters() {
		if c != nil {
			wg.Go(func() { c.Stop(grace) })
		}
	}
	wg.Wait()
	e.stopHA(grace)
	if e.Etcd != nil {
		e.Etcd.Stop(grace)
	}
}

// Save writes the environment to StateDir/state.json, so another program
// (make down, a test against make up) can find and stop it.
func (e *Environment) Save() error {
	data, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(e.Options.StateDir, stateFile+".tmp")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(e.Options.StateDir, stateFile))
}

// Load reads the environment saved in stateDir. It returns an error
// satisfying errors.Is(err, fs.ErrNotExist) when there is none.
func Load(stateDir string) (*Environment, error) {
	data, err := os.ReadFile(filepath.Join(stateDir, stateFile))
	if err != nil {
		return nil, err
	}
	e := &Environment{}
	if err := json.Unmarshal(data, e); err != nil {
		return nil, fmt.Errorf("reading %s: %w", filepath.Join(stateDir, stateFile), err)
	}
	return e, nil
}

// Check reports the first problem of a loaded or started environment: a
// process that is gone, or an API server that is not ready.
func (e *Environment) Check(ctx context.Context) error {
	if e.Etcd == nil || !e.Etcd.owned() {
		return errors.New("etcd is not running")
	}
	if e.HA != nil {
		for _, p := range e.HA.Etcd {
			if p == nil || !p.owned() {
				return errors.New("an etcd member of flotilla-apiserver is not running")
			}
		}
	}
	for _, c := range e.Clusters() {
		for _, p := range c.Processes {
			if !p.owned() {
				return fmt.Errorf("%s/%s (pid %d) is not running; log %s", p.Cluster, p.Component, p.PID, p.LogFile)
			}
		}
		// An environment started before members ran metrics-server and
		// custom-metrics-emulator.
		if c.Role == RoleMember && !c.Trimmed {
			for _, comp := range []string{MetricsServerComponent, CustomMetricsComponent} {
				if c.Process(comp) == nil {
					return fmt.Errorf("%s runs no %s", c.Name, comp)
				}
			}
		}
		ready, err := c.apiserverReady()
		if err != nil {
			return err
		}
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err = ready(cctx)
		cancel()
		if err != nil {
			return fmt.Errorf("%s/kube-apiserver is not ready: %w", c.Name, err)
		}
	}
	return nil
}

func (e *Environment) bin(name string) string { return filepath.Join(e.Options.BinDir, name) }

func (e *Environment) logFile(cluster, component string) string {
	return filepath.Join(e.Options.LogDir, cluster, component+".log")
}

func (e *Environment) startEtcd(ctx context.Context) error {
	p, err := retryOnPortClash(func() (*Process, error) {
		ports, err := freePorts(2)
		if err != nil {
			return nil, err
		}
		client, peer := "http://127.0.0.1:"+strconv.Itoa(ports[0]), "http://127.0.0.1:"+strconv.Itoa(ports[1])
		e.EtcdURL = client
		p, err := startProcess("shared", "etcd", e.bin(binEtcd), []string{
			"--name=flotilla-testbed", "--data-dir=" + filepath.Join(e.Options.StateDir, "etcd"),
			"--logger=zap", "--log-level=warn",
			"--listen-client-urls=" + client, "--advertise-client-urls=" + client,
			"--listen-peer-urls=" + peer, "--initial-advertise-peer-urls=" + peer,
			"--initial-cluster=flotilla-testbed=" + peer,
			"--quota-backend-bytes=" + strconv.Itoa(4<<30),
			// Test data is disposable; fsync is what makes etcd slow on shared disks.
			"--unsafe-no-fsync",
		}, e.logFile("shared", "etcd"), e.Options.Detach)
		if err != nil {
			return nil, err
		}
		return p, p.waitFor(ctx, e.Options.Timeout, "healthy", p.servedBy(ports[0], healthz(client+"/health")))
	})
	if err != nil {
		return err
	}
	e.Etcd = p
	return nil
}

// startCluster writes the cluster's certificates and starts its components
// in order, each ready before the next starts; a member's metrics-server
// and custom-metrics-emulator start beside them once the kube-apiserver is
// ready.
func (e *Environment) startCluster(ctx context.Context, c *Cluster) (err error) {
	if err := c.writePKI(); err != nil {
		return fmt.Errorf("%s: certificates: %w", c.Name, err)
	}
	// kube-apiserver: a port clash means new port, new kubeconfigs, retry.
	p, err := retryOnPortClash(func() (*Process, error) {
		ports, err := freePorts(1)
		if err != nil {
			return nil, err
		}
		c.Ports.APIServer = ports[0]
		c.Server = "https://127.0.0.1:" + strconv.Itoa(ports[0])
		if err := c.writeKubeconfigs(); err != nil {
			return nil, err
		}
		p, err := startProcess(c.Name, binAPIServer, e.bin(binAPIServer), c.apiserverArgs(e.EtcdURL), e.logFile(c.Name, binAPIServer), e.Options.Detach)
		if err != nil {
			return nil, err
		}
		ready, err := c.apiserverReady()
		if err != nil {
			return p, err
		}
		return p, p.waitFor(ctx, e.Options.Timeout, "ready", ready)
	})
	if err != nil {
		return err
	}
	c.Processes = append(c.Processes, p)
	if c.Role == RoleMember && !c.Trimmed {
		metricsServerStarted := e.startMetricsServer(ctx, c)
		customMetricsStarted := e.startCustomMetrics(ctx, c)
		defer func() { err = errors.Join(err, metricsServerStarted(), customMetricsStarted()) }()
	}

	type component struct {
		name, bin string
		port      *int
		args      func() []string
		health    func() string
	}
	comps := []component{{binKCM, binKCM, &c.Ports.KCM, c.kcmArgs, func() string { return fmt.Sprintf("https://127.0.0.1:%d/healthz", c.Ports.KCM) }}}
	if c.Role == RoleMember {
		metrics := e.bin(fileKwokMetrics)
		stages, err := c.writeKwokStages(e.bin(fileKwokStages))
		if err != nil {
			return err
		}
		streams, err := c.writeKwokStreams()
		if err != nil {
			return err
		}
		if !c.Trimmed {
			comps = append(comps, component{binScheduler, binScheduler, &c.Ports.Scheduler, c.schedulerArgs, func() string { return fmt.Sprintf("https://127.0.0.1:%d/healthz", c.Ports.Scheduler) }})
		}
		comps = append(comps, component{binKwok, binKwok, &c.Ports.Kwok, func() []string { return c.kwokArgs(stages, metrics, streams) }, func() string { return fmt.Sprintf("http://127.0.0.1:%d/healthz", c.Ports.Kwok) }})
	}
	for _, comp := range comps {
		p, err := retryOnPortClash(func() (*Process, error) {
			ports, err := freePorts(1)
			if err != nil {
				return nil, err
			}
			*comp.port = ports[0]
			p, err := startProcess(c.Name, comp.name, e.bin(comp.bin), comp.args(), e.logFile(c.Name, comp.name), e.Options.Detach)
			if err != nil {
				return nil, err
			}
			return p, p.waitFor(ctx, e.Options.Timeout, "healthy", p.servedBy(*comp.port, healthz(comp.health())))
		})
		if err != nil {
			return err
		}
		c.Processes = append(c.Processes, p)
	}

	if c.Role == RoleMember {
		cs, err := c.Client()
		if err != nil {
			return err
		}
		var opts NodeOptions
		for _, m := range e.Options.Members {
			if m.Name == c.Name {
				opts = m.Nodes
			}
		}
		if err := createNodes(ctx, cs, c.Nodes, opts, e.Options.Timeout); err != nil {
			return fmt.Errorf("%s: %w; kwok log %s", c.Name, err, e.logFile(c.Name, binKwok))
		}
	}
	return nil
}

// retryOnPortClash runs start up to three times while the process it started
// failed because its port was taken in the moment between choosing a free
// port and binding it (other test binaries choose ports too).
func retryOnPortClash(start func() (*Process, error)) (*Process, error) {
	for attempt := 1; ; attempt++ {
		p, err := start()
		if err == nil {
			return p, nil
		}
		if p != nil {
			p.Stop(0)
		}
		if p == nil || attempt == 3 || !strings.Contains(tail(p.LogFile, 5), portClashMessage) {
			return nil, err
		}
	}
}

// freePorts returns n distinct loopback ports that were free a moment ago.
func freePorts(n int) ([]int, error) { return freePortsAt("127.0.0.1", n) }

// freePortsAt returns n distinct ports of the address ip that were free a
// moment ago.
func freePortsAt(ip string, n int) ([]int, error) {
	ports := make([]int, 0, n)
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			_ = l.Close() // a port still held shows up when its server fails to listen
		}
	}()
	for range n {
		l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
		if err != nil {
			return nil, fmt.Errorf("finding a free port: %w", err)
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
