package clusterproxy

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// Scope is the value of --operation-scope: where a command operates.
type Scope string

// karmadactl's operation scopes (karmadactl options.OperationScope).
const (
	// ScopeKarmada is the control plane.
	ScopeKarmada Scope = "karmada"
	// ScopeMembers is the member clusters: one, named by -C/--cluster, for
	// the commands of this package.
	ScopeMembers Scope = "members"
	// ScopeAll is the control plane and the members (get, describe); the
	// commands of this package refuse it, as karmadactl's do.
	ScopeAll Scope = "all"
)

// Flag names, karmadactl's.
const (
	// ScopeFlag is --operation-scope, shorthand -s.
	ScopeFlag = "operation-scope"
	// ClusterFlag is --cluster, shorthand -C: a member cluster's name.
	ClusterFlag = "cluster"
	// serverFlag is kubectl's --server; it loses its -s to --operation-scope.
	serverFlag = "server"
)

var _ pflag.Value = (*Scope)(nil)

// String implements pflag.Value.
func (s *Scope) String() string { return string(*s) }

// Type implements pflag.Value.
func (*Scope) Type() string { return "operationScope" }

// Set implements pflag.Value: one of karmada, members, all.
func (s *Scope) Set(v string) error {
	switch Scope(v) {
	case ScopeKarmada, ScopeMembers, ScopeAll:
		*s = Scope(v)
		return nil
	}
	return fmt.Errorf("must be one of %s, %s, %s", ScopeKarmada, ScopeMembers, ScopeAll)
}

// Flags are the flags that choose where a command runs.
type Flags struct {
	// Scope is --operation-scope; commands without it run in a member.
	Scope Scope
	// Cluster is -C/--cluster.
	Cluster string

	scoped bool
	fs     *pflag.FlagSet
}

// AddMemberFlags adds -C/--cluster to fs, for the commands that always run
// in a member (karmadactl logs and exec): -C is required.
func (f *Flags) AddMemberFlags(fs *pflag.FlagSet) {
	f.fs, f.scoped = fs, false
	fs.StringVarP(&f.Cluster, ClusterFlag, "C", "", "The member cluster to run in (required), reached through the control plane's clusters/{name}/proxy.")
}

// AddScopeFlags adds --operation-scope/-s and -C/--cluster to fs, for the
// commands that run in the control plane by default (karmadactl attach,
// api-resources, explain; and create, delete, edit, label, annotate,
// patch). karmadactl's -s is --operation-scope, so kubectl's --server
// (root flag of cp) is declared again on fs, without its -s.
func (f *Flags) AddScopeFlags(fs *pflag.FlagSet, cp *genericclioptions.ConfigFlags) {
	f.fs, f.scoped = fs, true
	f.Scope = ScopeKarmada
	fs.VarP(&f.Scope, ScopeFlag, "s", "Where the command operates: karmada (the control plane) or members (the member named by -C/--cluster). -C alone implies members.")
	fs.StringVarP(&f.Cluster, ClusterFlag, "C", "", "The member cluster to operate in, reached through the control plane's clusters/{name}/proxy.")
	AddServerFlag(fs, cp)
}

// AddServerFlag declares kubectl's --server (a root flag of cp, shorthand
// -s) again on fs without its shorthand, for a command whose -s is
// karmadactl's --operation-scope: the command's own flags shadow the
// root's, so --server keeps working there.
func AddServerFlag(fs *pflag.FlagSet, cp *genericclioptions.ConfigFlags) {
	if cp != nil && cp.APIServer != nil {
		fs.StringVar(cp.APIServer, serverFlag, *cp.APIServer, "The address and port of the control plane's API server.")
	}
}

// Target decides where the command runs from the parsed flags: "" for
// the control plane, or a member's name.
func (f *Flags) Target() (string, error) {
	scopeSet := f.fs != nil && f.fs.Changed(ScopeFlag)
	return Target(f.scoped, f.Scope, scopeSet, strings.TrimSpace(f.Cluster))
}

// Target decides where a command runs: "" for the control plane, or the
// member cluster. scoped says the command has --operation-scope (scope,
// set by the user when scopeSet); without it the command always runs in
// the member cluster names.
//
// -C alone implies --operation-scope=members (karmadactl ignores --cluster
// unless the scope is members, which surprised users); -C with an explicit
// --operation-scope=karmada is a contradiction and an error.
func Target(scoped bool, scope Scope, scopeSet bool, cluster string) (string, error) {
	if !scoped {
		if cluster == "" {
			return "", fmt.Errorf("must specify a cluster: -C/--%s", ClusterFlag)
		}
		return cluster, nil
	}
	switch scope {
	case ScopeKarmada:
		if cluster == "" {
			return "", nil
		}
		if scopeSet {
			return "", fmt.Errorf("--%s=%s operates in the control plane: drop -C/--%s=%s or use --%s=%s", ScopeFlag, ScopeKarmada, ClusterFlag, cluster, ScopeFlag, ScopeMembers)
		}
		return cluster, nil
	case ScopeMembers:
		if cluster == "" {
			return "", fmt.Errorf("must specify a member cluster: --%s=%s needs -C/--%s", ScopeFlag, ScopeMembers, ClusterFlag)
		}
		return cluster, nil
	default:
		return "", fmt.Errorf("invalid --%s %q: this command takes %s or %s", ScopeFlag, scope, ScopeKarmada, ScopeMembers)
	}
}
