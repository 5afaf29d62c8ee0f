package index

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2/search/query"
)

func TestQueryErrors(t *testing.T) {
	ix := openTest(t, Options{})
	tests := []struct {
		query   string
		pos     int
		message string // a part of QueryError.Msg
	}{
		{"kind:", 5, "unexpected end of query"},
		{"kind:Pod name:", 14, "unexpected end of query"},
		{`kind:Pod "unterminated phrase`, 9, "unterminated quote"},
		{`name:"abc`, 5, "unterminated quote"},
		{":Pod", 0, "unexpected ':'"},
		{"kind:Pod :x", 9, "unexpected ':'"},
		{"image:nginx:1.19", 11, "unexpected ':'"},
		{"+", 1, "unexpected end of query"},
		{"kind:Pod -", 10, "unexpected end of query"},
		{"kind:Pod^x", 8, "invalid boost"},
		{"nginx~abc", 5, "invalid fuzziness"},
		{"name:web~z", 8, "invalid fuzziness"},
		{"~2", 0, "unexpected '~'"},
		{"^2", 0, "unexpected '^'"},
		{"= x", 0, "unexpected '='"},
		{"name:=x", 5, "unexpected '='"},
		{"123:abc", 3, "unexpected ':'"},
		{"name:-abc", 6, "expected a number"},
		{"knd:Pod", 0, `unknown field "knd"`},
		{"phase:Running labelz.app:web", 14, `unknown field "labelz.app"`},
		{`"kin d":Pod`, 0, `unknown field "kin d"`},
		{"labels.:x", 0, "unknown field"},
		{"name:>5", 5, "range queries are not supported"},
		{`kind:Pod name:<="2024-01-01"`, 14, "range queries are not supported"},
		{"name:>abc", 6, "expected a number or a quoted date"},
		{`\`, 1, "empty query"},
		{"kind:Pod AND (", 9, "AND is not an operator"},
		{"a OR b", 2, "OR is not an operator"},
		{"NOT kind:Pod", 0, "NOT is not an operator"},
		{"kind:Pod || kind:Node", 9, "|| is not an operator"},
		{"(kind:Pod)", 0, "parentheses do not group"},
		{"kind:(Pod", 5, "parentheses do not group"},
		{"kind:Pod -abc)", 13, "parentheses do not group"},
		{"nginx( ~1", 5, "parentheses do not group"},
		{"é:x ü:", 8, "unexpected end of query"},
		{"name:/a(/", 5, "invalid regular expression"},
		{"name:/a+?/", 5, "lazy quantifiers are not supported"},
		{`name:/\bx/`, 5, "word boundaries are not supported"},
		{"name:/p1$/", 5, "anchors are not supported"},
		{`kind:Pod /x\^y/`, 9, "anchors are not supported"},
		{"name:p1~3", 7, "fuzziness must be 0 to 2"},
		{"p1~-1", 2, "fuzziness must be 0 to 2"},
		{"p1~NaN", 2, "fuzziness must be 0 to 2"},
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			_, err := ix.Search(context.Background(), Request{Query: tc.query})
			var qe *QueryError
			if !errors.As(err, &qe) {
				t.Fatalf("Search(%q) error = %v, want a *QueryError", tc.query, err)
			}
			if qe.Pos != tc.pos || !strings.Contains(qe.Msg, tc.message) || qe.Query != tc.query {
				t.Errorf("Search(%q) = %+v, want position %d and a message with %q", tc.query, qe, tc.pos, tc.message)
			}
			if !strings.HasPrefix(qe.Error(), "invalid query at position ") {
				t.Errorf("Error() = %q", qe.Error())
			}
		})
	}
}

// TestSyntaxAgreesWithBleve checks that checkSyntax finds a grammar error
// exactly when bleve's parser fails, so positions are reported for bleve's
// errors and no query bleve accepts is refused for its grammar.
func TestLuceneLookalikesAccepted(t *testing.T) {
	ix := openTest(t, Options{})
	for _, q := range []string{`kind:/(pod|node)/`, `"(a) AND b"`, `name:\(x\)`, "name:AND", "and", `\(x`, "text:OR~1"} {
		if _, err := ix.Search(context.Background(), Request{Query: q}); err != nil {
			t.Errorf("Search(%q): %v", q, err)
		}
	}
}

func TestSyntaxAgreesWithBleve(t *testing.T) {
	queries := []string{
		"a", "a b", "+a -b", "a:b", "a:b c:d", `"a b"`, `a:"b c"`, `"a":b`, "a~", "a~2", "a:b~", "a:b~1.5",
		"a^2", "a:b^2", "a^", "1", "1.5", "a:1", "a:-1", "a:>1", "a:>=1", "a:<1", "a:<=-1", `a:>"2020-01-01"`,
		`a:<="2020-01-01T00:00:00Z"`, "a:/b.*/", "/a/", "a*", "a:b*", `a\:b`, `a\ b`, `\a`, `a\`, "a-b", "a+b", "a=b",
		"a:b:c", "a::b", ":a", "a:", "+", "-", "+-a", "--a", "a^b", "a~b", "~", "^", "a:~1", "a:^2", "1:a", "1.2.3",
		"a:b~1^2", "a^2~1", `"a"~1`, `a:"b"~1`, "a:-b", "a:>", "a:>=", "a:>b", `"unterminated`, `a:"b`, "a\tb",
		"a \t b", "é", "日本:語", "a:>=-1.5", "a:1.2.3", "=", "a=", ">a", "a>b", "a:b c:", "a b:", "a:b -", "\\",
		`"a\"b"`, `"a\\"`, "a:b^2.5 c", "-a:b +c:d e", "a:1~1", "1~1", "a:-",
	}
	for _, q := range queries {
		_, bleveErr := query.NewQueryStringQuery(q).Parse()
		se := checkSyntax(q)
		grammarErr := se != nil && se.grammar
		if (bleveErr != nil) != grammarErr {
			t.Errorf("query %q: bleve error %v, checkSyntax %+v", q, bleveErr, se)
		}
	}
}

func TestLowerRegexp(t *testing.T) {
	tests := map[string]string{
		"ABC":          "abc",
		`A\SB`:         `a\Sb`,
		`\p{Lu}X`:      `\p{Lu}x`,
		`\PLX`:         `\PLx`,
		`(Pod|Node).*`: `(pod|node).*`,
		`X\`:           `x\`,
	}
	for in, want := range tests {
		if got := lowerRegexp(in); got != want {
			t.Errorf("lowerRegexp(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCanonicalField(t *testing.T) {
	tests := map[string]string{
		"kind":               fieldKind,
		"KIND":               fieldKind,
		"apiversion":         fieldAPIVersion,
		"labels":             fieldLabel,
		"Annotations":        fieldAnnotation,
		"images":             fieldImage,
		"labels.App":         "labels.App",
		"label.app.k8s.io/x": "labels.app.k8s.io/x",
		"Annotation.team":    "annotations.team",
		"labels.":            "",
		".app":               "",
		"_key":               "",
		"_rk":                "",
		"foo":                "",
	}
	for in, want := range tests {
		if got := canonicalField(in); got != want {
			t.Errorf("canonicalField(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestScoresText(t *testing.T) {
	tests := map[string]bool{
		"kind:Pod":              false,
		"kind:Pod -nginx":       false,
		"kind:Pod nginx":        true,
		"text:nginx":            true,
		"kind:Pod image:nginx*": false,
		`"a phrase"`:            true,
		"name:/x.*/ cluster:m1": false,
		"kind:Pod /nginx.*/":    true,
	}
	for q, want := range tests {
		parsed, err := parseQuery(q)
		if err != nil {
			t.Fatalf("parseQuery(%q): %v", q, err)
		}
		if got := scoresText(parsed); got != want {
			t.Errorf("scoresText(%q) = %v, want %v", q, got, want)
		}
	}
}

// TestSyntaxAgreesWithBleveRandom compares checkSyntax with bleve's parser
// on random queries made of the characters that matter to the lexer.
var randomQueries = 20000

func TestSyntaxAgreesWithBleveRandom(t *testing.T) {
	const alphabet = `ab1.:+-"\ ^~><=/*é`
	runes := []rune(alphabet)
	rng := rand.New(rand.NewPCG(1, 2))
	for range randomQueries {
		n := 1 + rng.IntN(9)
		var b strings.Builder
		for range n {
			b.WriteRune(runes[rng.IntN(len(runes))])
		}
		q := b.String()
		_, bleveErr := query.NewQueryStringQuery(q).Parse()
		se := checkSyntax(q)
		if (bleveErr != nil) != (se != nil && se.grammar) {
			t.Errorf("query %q: bleve error %v, checkSyntax %+v", q, bleveErr, se)
		}
	}
}
