// Package lua runs the Lua scripts of ResourceInterpreterCustomizations with
// gopher-lua (docs/compatibility.md, The resource interpreter).
//
// A script is parsed and compiled once per customization generation; the
// compiled function prototype is loaded into sandboxed states kept in a
// pool, so a call only converts its arguments, calls the script's global
// function under a deadline and converts the results back. Karmada compiles
// the script on every call.
//
// The sandbox opens only package (require reaches the preloaded "kube"
// module and nothing on disk), base without the functions that reach the
// environment or the metatables, table, string without gmatch and gfind,
// math, and os with time and date only.
//
// # Bounded work
//
// A script is written by whoever may create a customization, and runs in
// flotilla-apiserver and every agent, so each call is bounded whatever the
// script and its input (Limits, set per script with CompileWithLimits):
//
//   - Time: the call, and the conversion of its results, run under a
//     deadline (Timeout, 1 s). gopher-lua checks it between instructions;
//     the native functions whose work grows with their input check it
//     every few thousand steps: the pattern functions find, match and gsub
//     (pattern.go, a port of Lua 5.1's matcher: gopher-lua's own cannot be
//     interrupted and recurses once per repeated character) and table.sort.
//   - Strings: string.rep, string.format, string.gsub, table.concat and the
//     .. operator refuse to build a string over MaxStringBytes (1 MiB)
//     before building it; string.lower, upper, reverse and char and os.date
//     build at most a few times their bounded arguments. The bytes all of
//     them build in a call add up to at most MaxCallBytes (16 MiB); past
//     that the call fails even if the script catches the error. .. cannot
//     be bounded inside gopher-lua, which runs it as one instruction, so
//     scripts are compiled with every .. chain turned into a call of a
//     checked function (rewrite).
//   - Tables: the values a call adds to tables add up to at most
//     MaxTableValues (200,000), garbage included; past that the call
//     fails even if the script catches the error. A value stored under a
//     key its table did not have counts one, a table built one and its
//     entries, a closure one and its upvalues; replacing or removing a
//     value counts nothing. gopher-lua stores into a table, builds a
//     table and makes a closure in single instructions, which cannot be
//     hooked, so scripts are compiled with every assignment to a table
//     field, table constructor and function expression turned into a
//     call of a counting function (rewrite); table.insert and the tables
//     of os.date("*t") count too. An index past the end of a table's
//     array part also counts, before they are made, the nils gopher-lua
//     fills the array with up to it: t[2^26-1] = 1 would make 2^26 of
//     them, a gigabyte, in one instruction lasting seconds. A value
//     takes from 16 bytes, an element of an array, to about 1.3 KB, the
//     first field assigned to a table built empty (gopher-lua then makes
//     it a hash part for 32 fields): the values a call adds take at most
//     about 270 MB, on the machine this was measured on.
//   - Stacks: the call stack holds 256 frames and the value stack a fixed
//     5120 values (gopher-lua's CallStackSize and RegistrySize, with
//     RegistryMaxSize 0), so deep recursion, unpack or string.byte over a
//     long string fail instead of growing them.
//   - Results: converting results to Go (and the tables handed to the kube
//     helpers) visits at most MaxResultValues values (100,000), a table
//     reached twice counting twice, so a table sharing its subtables cannot
//     unfold exponentially, and at most MaxResultBytes (16 MiB) of strings.
//   - Errors carry no traceback: gopher-lua's has one line per tail call,
//     millions within the deadline.
//
// string.format keeps gopher-lua's formatting by Go's fmt, without what Lua
// does not have ('*' widths, '[n]' arguments) and with widths and
// precisions of at most 1000.
//
// What stays bounded by the deadline only: the traceback gopher-lua
// builds when a script catches, with pcall, a call stack overflow after
// making millions of tail calls in one frame.
package lua
