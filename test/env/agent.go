package env

import (
	"context"
	"fmt"
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
	all := append([]string{
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
