// Package registry holds the REST storage of every karmada.io kind served by
// flotilla-apiserver: one package per resource with its strategy (defaulting
// and validation), storage and table output.
package registry
