package index

import (
	"strings"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/document"
	bindex "github.com/blevesearch/bleve_index_api"
)

const (
	// keywordOptions index a keyword field without stored values, term
	// vectors, doc values, frequencies or norms: keyword terms select, they
	// do not rank (see zeroKeywordScores).
	keywordOptions = bindex.IndexField | bindex.SkipFreqNorm
	// keyOptions add doc values to a keyword field.
	keyOptions = keywordOptions | bindex.DocValues
	// textOptions index the text field with frequencies and norms, for
	// scoring, and without term vectors: positions would make the index
	// three times larger and a bulk load a quarter slower, for phrase
	// queries only (see rewrite).
	textOptions = bindex.IndexField
)

// buildDocument turns the extracted fields into a bleve document. Fields are
// pre-analyzed by termsField and textField, so the document bypasses the
// mapping; the mapping still names the analyzers the query side uses.
func (ix *Index) buildDocument(id string, f *docFields) *document.Document {
	k := f.key
	d := document.NewDocument(id)
	group := k.Group
	if group == "" {
		group = coreGroup
	}
	kw := func(name string, opts bindex.FieldIndexingOptions, exact bool, terms ...string) {
		n := 0
		for _, t := range terms {
			if t != "" {
				terms[n] = t
				n++
			}
		}
		if n > 0 {
			d.AddField(&termsField{name: name, terms: terms[:n], options: opts, exact: exact})
		}
	}
	kw(fieldCluster, keywordOptions, false, k.Cluster)
	kw(fieldGroup, keywordOptions, false, group)
	kw(fieldVersion, keywordOptions, false, k.Version)
	kw(fieldResource, keywordOptions, false, k.Resource)
	kw(fieldKind, keywordOptions, false, k.Kind)
	kw(fieldNamespace, keywordOptions, false, k.Namespace)
	kw(fieldName, keywordOptions, false, k.Name)
	kw(fieldAPIVersion, keywordOptions, false, apiVersion(k.Group, k.Version))
	kw(fieldScopeResource, keywordOptions, true, scopeResourceTerm(k.Cluster, k.Group, k.Resource))
	if k.Namespace != "" {
		kw(fieldScopeNamespace, keywordOptions, true, scopeNamespaceTerm(k.Cluster, k.Group, k.Resource, k.Namespace))
	}
	kw(fieldKey, keyOptions, true, id)

	kvFields(d, fieldLabel, labelsPrefix, f.labels)
	kvFields(d, fieldAnnotation, annotationsPrefix, f.annotations)

	var images []string
	for _, img := range f.images {
		images = imageTerms(img, images)
	}
	kw(fieldImage, keywordOptions, false, images...)
	kw(fieldNode, keywordOptions, false, f.node)
	kw(fieldPhase, keywordOptions, false, f.phase)
	kw(fieldCondition, keywordOptions, false, f.conditions...)
	if len(f.text) > 0 {
		d.AddField(&textField{name: fieldText, values: f.text, options: textOptions, analyzer: ix.textAnalyzer})
	}
	return d
}

// kvFields adds the "key=value" field and the per-key fields of labels or
// annotations.
func kvFields(d *document.Document, name, prefix string, kvs []keyValue) {
	if len(kvs) == 0 {
		return
	}
	terms := make([]string, 0, len(kvs))
	for _, kv := range kvs {
		terms = append(terms, truncate(kv.key+"="+kv.value, maxKeywordBytes))
		if kv.value != "" {
			d.AddField(&termsField{name: prefix + kv.key, terms: []string{kv.value}, options: keywordOptions})
		}
	}
	d.AddField(&termsField{name: name, terms: terms, options: keywordOptions})
}

// apiVersion joins group and version the way Kubernetes does.
func apiVersion(group, version string) string {
	if group == "" {
		return version
	}
	return group + "/" + version
}

// termsField is a pre-analyzed keyword field: each term is one token,
// lower-cased unless exact, cut to maxKeywordBytes.
type termsField struct {
	name    string
	terms   []string
	options bindex.FieldIndexingOptions
	exact   bool

	freqs bindex.TokenFrequencies
}

var _ document.Field = (*termsField)(nil)

// Analyze builds the token frequencies, once: the writer analyzes documents
// before bleve asks again.
func (f *termsField) Analyze() {
	if f.freqs != nil {
		return
	}
	f.freqs = make(bindex.TokenFrequencies, len(f.terms))
	for _, t := range f.terms {
		t = truncate(t, maxKeywordBytes)
		if !f.exact {
			t = strings.ToLower(t)
		}
		tf, ok := f.freqs[t]
		if !ok {
			tf = &bindex.TokenFreq{Term: []byte(t)}
			f.freqs[t] = tf
		}
		if !f.options.SkipFreqNorm() {
			tf.SetFrequency(tf.Frequency() + 1)
		}
	}
}

func (f *termsField) Name() string                                      { return f.name }
func (f *termsField) ArrayPositions() []uint64                          { return nil }
func (f *termsField) Options() bindex.FieldIndexingOptions              { return f.options }
func (f *termsField) Value() []byte                                     { return nil }
func (f *termsField) EncodedFieldType() byte                            { return 't' }
func (f *termsField) AnalyzedLength() int                               { return len(f.terms) }
func (f *termsField) AnalyzedTokenFrequencies() bindex.TokenFrequencies { return f.freqs }

func (f *termsField) NumPlainTextBytes() uint64 {
	var n uint64
	for _, t := range f.terms {
		n += uint64(len(t))
	}
	return n
}

func (f *termsField) Size() int {
	n := 64 + len(f.name)
	for _, t := range f.terms {
		n += 16 + 2*len(t)
	}
	return n
}

// textField is the free-text field, analyzed by the text analyzer.
type textField struct {
	name     string
	values   []string
	options  bindex.FieldIndexingOptions
	analyzer analysis.Analyzer

	length int
	freqs  bindex.TokenFrequencies
}

var _ document.Field = (*textField)(nil)

// Analyze runs the analyzer once over the values joined by newlines, which
// end every word. It does the work once: the writer analyzes documents
// before bleve asks again.
func (f *textField) Analyze() {
	if f.freqs != nil {
		return
	}
	n := len(f.values)
	for _, v := range f.values {
		n += len(v)
	}
	buf := make([]byte, 0, n)
	for _, v := range f.values {
		buf = append(buf, v...)
		buf = append(buf, '\n')
	}
	tokens := f.analyzer.Analyze(buf)
	f.length = len(tokens)
	f.freqs = analysis.TokenFrequency(tokens, nil, f.options)
}

func (f *textField) Name() string                                      { return f.name }
func (f *textField) ArrayPositions() []uint64                          { return nil }
func (f *textField) Options() bindex.FieldIndexingOptions              { return f.options }
func (f *textField) Value() []byte                                     { return nil }
func (f *textField) EncodedFieldType() byte                            { return 't' }
func (f *textField) AnalyzedLength() int                               { return f.length }
func (f *textField) AnalyzedTokenFrequencies() bindex.TokenFrequencies { return f.freqs }

func (f *textField) NumPlainTextBytes() uint64 {
	var n uint64
	for _, v := range f.values {
		n += uint64(len(v))
	}
	return n
}

// Size estimates the memory the field takes, for bleve's accounting,
// without walking the token frequencies: bleve asks for every document.
func (f *textField) Size() int {
	n := 64 + len(f.name)
	for _, v := range f.values {
		n += 16 + 4*len(v)
	}
	return n
}
