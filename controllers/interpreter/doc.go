// Package interpreter holds the resource interpreter contract (Interpreter)
// and the native built-in interpreter (Native) for well-known Kubernetes
// kinds, as described in API-SPEC §11.
//
// It owns how replicas, replica requirements, retention, status reflection,
// status aggregation, health and dependencies are read from or written to
// resource templates and member objects. It does not own the Lua
// (ResourceInterpreterCustomization) or webhook interpreters, nor the order in
// which interpreters are consulted; those live elsewhere and implement the
// same Interpreter interface.
package interpreter
