package overrides

import (
	"fmt"
	"regexp"
	"strings"
)

// The grammar of image references, as documented by
// github.com/distribution/reference (grammar.go) and used by Karmada's
// pkg/util/imageparser:
//
//	reference := name [ ":" tag ] [ "@" digest ]
//	name      := [ domain "/" ] path-component [ "/" path-component ]*
const (
	refAlphanumeric = `[a-z0-9]+`
	refSeparator    = `(?:[._]|__|[-]+)`
	refDomainComp   = `(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])`
	refDomain       = `(?:` + refDomainComp + `(?:\.` + refDomainComp + `)*|\[(?:[a-fA-F0-9:]+)\])(?::[0-9]+)?`
	refPathComp     = refAlphanumeric + `(?:` + refSeparator + refAlphanumeric + `)*`
	refName         = `(?:` + refDomain + `/)?` + refPathComp + `(?:/` + refPathComp + `)*`
	refTag          = `[\w][\w.-]{0,127}`
	refDigest       = `[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*[:][[:xdigit:]]{32,}`
	// refNameMaxLength is the longest repository name a registry accepts.
	refNameMaxLength = 255
)

var (
	referenceRegexp = regexp.MustCompile(`^(` + refName + `)(?::(` + refTag + `))?(?:@(` + refDigest + `))?$`)
	tagRegexp       = regexp.MustCompile(`^` + refTag + `$`)
	digestRegexp    = regexp.MustCompile(`^` + refDigest + `$`)
)

// imageRef is an image reference split into the components an image
// overrider changes: [registry/]repository[:tag|@digest].
type imageRef struct {
	registry   string
	repository string
	// tag and digest never both hold a value: as in Karmada, a reference with
	// both keeps the tag only.
	tag    string
	digest string
}

// parseImage splits image like Karmada's imageparser.Parse. The registry is
// the part before the first '/' only when it looks like a host (contains '.'
// or ':' or is localhost), so library/nginx has no registry.
func parseImage(image string) (imageRef, error) {
	m := referenceRegexp.FindStringSubmatch(image)
	if m == nil {
		return imageRef{}, fmt.Errorf("invalid image reference %q", image)
	}
	if len(m[1]) > refNameMaxLength {
		return imageRef{}, fmt.Errorf("invalid image reference %q: name longer than %d characters", image, refNameMaxLength)
	}
	var r imageRef
	r.repository = m[1]
	if i := strings.IndexByte(m[1], '/'); i >= 0 {
		if host := m[1][:i]; strings.ContainsAny(host, ".:") || host == "localhost" {
			r.registry, r.repository = host, m[1][i+1:]
		}
	}
	if m[2] != "" {
		r.tag = m[2]
	} else {
		r.digest = m[3]
	}
	return r, nil
}

// String joins the components back. Like Karmada it does not validate the
// result: removing the repository of registry.io/app:1 gives registry.io/:1.
func (r imageRef) String() string {
	s := r.repository
	if r.registry != "" {
		s = r.registry + "/" + s
	}
	switch {
	case r.tag != "":
		return s + ":" + r.tag
	case r.digest != "":
		return s + "@" + r.digest
	}
	return s
}

// tagOrDigest returns the tag, or the digest when there is no tag.
func (r imageRef) tagOrDigest() string {
	if r.tag != "" {
		return r.tag
	}
	return r.digest
}

// setTagOrDigest sets v as the tag when it is a valid tag, as the digest when
// it is a valid digest, and otherwise leaves r unchanged, as Karmada does.
func (r *imageRef) setTagOrDigest(v string) {
	switch {
	case tagRegexp.MatchString(v):
		r.tag, r.digest = v, ""
	case digestRegexp.MatchString(v):
		r.tag, r.digest = "", v
	}
}

// removeTagOrDigest drops the tag, or the digest when there is no tag.
func (r *imageRef) removeTagOrDigest() {
	if r.tag != "" {
		r.tag = ""
		return
	}
	r.digest = ""
}
