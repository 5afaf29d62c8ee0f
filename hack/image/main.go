// Command image builds Flotilla's container image without a container
// runtime and without a base image: one OCI image, made of two layers built
// here from scratch, that holds every binary of --bin-dir (the Makefile puts
// flotilla-apiserver, flotilla-agent and flotillactl there) under
// /usr/local/bin. The entrypoint is flotilla-apiserver; the chart runs the
// other binaries by setting the container's command.
//
// The image is written twice under --output: as an OCI image layout in
// flotilla/ (for crane push, skopeo copy oci:...) and as a docker-archive in
// flotilla.tar (for docker load). The build is reproducible: every time in
// the image is --created (SOURCE_DATE_EPOCH by default), so the same inputs
// give the same digest.
//
// Usage (make image runs it):
//
//	go run ./hack/image --bin-dir _output/image/bin --output _output/image \
//	  --version v0.1.0 --revision $(git rev-parse HEAD)
package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"time"

	specsv1 "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/spf13/pflag"
)

func main() {
	o := options{
		name:       "flotilla",
		version:    "dev",
		source:     "https://github.com/flotilla-io/flotilla",
		entrypoint: "flotilla-apiserver",
		arch:       runtime.GOARCH,
		caFile:     "/etc/ssl/certs/ca-certificates.crt",
	}
	created := os.Getenv("SOURCE_DATE_EPOCH")
	if created == "" {
		created = "0"
	}
	fs := pflag.NewFlagSet("image", pflag.ExitOnError)
	fs.StringVar(&o.binDir, "bin-dir", o.binDir, "directory of the static binaries to put in /usr/local/bin (symbolic links within it are kept)")
	fs.StringVar(&o.output, "output", o.output, "directory to write the OCI layout (<output>/"+o.name+") and the docker-archive (<output>/"+o.name+".tar) into")
	fs.StringVar(&o.version, "version", o.version, "the image's tag and its "+specsv1.AnnotationVersion+" label")
	fs.StringVar(&o.revision, "revision", o.revision, "the source revision, for the "+specsv1.AnnotationRevision+" label")
	fs.StringVar(&o.source, "source", o.source, "the source repository, for the "+specsv1.AnnotationSource+" label")
	fs.StringVar(&o.entrypoint, "entrypoint", o.entrypoint, "the binary of --bin-dir the image runs by default")
	fs.StringVar(&o.arch, "arch", o.arch, "the architecture of the binaries and of the image (linux only)")
	fs.StringVar(&o.caFile, "ca-file", o.caFile, "the CA bundle to install as "+caPath+" (Debian package ca-certificates)")
	fs.StringVar(&created, "created", created, "the image's creation time and every file's modification time, in seconds since the epoch (default $SOURCE_DATE_EPOCH, else 0)")
	_ = fs.Parse(os.Args[1:]) // ExitOnError

	secs, err := strconv.ParseInt(created, 10, 64)
	if err != nil {
		fmt.Fprintf(os.Stderr, "image: --created %q is not a number of seconds: %v\n", created, err)
		os.Exit(2)
	}
	o.created = time.Unix(secs, 0).UTC()
	if o.binDir == "" || o.output == "" {
		fmt.Fprintln(os.Stderr, "image: --bin-dir and --output are required")
		os.Exit(2)
	}

	res, err := run(o)
	if err != nil {
		fmt.Fprintf(os.Stderr, "image: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("%s %s (%s, %d bytes compressed, %d uncompressed)\n", res.ref, res.digest, o.arch, res.compressed, res.uncompressed)
}
