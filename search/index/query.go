package index

import (
	"context"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
)

// fieldAliases maps lower-cased field names of queries to index fields.
var fieldAliases = map[string]string{
	"cluster":     fieldCluster,
	"group":       fieldGroup,
	"version":     fieldVersion,
	"resource":    fieldResource,
	"kind":        fieldKind,
	"namespace":   fieldNamespace,
	"name":        fieldName,
	"apiversion":  fieldAPIVersion,
	"label":       fieldLabel,
	"labels":      fieldLabel,
	"annotation":  fieldAnnotation,
	"annotations": fieldAnnotation,
	"image":       fieldImage,
	"images":      fieldImage,
	"node":        fieldNode,
	"phase":       fieldPhase,
	"condition":   fieldCondition,
	"conditions":  fieldCondition,
	"text":        fieldText,
}

// canonicalField returns the index field a query's field name means, or ""
// if there is none. The per-key fields keep the case of the key.
func canonicalField(name string) string {
	if f, ok := fieldAliases[strings.ToLower(name)]; ok {
		return f
	}
	dot := strings.IndexByte(name, '.')
	if dot <= 0 || dot == len(name)-1 {
		return ""
	}
	switch strings.ToLower(name[:dot]) {
	case "label", "labels":
		return labelsPrefix + name[dot+1:]
	case "annotation", "annotations":
		return annotationsPrefix + name[dot+1:]
	}
	return ""
}

// matchAll tells whether q asks for every document.
func matchAll(q string) bool {
	q = strings.TrimSpace(q)
	return q == "" || q == "*"
}

// parseQuery parses q with bleve's query-string parser and rewrites the
// result for this index: unprefixed clauses become required, field names
// become index fields, wildcard and regular-expression terms are
// lower-cased, and match and phrase queries require all their terms. A
// query over a bound of limits.go is a *LimitError, any other it refuses a
// *QueryError.
func parseQuery(q string) (query.Query, error) {
	if len(q) > MaxQueryBytes {
		// First: everything below is linear in len(q).
		return nil, queryTooLong(q)
	}
	if matchAll(q) {
		return query.NewMatchAllQuery(), nil
	}
	out, err := parseBounded(q)
	if err != nil {
		return nil, err
	}
	if le := checkClauses(out); le != nil {
		return nil, le
	}
	return out, nil
}

// parseBounded is parseQuery for a query within MaxQueryBytes.
func parseBounded(q string) (query.Query, error) {
	parsed, err := query.NewQueryStringQuery(q).Parse()
	if err != nil {
		qe := &QueryError{Query: q, Pos: 0, Msg: strings.TrimPrefix(err.Error(), "parse error: ")}
		if se := checkSyntax(q); se != nil {
			qe.Pos, qe.Msg = se.pos, se.msg
		}
		return nil, qe
	}
	// bleve accepted q; reject what it accepts but this index cannot
	// answer. A grammar error here would be a disagreement with bleve's
	// parser, which stays the authority.
	if se := checkSyntax(q); se != nil && se.limit != nil {
		return nil, se.limit
	} else if se != nil && !se.grammar {
		return nil, &QueryError{Query: q, Pos: se.pos, Msg: se.msg}
	}
	bq, ok := parsed.(*query.BooleanQuery)
	if !ok {
		return rewrite(parsed), nil
	}
	if bq.Must != nil {
		bq.Must = rewrite(bq.Must)
	}
	if bq.MustNot != nil {
		bq.MustNot = rewrite(bq.MustNot)
	}
	if should, ok := bq.Should.(*query.DisjunctionQuery); ok {
		// AddMust keeps the query-string mode of bq, in which a clause
		// that analyzes to nothing (a stop word) is skipped rather than
		// matching nothing.
		bq.Should = nil
		for _, c := range should.Disjuncts {
			bq.AddMust(rewrite(c))
		}
	} else if bq.Should != nil {
		bq.Should = rewrite(bq.Should)
	}
	return bq, nil
}

// rewrite adapts one parsed query, recursively.
func rewrite(q query.Query) query.Query {
	switch t := q.(type) {
	case *query.ConjunctionQuery:
		for i, c := range t.Conjuncts {
			t.Conjuncts[i] = rewrite(c)
		}
	case *query.DisjunctionQuery:
		// A bare number parses as "match it or equal it as a number";
		// the index has no numeric fields.
		kept := t.Disjuncts[:0]
		for _, c := range t.Disjuncts {
			if _, ok := c.(*query.NumericRangeQuery); !ok {
				kept = append(kept, rewrite(c))
			}
		}
		t.Disjuncts = kept
		if len(kept) == 1 {
			return kept[0]
		}
	case *query.MatchQuery:
		t.FieldVal = fieldOrText(t.FieldVal)
		t.Operator = query.MatchQueryOperatorAnd
	case *query.MatchPhraseQuery:
		// A quoted keyword value is one term; quoted text is all its
		// words, in any order, since the text field has no positions.
		m := query.NewMatchQuery(t.MatchPhrase)
		m.FieldVal = fieldOrText(t.FieldVal)
		m.BoostVal = t.BoostVal
		m.Operator = query.MatchQueryOperatorAnd
		return m
	case *query.WildcardQuery:
		if t.FieldVal == "" && t.Wildcard == "*" {
			return query.NewMatchAllQuery()
		}
		t.FieldVal = fieldOrText(t.FieldVal)
		t.Wildcard = strings.ToLower(t.Wildcard)
	case *query.RegexpQuery:
		t.FieldVal = fieldOrText(t.FieldVal)
		t.Regexp = lowerRegexp(t.Regexp)
	}
	return q
}

// fieldOrText maps a query field name to its index field, "" to the text
// field. Unknown names were rejected by checkSyntax.
func fieldOrText(name string) string {
	if name == "" {
		return fieldText
	}
	if f := canonicalField(name); f != "" {
		return f
	}
	return name
}

// lowerRegexp lower-cases the literal characters of a regular expression,
// leaving escape sequences such as \S or \p{Lu} as they are.
func lowerRegexp(re string) string {
	var b strings.Builder
	b.Grow(len(re))
	for i := 0; i < len(re); {
		r, n := utf8.DecodeRuneInString(re[i:])
		if r != '\\' {
			b.WriteRune(unicode.ToLower(r))
			i += n
			continue
		}
		end := i + n
		if end < len(re) {
			_, m := utf8.DecodeRuneInString(re[end:])
			c := re[end]
			end += m
			if (c == 'p' || c == 'P') && end < len(re) {
				// A class name: \pL or \p{Greek}.
				if re[end] != '{' {
					_, m := utf8.DecodeRuneInString(re[end:])
					end += m
				} else if j := strings.IndexByte(re[end:], '}'); j >= 0 {
					end += j + 1
				}
			}
		}
		b.WriteString(re[i:end])
		i = end
	}
	return b.String()
}

// scoresText tells whether q has a required clause on the text field, the
// only field that scores; without one, every hit scores the same.
func scoresText(q query.Query) bool {
	switch t := q.(type) {
	case *query.BooleanQuery:
		return t.Must != nil && scoresText(t.Must) || t.Should != nil && scoresText(t.Should)
	case *query.ConjunctionQuery:
		return slices.ContainsFunc(t.Conjuncts, scoresText)
	case *query.DisjunctionQuery:
		return slices.ContainsFunc(t.Disjuncts, scoresText)
	case query.FieldableQuery:
		return t.Field() == fieldText || t.Field() == ""
	}
	return false
}

// zeroKeywordScores makes every keyword clause of q score zero, so that
// keyword clauses select hits without reordering them: only text ranks.
// (Keyword fields are indexed without frequencies and norms, on which
// bleve's scorer returns NaN.)
func zeroKeywordScores(q query.Query) query.Query {
	switch t := q.(type) {
	case *query.BooleanQuery:
		if t.Must != nil {
			t.Must = zeroKeywordScores(t.Must)
		}
		if t.Should != nil {
			t.Should = zeroKeywordScores(t.Should)
		}
	case *query.ConjunctionQuery:
		for i, c := range t.Conjuncts {
			t.Conjuncts[i] = zeroKeywordScores(c)
		}
	case *query.DisjunctionQuery:
		for i, c := range t.Disjuncts {
			t.Disjuncts[i] = zeroKeywordScores(c)
		}
	case query.FieldableQuery:
		if t.Field() != fieldText && t.Field() != "" {
			return query.NewCustomScoreQueryWithScorer(t, zeroScore, nil, nil)
		}
	}
	return q
}

// zeroScore is the score of a keyword clause.
func zeroScore(context.Context, *search.DocumentMatch) (float64, error) { return 0, nil }
