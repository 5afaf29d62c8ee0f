// Package interpret is flotillactl interpret (karmadactl interpret): it
// runs one operation of a ResourceInterpreterCustomization on objects read
// from files, locally, with the controllers' own Lua interpreter
// (interpreter/lua), without a control plane, and prints the result as
// YAML or JSON or as karmadactl's blocks. It also checks customizations as
// admission does (--check) and documents each rule (--show-doc).
//
// It owns reading the files (strictly, as the API server decodes),
// choosing the customization that targets the object's kind, and the
// output. It does not own the interpreter (interpreter/) nor the
// customization API (apis/config).
package interpret
