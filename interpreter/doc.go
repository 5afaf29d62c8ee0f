// Package interpreter holds the resource interpreter contract (Interpreter) and
// the native built-in interpreter (Native) for well-known Kubernetes kinds
// (docs/compatibility.md, The resource interpreter).
//
// It owns how replicas, replica requirements, retention, status reflection,
// status aggregation, health and dependencies are read from or written to
// resource templates and member objects, and the order in which
// interpreters are consulted (Chain). The Lua (ResourceInterpreterCustomization),
// webhook and shipped third-party interpreters live in the sub-packages
// and implement the same Interpreter interface.
package interpreter
