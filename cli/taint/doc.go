// Package taint changes the taints of Cluster objects, as karmadactl
// taint, cordon and uncordon do: kubectl taint's syntax (parseTaints, a
// pure function, and applyTaints, which computes the new taints), and the
// unschedulable taint cordon adds and uncordon removes. A change is read,
// computed and written with a retry on conflicts; an unchanged Cluster is
// not written.
//
// It does not own the command line (cmd/flotillactl) nor what the
// scheduler makes of the taints (placement/).
package taint
