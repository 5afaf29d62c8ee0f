// Package controllers holds the controllers embedded in flotilla-apiserver,
// one package per controller, plus the scheduler and the resource
// interpreter. No controller imports another.
package controllers
