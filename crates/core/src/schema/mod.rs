//! FDB5's schema language: the rules that split a field identifier into a dataset key, a
//! collocation key and an element key, and the keyword types that canonicalise values.
//!
//! A schema is parsed once ([`Schema::parse`]); every predicate then knows its type and the
//! canonical spelling of its listed values, so matching is string comparison only.

mod parse;

use std::collections::BTreeSet;

use crate::error::{Error, Result};
use crate::key::{validate_value, Key};
use crate::types::KeywordType;

/// fieldstore's own default schema (see the file for what it covers).
pub const DEFAULT_SCHEMA: &str = include_str!("../../schema/default.schema");

/// `keyword: Type;` declarations, in file order.
pub type TypeDeclarations = Vec<(String, KeywordType)>;

/// A parsed schema, with the text it came from (stored with every data set).
#[derive(Clone, Debug)]
pub struct Schema {
    pub source_name: String,
    text: String,
    /// Global type declarations, in file order.
    types: TypeDeclarations,
    /// Dataset-level rules; their children are collocation rules, whose one child is the
    /// element rule.
    rules: Vec<Rule>,
}

/// One bracketed rule at any level.
#[derive(Clone, Debug)]
pub struct Rule {
    pub line: usize,
    pub column: usize,
    pub predicates: Vec<Predicate>,
    /// Types declared inside this rule (`date:ClimateMonthly`); they apply to it and below.
    types: TypeDeclarations,
    pub children: Vec<Rule>,
}

/// One `keyword[:Type][?default|-|=values]` entry of a rule.
#[derive(Clone, Debug)]
pub struct Predicate {
    pub keyword: String,
    pub matcher: Matcher,
    pub line: usize,
    pub column: usize,
}

/// What a predicate accepts. Listed values are stored canonicalised with the keyword's type.
#[derive(Clone, Debug, PartialEq)]
pub enum Matcher {
    /// `k`: the keyword must be present.
    Always,
    /// `k=a/b`: present with one of these values.
    AnyOf(Vec<String>),
    /// `k=!a/b`: present with none of these values.
    Exclude(Vec<String>),
    /// `k?` or `k?default`: may be absent; absent means the default (or empty).
    Optional(Option<String>),
    /// `k-`: consumed on archive but not part of any key.
    Hidden(Option<String>),
}

/// An identifier split by the first matching rule.
#[derive(Clone, Debug, PartialEq)]
pub struct SplitKey {
    pub dataset: Key,
    pub collocation: Key,
    pub element: Key,
}

/// A dataset rule, one of its collocation rules and that rule's element rule.
#[derive(Clone, Copy, Debug)]
pub struct RulePath<'s> {
    pub levels: [&'s Rule; 3],
}

/// The result of offering one identifier value to one predicate.
enum Take {
    Value(String),
    Hidden,
    Fail(String),
}

impl Schema {
    /// fieldstore's default schema.
    pub fn default_schema() -> Schema {
        Schema::parse("<default schema>", DEFAULT_SCHEMA).expect("the default schema parses (tested)")
    }

    /// The text this schema was parsed from.
    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    pub fn global_types(&self) -> &[(String, KeywordType)] {
        &self.types
    }

    /// Checks nesting (dataset -> collocation -> one element rule), then canonicalises the
    /// values listed in predicates with their keywords' types.
    fn check_shape(&self) -> Result<()> {
        let err = |r: &Rule, m: &str| Error::SchemaSyntax {
            source_name: self.source_name.clone(),
            line: r.line,
            column: r.column,
            message: m.to_string(),
        };
        if self.rules.is_empty() {
            return Err(Error::SchemaSyntax {
                source_name: self.source_name.clone(),
                line: 1,
                column: 1,
                message: "the schema has no rules".into(),
            });
        }
        for ds in &self.rules {
            if ds.children.is_empty() {
                return Err(err(ds, "a dataset rule needs at least one collocation rule '[ ... ]' inside it"));
            }
            for coll in &ds.children {
                if coll.children.len() != 1 {
                    return Err(err(coll, "a collocation rule needs exactly one element rule '[ ... ]' inside it"));
                }
                if coll.children[0].predicates.is_empty() {
                    return Err(err(&coll.children[0], "an element rule needs at least one keyword"));
                }
            }
        }
        Ok(())
    }

    /// Every (dataset, collocation, element) rule path, in schema order.
    pub fn paths(&self) -> impl Iterator<Item = RulePath<'_>> {
        self.rules.iter().flat_map(|ds| ds.children.iter().map(move |coll| RulePath { levels: [ds, coll, &coll.children[0]] }))
    }

    /// The type of `keyword` at the given rule path (innermost declaration wins).
    pub fn type_of(&self, path: &[&Rule], keyword: &str) -> KeywordType {
        path.iter()
            .rev()
            .flat_map(|r| r.types.iter())
            .chain(self.types.iter())
            .find(|(k, _)| k == keyword)
            .map(|(_, t)| *t)
            .unwrap_or(KeywordType::Default)
    }

    /// Every keyword any rule names.
    pub fn keywords(&self) -> BTreeSet<&str> {
        fn walk<'a>(r: &'a Rule, out: &mut BTreeSet<&'a str>) {
            out.extend(r.predicates.iter().map(|p| p.keyword.as_str()));
            r.children.iter().for_each(|c| walk(c, out));
        }
        let mut out = BTreeSet::new();
        self.rules.iter().for_each(|r| walk(r, &mut out));
        out
    }

    /// Splits a full identifier (archive): the first rule path whose predicates all match and
    /// which uses every keyword of the identifier wins. Values come back canonical and checked
    /// for storage.
    pub fn split(&self, identifier: &Key) -> Result<SplitKey> {
        let mut closest: Option<(usize, String)> = None;
        for path in self.paths() {
            match self.split_with(path, identifier)? {
                Ok(split) => return Ok(split),
                Err((depth, reason)) => {
                    if closest.as_ref().is_none_or(|(d, _)| depth > *d) {
                        closest = Some((depth, reason));
                    }
                }
            }
        }
        let reason = closest.map(|(_, r)| r).unwrap_or_else(|| "the schema has no rules".into());
        Err(Error::NoRule { identifier: identifier.to_string(), reason })
    }

    /// Tries one rule path. `Ok(Err((depth, reason)))` is a non-match: depth says how far it
    /// got (for choosing the most helpful message).
    #[allow(clippy::type_complexity)]
    fn split_with(&self, path: RulePath<'_>, identifier: &Key) -> Result<std::result::Result<SplitKey, (usize, String)>> {
        let mut keys = [Key::new(), Key::new(), Key::new()];
        for (level, rule) in path.levels.iter().enumerate() {
            for p in &rule.predicates {
                let ty = self.type_of(&path.levels[..=level], &p.keyword);
                match p.take(ty, identifier.get(&p.keyword))? {
                    Take::Value(v) => keys[level].push(p.keyword.clone(), v),
                    Take::Hidden => {}
                    Take::Fail(why) => {
                        let depth = level * 100 + keys[level].len();
                        return Ok(Err((depth, format!("rule at line {}: {why}", rule.line))));
                    }
                }
            }
        }
        let used = |k: &str| path.levels.iter().any(|r| r.predicates.iter().any(|p| p.keyword == k));
        if let Some(unused) = identifier.keywords().find(|k| !used(k)) {
            return Ok(Err((300, format!("rule at line {} does not use keyword '{unused}'", path.levels[0].line))));
        }
        for key in &keys {
            for (k, v) in key.iter() {
                validate_value(k, v)?;
            }
        }
        let [dataset, collocation, element] = keys;
        Ok(Ok(SplitKey { dataset, collocation, element }))
    }

    /// Rule paths that could have produced a stored dataset key and collocation key (their
    /// keyword lists equal the keys' and every predicate accepts the stored values).
    pub fn paths_for<'s>(&'s self, dataset: &Key, collocation: Option<&Key>) -> Vec<RulePath<'s>> {
        self.paths()
            .filter(|path| {
                path.levels[0].accepts_stored(dataset, |k| self.type_of(&path.levels[..1], k))
                    && collocation.is_none_or(|c| path.levels[1].accepts_stored(c, |k| self.type_of(&path.levels[..2], k)))
            })
            .collect()
    }
}

impl Rule {
    /// Keywords that form this rule's part of the key (hidden ones excluded), in order.
    pub fn key_keywords(&self) -> impl Iterator<Item = &str> {
        self.predicates.iter().filter(|p| !matches!(p.matcher, Matcher::Hidden(_))).map(|p| p.keyword.as_str())
    }

    /// Whether a stored key (canonical values) could have come from this rule.
    pub fn accepts_stored(&self, key: &Key, type_of: impl Fn(&str) -> KeywordType) -> bool {
        let mut kws = self.key_keywords();
        let same_keywords = key.keywords().all(|k| kws.next() == Some(k)) && kws.next().is_none();
        same_keywords
            && self
                .predicates
                .iter()
                .filter(|p| !matches!(p.matcher, Matcher::Hidden(_)))
                .all(|p| p.accepts(type_of(&p.keyword), key.get(&p.keyword).unwrap_or("")))
    }

    /// Whether this rule names `keyword` (as key or hidden keyword).
    pub fn names(&self, keyword: &str) -> bool {
        self.predicates.iter().any(|p| p.keyword == keyword)
    }
}

impl Predicate {
    /// Offers an identifier's raw value (None when absent) on archive.
    fn take(&self, ty: KeywordType, raw: Option<&str>) -> Result<Take> {
        let raw = raw.filter(|v| !v.trim().is_empty());
        let kw = &self.keyword;
        let canonical = |v: &str| ty.canonical(kw, v);
        Ok(match (&self.matcher, raw) {
            (Matcher::Hidden(_), _) => Take::Hidden,
            (Matcher::Optional(default), None) => Take::Value(match default {
                Some(d) => canonical(d)?,
                None => String::new(),
            }),
            (_, None) => Take::Fail(format!("keyword '{kw}' is missing")),
            (Matcher::Always | Matcher::Optional(_), Some(v)) => Take::Value(canonical(v)?),
            (Matcher::AnyOf(values), Some(v)) => {
                let c = canonical(v)?;
                if self.listed(ty, values, &c) {
                    Take::Value(c)
                } else {
                    Take::Fail(format!("{kw}={v} is not one of {}", values.join("/")))
                }
            }
            (Matcher::Exclude(values), Some(v)) => {
                let c = canonical(v)?;
                if self.listed(ty, values, &c) {
                    Take::Fail(format!("{kw}={v} is excluded"))
                } else {
                    Take::Value(c)
                }
            }
        })
    }

    /// Whether a canonical value is among the predicate's listed values (compared after
    /// canonicalising those too; a listed value the type cannot read compares as written).
    fn listed(&self, ty: KeywordType, values: &[String], canonical: &str) -> bool {
        values.iter().any(|v| v == canonical || ty.canonical(&self.keyword, v).is_ok_and(|c| c == canonical))
    }

    /// Whether a stored canonical value satisfies this predicate.
    pub fn accepts(&self, ty: KeywordType, value: &str) -> bool {
        match &self.matcher {
            Matcher::Always => !value.is_empty(),
            Matcher::AnyOf(values) => self.listed(ty, values, value),
            Matcher::Exclude(values) => !value.is_empty() && !self.listed(ty, values, value),
            Matcher::Optional(_) | Matcher::Hidden(_) => true,
        }
    }
}

#[cfg(test)]
mod tests;
