package index

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/registry"
	"github.com/blevesearch/bleve/v2/search/query"
)

// This file checks a query string against the grammar of bleve's
// query-string parser (search/query/query_string.y and its lexer), keeping
// the byte offset of every token, because bleve's parser reports errors
// without a position. bleve's parser stays the authority on what parses:
// checkSyntax only runs to place an error bleve reported, and to reject what
// bleve accepts but this index cannot answer (unknown fields, ranges).

// QueryError is a syntax error in Request.Query, or a field or construct the
// index does not support.
type QueryError struct {
	// Query is the query string.
	Query string
	// Pos is the byte offset in Query of the offending token; len(Query)
	// for an unexpected end.
	Pos int
	// Msg says what is wrong.
	Msg string
}

// Error names the position and the problem.
func (e *QueryError) Error() string {
	return fmt.Sprintf("invalid query at position %d: %s", e.Pos, e.Msg)
}

// tokType is a token of bleve's query-string lexer.
type tokType uint8

const (
	tEOF tokType = iota
	tString
	tPhrase
	tNumber
	tPlus
	tMinus
	tColon
	tGreater
	tLess
	tEqual
	tBoost
	tTilde
)

// token is one lexed token and its byte offset.
type token struct {
	typ  tokType
	text string
	pos  int
	// paren is 1 + the byte offset of the first unescaped parenthesis of a
	// string, 0 if it has none.
	paren int
}

func (t token) describe() string {
	switch t.typ {
	case tEOF:
		return "end of query"
	case tPhrase:
		return fmt.Sprintf("%q", t.text)
	case tBoost:
		return "'^'"
	case tTilde:
		return "'~'"
	default:
		return "'" + t.text + "'"
	}
}

// syntaxError is a problem found by checkSyntax; grammar tells whether bleve's
// parser rejects it too.
type syntaxError struct {
	pos     int
	msg     string
	grammar bool
	// limit, when set, is the bound the query is over (limits.go).
	limit *LimitError
}

// lexQuery splits q into tokens the way bleve's queryStringLex does.
func lexQuery(q string) ([]token, *syntaxError) {
	var toks []token
	i := 0
	next := func() (rune, int) {
		if i >= len(q) {
			return 0, 0
		}
		r, n := utf8.DecodeRuneInString(q[i:])
		return r, n
	}
	for i < len(q) {
		r, n := next()
		start := i
		switch {
		case r == '"':
			i += n
			var b strings.Builder
			esc, closed := false, false
			for i < len(q) {
				r, n := next()
				i += n
				switch {
				case esc:
					esc = false
					b.WriteString(unescapeRune(r))
				case r == '\\':
					esc = true
				case r == '"':
					closed = true
				default:
					b.WriteRune(r)
				}
				if closed {
					break
				}
			}
			if !closed {
				return nil, &syntaxError{pos: start, msg: "unterminated quote", grammar: true}
			}
			toks = append(toks, token{tPhrase, b.String(), start, 0})
		case strings.ContainsRune("+-:><=", r):
			i += n
			typ := map[rune]tokType{'+': tPlus, '-': tMinus, ':': tColon, '>': tGreater, '<': tLess, '=': tEqual}[r]
			toks = append(toks, token{typ, string(r), start, 0})
		case r == '^' || r == '~':
			i += n
			text := lexUntilSpace(q, &i)
			if text == "" {
				text = "1"
			}
			typ := tBoost
			if r == '~' {
				typ = tTilde
			}
			toks = append(toks, token{typ, text, start, 0})
		case r == '\\' || !unicode.IsSpace(r):
			typ, text, paren, ok := lexWord(q, &i)
			if ok {
				toks = append(toks, token{typ, text, start, paren})
			}
		default:
			i += n
		}
	}
	return toks, nil
}

// lexUntilSpace reads a boost or fuzziness value: everything up to an
// unescaped space.
func lexUntilSpace(q string, i *int) string {
	var b strings.Builder
	esc := false
	for *i < len(q) {
		r, n := utf8.DecodeRuneInString(q[*i:])
		if !esc && r == ' ' {
			*i += n
			break
		}
		*i += n
		switch {
		case esc:
			esc = false
			b.WriteString(unescapeRune(r))
		case r == '\\':
			esc = true
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// lexWord reads a string or number token starting at *i, which ends at an
// unescaped space (consumed) or before an unescaped ':', '^' or '~', and
// notes its first unescaped parenthesis (see token.paren). A lone trailing
// backslash yields no token, as in bleve.
func lexWord(q string, i *int) (typ tokType, text string, paren int, ok bool) {
	var b strings.Builder
	esc := false
	number := true
	seenDot := false
	first := true
	for *i < len(q) {
		r, n := utf8.DecodeRuneInString(q[*i:])
		if !esc && (r == ' ' || r == ':' || r == '^' || r == '~') && !first {
			if r == ' ' {
				*i += n
			}
			break
		}
		*i += n
		switch {
		case esc:
			esc = false
			number = false
			b.WriteString(unescapeRune(r))
		case r == '\\':
			esc = true
			if first {
				number = false
			}
		default:
			if (r == '(' || r == ')') && paren == 0 {
				paren = *i - n + 1
			}
			if first {
				number = unicode.IsDigit(r)
			} else if number {
				if r == '.' && !seenDot {
					seenDot = true
				} else if !unicode.IsDigit(r) {
					number = false
				}
			}
			b.WriteRune(r)
		}
		first = false
	}
	if b.Len() == 0 && !number {
		return 0, "", 0, false
	}
	if number {
		return tNumber, b.String(), paren, true
	}
	return tString, b.String(), paren, true
}

// unescapeRune is bleve's unescape: a reserved character loses its
// backslash, any other keeps it.
func unescapeRune(r rune) string {
	if strings.ContainsRune(`+-=&|><!(){}[]^"~*?:\/ `, r) {
		return string(r)
	}
	return `\` + string(r)
}

// syntaxChecker walks the tokens with bleve's grammar.
type syntaxChecker struct {
	toks []token
	i    int
	end  int
	// unsupported is the first construct bleve accepts and this index
	// does not, or that is over a bound; it is reported only if the
	// grammar holds.
	unsupported *syntaxError
	// patterns are the positions of the wildcard, regular-expression and
	// fuzzy terms.
	patterns []int
}

// unsupportedAt records an unsupported construct.
func (c *syntaxChecker) unsupportedAt(pos int, msg string) {
	if c.unsupported == nil {
		c.unsupported = &syntaxError{pos: pos, msg: msg}
	}
}

// limitAt records a construct over a bound.
func (c *syntaxChecker) limitAt(pos int, le *LimitError) {
	if c.unsupported == nil {
		c.unsupported = &syntaxError{pos: pos, msg: le.Msg, limit: le}
	}
}

func (c *syntaxChecker) peek() token {
	if c.i < len(c.toks) {
		return c.toks[c.i]
	}
	return token{typ: tEOF, pos: c.end}
}

func (c *syntaxChecker) next() token {
	t := c.peek()
	if c.i < len(c.toks) {
		c.i++
	}
	return t
}

// checkSyntax returns the first error in q, or nil.
func checkSyntax(q string) *syntaxError {
	toks, err := lexQuery(q)
	if err != nil {
		return err
	}
	c := &syntaxChecker{toks: toks, end: len(q)}
	if len(toks) == 0 {
		return &syntaxError{pos: len(q), msg: "empty query", grammar: true}
	}
	for c.peek().typ != tEOF {
		if err := c.part(); err != nil {
			return err
		}
	}
	c.checkPatternCount()
	return c.unsupported
}

// unexpected is the grammar error of a token that cannot come where it is.
func unexpected(t token, want string) *syntaxError {
	return &syntaxError{pos: t.pos, msg: fmt.Sprintf("unexpected %s, expected %s", t.describe(), want), grammar: true}
}

// part checks searchPart: an optional + or -, a term, an optional boost.
func (c *syntaxChecker) part() *syntaxError {
	if t := c.peek(); t.typ == tPlus || t.typ == tMinus {
		c.next()
	}
	t := c.next()
	switch t.typ {
	case tString, tPhrase:
		if c.peek().typ == tColon {
			if t.typ == tString {
				c.checkWord(t, false)
			}
			if canonicalField(t.text) == "" {
				c.unsupportedAt(t.pos, fmt.Sprintf("unknown field %q", t.text))
			}
			c.next()
			if err := c.value(); err != nil {
				return err
			}
		} else if t.typ == tString {
			c.checkWord(t, true)
			if err := c.term(t, false); err != nil {
				return err
			}
		}
	case tNumber:
		if err := checkNumber(t); err != nil {
			return err
		}
	default:
		return unexpected(t, "a term")
	}
	if b := c.peek(); b.typ == tBoost {
		c.next()
		if _, err := strconv.ParseFloat(b.text, 64); err != nil {
			return &syntaxError{pos: b.pos, msg: fmt.Sprintf("invalid boost %q", b.text), grammar: true}
		}
	}
	return nil
}

// checkNumber refuses a number token bleve's grammar cannot read as a
// float: the lexer takes any Unicode digit (٠, ５) for a number, the
// parser then fails on it.
func checkNumber(t token) *syntaxError {
	if _, err := strconv.ParseFloat(t.text, 64); err != nil {
		return &syntaxError{pos: t.pos, msg: fmt.Sprintf("%q is not a number this query syntax reads (digits 0-9 and one '.')", t.text), grammar: true}
	}
	return nil
}

// value checks what follows "field:".
func (c *syntaxChecker) value() *syntaxError {
	t := c.next()
	switch t.typ {
	case tString:
		c.checkWord(t, false)
		return c.term(t, true)
	case tNumber:
		return checkNumber(t)
	case tPhrase:
	case tMinus:
		n := c.next()
		if n.typ != tNumber {
			return unexpected(n, "a number")
		}
		return checkNumber(n)
	case tGreater, tLess:
		if c.peek().typ == tEqual {
			c.next()
		}
		switch n := c.next(); n.typ {
		case tPhrase:
			if err := checkTime(n); err != nil {
				return err
			}
		case tNumber:
			if err := checkNumber(n); err != nil {
				return err
			}
		case tMinus:
			m := c.next()
			if m.typ != tNumber {
				return unexpected(m, "a number")
			}
			if err := checkNumber(m); err != nil {
				return err
			}
		default:
			return unexpected(n, "a number or a quoted date")
		}
		c.unsupportedAt(t.pos, "range queries are not supported: the index has no numeric or date fields")
	default:
		return unexpected(t, "a value after ':'")
	}
	return nil
}

// term checks a string term, or the string value of a field, with its
// "~N" suffix; one that bleve searches with an automaton (a fuzzy term, a
// regular expression or a wildcard, told apart as bleve's grammar does) is
// a pattern.
func (c *syntaxChecker) term(t token, fielded bool) *syntaxError {
	if c.peek().typ == tTilde {
		f := c.next()
		n, err := strconv.ParseFloat(f.text, 64)
		if err != nil {
			return &syntaxError{pos: f.pos, msg: fmt.Sprintf("invalid fuzziness %q", f.text), grammar: true}
		}
		if msg := fuzzinessProblem(n); msg != "" {
			c.unsupportedAt(f.pos, msg)
		} else if int(n) > 0 {
			c.pattern(t, patternFuzzy)
		}
		return nil
	}
	if err := checkRegexp(t); err != nil {
		return err
	}
	switch {
	case strings.HasPrefix(t.text, "/") && strings.HasSuffix(t.text, "/"):
		c.pattern(t, patternRegexp)
	case strings.ContainsAny(t.text, "*?") && (fielded || t.text != "*"):
		// A lone * matches every document (rewrite), without a pattern.
		c.pattern(t, patternWildcard)
	}
	return nil
}

// checkRegexp rejects a lone "/", which bleve's parser takes for an empty
// regular expression and fails on.
func checkRegexp(t token) *syntaxError {
	if t.typ == tString && t.text == "/" {
		return &syntaxError{pos: t.pos, msg: `invalid regular expression "/"`, grammar: true}
	}
	return nil
}

// queryTimeParser is the date parser bleve's query-string parser uses for
// date ranges.
var queryTimeParser = sync.OnceValues(func() (analysis.DateTimeParser, error) {
	return registry.NewCache().DateTimeParserNamed(query.QueryDateTimeParser)
})

// checkTime rejects a date bleve's parser cannot read.
func checkTime(t token) *syntaxError {
	p, err := queryTimeParser()
	if err == nil {
		_, _, err = p.ParseDateTime(t.text)
	}
	if err != nil {
		return &syntaxError{pos: t.pos, msg: fmt.Sprintf("invalid time %q", t.text), grammar: true}
	}
	return nil
}

// booleanOperators are Lucene's, which bleve's syntax takes for words.
var booleanOperators = map[string]bool{"AND": true, "OR": true, "NOT": true, "&&": true, "||": true}

// checkWord records a string that looks like Lucene syntax bleve does not
// have: a boolean operator standing as a term, or an unescaped parenthesis
// outside a regular expression. bleve would search for them as words and
// quietly answer another question.
func (c *syntaxChecker) checkWord(t token, term bool) {
	if term && booleanOperators[t.text] {
		c.unsupportedAt(t.pos, fmt.Sprintf("%s is not an operator: terms are all required; prefix - to exclude one", t.text))
	}
	regexp := len(t.text) > 1 && strings.HasPrefix(t.text, "/") && strings.HasSuffix(t.text, "/")
	if t.paren > 0 && !regexp {
		c.unsupportedAt(t.paren-1, `parentheses do not group: terms are all required; escape \( or quote to search for one`)
	}
}
