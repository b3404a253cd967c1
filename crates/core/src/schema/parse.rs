//! Parser for FDB5's schema language. Grammar (comments run from `#` to the end of a line):
//!
//! ```text
//! schema    := { typedecl | rule }
//! typedecl  := IDENT ':' TYPENAME ';'
//! rule      := '[' { predicate | rule } ( ',' ... ) ']'      -- nested at most three levels
//! predicate := IDENT [ ':' TYPENAME ] [ '?' [VALUE] | '-' [VALUE] | '=' ['!'] VALUE { '/' VALUE } ]
//! ```
//!
//! Every error carries the line and column of the offending character.

use super::{Matcher, Predicate, Rule, Schema, TypeDeclarations};
use crate::error::{Error, Result};
use crate::types::KeywordType;

/// Characters that end an identifier or value.
fn is_delimiter(c: char) -> bool {
    matches!(c, '/' | '=' | ',' | ';' | ':' | '[' | ']' | '?') || c.is_whitespace() || c == '#'
}

pub(super) struct Parser<'a> {
    source_name: &'a str,
    chars: Vec<char>,
    pos: usize,
    line: usize,
    column: usize,
}

impl<'a> Parser<'a> {
    pub(super) fn new(source_name: &'a str, text: &str) -> Self {
        Parser { source_name, chars: text.chars().collect(), pos: 0, line: 1, column: 1 }
    }

    pub(super) fn parse_schema(mut self) -> Result<(TypeDeclarations, Vec<Rule>)> {
        let mut types = Vec::new();
        let mut rules = Vec::new();
        loop {
            match self.peek() {
                None => return Ok((types, rules)),
                Some('[') => rules.push(self.parse_rule(1)?),
                Some(_) => {
                    let (line, column) = (self.line, self.column);
                    let keyword = self.ident("a keyword for a type declaration or '['", false)?.to_ascii_lowercase();
                    self.expect(':')?;
                    let type_name = self.type_name()?;
                    self.expect(';')?;
                    if types.iter().any(|(k, _)| *k == keyword) {
                        return Err(self.error_at(line, column, format!("type of '{keyword}' declared twice")));
                    }
                    types.push((keyword, type_name));
                }
            }
        }
    }

    fn parse_rule(&mut self, depth: usize) -> Result<Rule> {
        let (line, column) = (self.line, self.column);
        self.expect('[')?;
        let mut rule = Rule { line, column, predicates: Vec::new(), types: Vec::new(), children: Vec::new() };
        loop {
            match self.peek() {
                Some(']') => {
                    self.bump();
                    return Ok(rule);
                }
                Some(',') => {
                    self.bump();
                }
                Some('[') => {
                    if depth == 3 {
                        return Err(self.error("rules nest at most three levels (dataset, collocation, element)"));
                    }
                    rule.children.push(self.parse_rule(depth + 1)?);
                }
                Some(_) => {
                    let predicate = self.predicate(&mut rule)?;
                    if rule.predicates.iter().any(|p| p.keyword == predicate.keyword) {
                        return Err(self.error_at(
                            predicate.line,
                            predicate.column,
                            format!("keyword '{}' appears twice in one rule", predicate.keyword),
                        ));
                    }
                    rule.predicates.push(predicate);
                }
                None => return Err(self.error_at(line, column, "rule opened here is never closed with ']'".into())),
            }
        }
    }

    fn predicate(&mut self, rule: &mut Rule) -> Result<Predicate> {
        let (line, column) = (self.line, self.column);
        let keyword = self.ident("a keyword", false)?.to_ascii_lowercase();
        if self.peek() == Some(':') {
            self.bump();
            let type_name = self.type_name()?;
            rule.types.push((keyword.clone(), type_name));
        }
        let matcher = match self.peek() {
            Some('?') => {
                self.bump();
                Matcher::Optional(self.optional_value()?)
            }
            Some('-') => {
                self.bump();
                if !rule.types.iter().any(|(k, _)| *k == keyword) {
                    rule.types.push((keyword.clone(), KeywordType::Ignore));
                }
                Matcher::Hidden(self.optional_value()?)
            }
            Some('=') => {
                self.bump();
                let first = self.ident("a value", true)?;
                let (exclude, first) = match first.strip_prefix('!') {
                    Some(rest) if !rest.is_empty() => (true, rest.to_string()),
                    Some(_) => return Err(self.error("'!' must be followed by a value")),
                    None => (false, first),
                };
                let mut values = vec![first];
                while self.peek() == Some('/') {
                    self.bump();
                    values.push(self.ident("a value after '/'", true)?);
                }
                if exclude {
                    Matcher::Exclude(values)
                } else {
                    Matcher::AnyOf(values)
                }
            }
            _ => Matcher::Always,
        };
        Ok(Predicate { keyword, matcher, line, column, ty: KeywordType::Default, listed_canonical: Vec::new() })
    }

    /// The default after `?` or `-`: a value if one follows directly.
    fn optional_value(&mut self) -> Result<Option<String>> {
        match self.peek_raw() {
            Some(c) if !is_delimiter(c) => Ok(Some(self.ident("a default value", true)?)),
            _ => Ok(None),
        }
    }

    fn type_name(&mut self) -> Result<KeywordType> {
        self.skip_blank();
        let (line, column) = (self.line, self.column);
        let name = self.ident("a type name", false)?;
        KeywordType::from_name(&name)
            .ok_or_else(|| self.error_at(line, column, format!("unknown type '{name}' (known: {})", KeywordType::known_names())))
    }

    /// Reads an identifier (keywords stop at '-'; values may contain it).
    fn ident(&mut self, what: &str, value: bool) -> Result<String> {
        self.skip_blank();
        let mut s = String::new();
        while let Some(c) = self.peek_raw() {
            if is_delimiter(c) || (!value && c == '-') {
                break;
            }
            s.push(c);
            self.bump();
        }
        if s.is_empty() {
            let found = match self.peek_raw() {
                Some(c) => format!("'{c}'"),
                None => "end of file".to_string(),
            };
            return Err(self.error(format!("expected {what}, found {found}")));
        }
        Ok(s)
    }

    fn expect(&mut self, c: char) -> Result<()> {
        match self.peek() {
            Some(found) if found == c => {
                self.bump();
                Ok(())
            }
            Some(found) => Err(self.error(format!("expected '{c}', found '{found}'"))),
            None => Err(self.error(format!("expected '{c}', found end of file"))),
        }
    }

    /// Next significant character, skipping blanks and comments.
    fn peek(&mut self) -> Option<char> {
        self.skip_blank();
        self.peek_raw()
    }

    fn peek_raw(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn bump(&mut self) {
        if let Some(c) = self.peek_raw() {
            self.pos += 1;
            if c == '\n' {
                self.line += 1;
                self.column = 1;
            } else {
                self.column += 1;
            }
        }
    }

    fn skip_blank(&mut self) {
        while let Some(c) = self.peek_raw() {
            if c == '#' {
                while let Some(c) = self.peek_raw() {
                    if c == '\n' {
                        break;
                    }
                    self.bump();
                }
            } else if c.is_whitespace() {
                self.bump();
            } else {
                break;
            }
        }
    }

    fn error(&self, message: impl Into<String>) -> Error {
        self.error_at(self.line, self.column, message.into())
    }

    fn error_at(&self, line: usize, column: usize, message: String) -> Error {
        Error::SchemaSyntax { source_name: self.source_name.to_string(), line, column, message }
    }
}

impl Schema {
    /// Parses schema text; `source_name` (usually the file path) prefixes error messages.
    pub fn parse(source_name: &str, text: &str) -> Result<Schema> {
        let (types, rules) = Parser::new(source_name, text).parse_schema()?;
        let keywords = super::keywords_of(&rules);
        let dataset_rules = super::dataset_rules_by_keywords(&rules);
        let mut schema = Schema { source_name: source_name.to_string(), text: text.to_string(), types, rules, keywords, dataset_rules };
        schema.check_shape()?;
        schema.resolve_predicate_types();
        Ok(schema)
    }
}
