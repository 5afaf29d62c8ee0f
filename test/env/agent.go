package env

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// AgentComponent is the name of flotilla-agent's process and log.
const AgentComponent = "flotilla-agent"

// StartAgent starts flotilla-agent beside member, reaching the control
// plane with controlPlaneKubeconfig (the identity registration issued, or
// the host's admin kubeconfig when empty) and the member with its admin
// kubeconfig. The process belongs to the member: stopping the environment
// stops it. args are added to the flags set here.
func (e *Environment) StartAgent(ctx context.Context, member, controlPlaneKubeconfig string, args ...string) (*Process, error) {
	m := e.Member(member)
	if m == nil {
		return nil, fmt.Errorf("no member %q", member)
	}
	if controlPlaneKubeconfig == "" {
		controlPlaneKubeconfig = e.Host.Kubeconfig
	}
	ports, err := freePorts(1)
	if err != nil {
		return nil, err
	}
	m.Ports.AgentMetrics = ports[0]
	all := append([]string{
		"--metrics-bind-address=127.0.0.1:" + strconv.Itoa(ports[0]),
		"--cluster-name=" + member,
		"--control-plane-kubeconfig=" + controlPlaneKubeconfig,
		"--member-kubeconfig=" + m.Kubeconfig,
		"--cluster-status-update-frequency=2s",
	}, args...)
	p, err := startProcess(m.Name, AgentComponent, e.bin(AgentComponent), all, e.logFile(m.Name, AgentComponent), e.Options.Detach)
	if err != nil {
		return nil, err
	}
	m.Processes = append(m.Processes, p)
	return p, nil
}

// Register registers member in Pull mode as a user would: a bootstrap
// token from `flotillactl token create --print-register-command` on the
// control plane, then the printed `flotillactl register` with the member's
// kubeconfig. It returns the agent's control-plane kubeconfig (the issued
// client certificate), written under the member's directory.
func (e *Environment) Register(ctx context.Context, member string) (string, error) {
	m := e.Member(member)
	if m == nil {
		return "", fmt.Errorf("no member %q", member)
	}
	out, err := exec.CommandContext(ctx, e.bin(FlotillactlBinary), "token", "create", "--print-register-command",
		"--kubeconfig="+e.Host.Kubeconfig).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("flotillactl token create: %w\n%s", err, out)
	}
	cmd := strings.Fields(string(out))
	if len(cmd) < 2 || cmd[1] != "register" {
		return "", fmt.Errorf("flotillactl token create printed %q", out)
	}
	agentKubeconfig := filepath.Join(m.Dir, "agent-control-plane.kubeconfig")
	args := append(cmd[1:], "--cluster-name="+member, "--kubeconfig="+m.Kubeconfig,
		"--agent-kubeconfig-out="+agentKubeconfig, "--discovery-timeout=90s", "--force",
		// The agent runs as a process (StartAgent), not as a Deployment.
		"--karmada-agent-replicas=0")
	out, err = exec.CommandContext(ctx, e.bin(FlotillactlBinary), args...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("flotillactl register %s: %w\n%s", member, err, out)
	}
	return agentKubeconfig, nil
}
