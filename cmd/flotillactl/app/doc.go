// Package app holds the commands of flotillactl (and of the kubectl plugin
// kubectl-flotilla, the same binary under another name).
//
// It owns what karmadactl join/unjoin/taint/cordon and token/register/unregister
// do to a member cluster and to the control plane (register: bootstrap-token
// discovery with a pinned CA, the agent's certificate request, its kubeconfig
// and member RBAC; the approval is controllers/agentregistration's): the names, labels and fields of the objects it
// creates, updates and deletes; and interpret, which runs a
// ResourceInterpreterCustomization locally with the controllers' own Lua
// interpreter (interpreter/lua), without a control plane. It does not own those APIs (apis/), nor the
// controllers that later act on the Cluster objects it writes.
//
// logs, exec, attach, api-resources, api-versions, explain, create, delete,
// edit, label, annotate and patch are kubectl's own commands run over
// cli/memberfactory (the control plane, or with -C a member through its
// proxy); top is cli/top's; version, completion and options are thin.
//
// Every command talks to the control plane through the client-go
// configuration given by the usual kubectl flags (--kubeconfig, --context,
// ...); join and unjoin also talk to the member cluster through
// --cluster-kubeconfig/--cluster-context. The I/O-free parts (taint parsing,
// desired objects) are plain functions; the rest takes its clients as
// arguments so tests run against fake clientsets.
//
// apply (kubectl apply plus karmadactl's policies, cli/apply) and promote
// (a member's object made a template with its policy, cli/promote) are
// thin commands over their packages.
package app
