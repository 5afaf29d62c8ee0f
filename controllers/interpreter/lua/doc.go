// Package lua runs the Lua scripts of ResourceInterpreterCustomizations
// (API-SPEC §5.1, §11.1) with gopher-lua.
//
// A script is parsed and compiled once per customization generation; the
// compiled function prototype is loaded into sandboxed states kept in a
// pool, so a call only converts its arguments, calls the script's global
// function under a deadline and converts the results back. Karmada compiles
// the script on every call.
//
// The sandbox opens only package (require reaches the preloaded "kube"
// module and nothing on disk), base without the functions that reach the
// environment or the metatables, table, string without gmatch and with a
// bounded rep, math, and os with time and date only.
package lua
