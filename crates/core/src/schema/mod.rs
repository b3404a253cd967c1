//! FDB5's schema language: the rules that split a field identifier into a dataset key, a
//! collocation key and an element key, and the keyword types that canonicalise values.
//!
//! A schema is parsed once ([`Schema::parse`]); every predicate then knows its type and the
//! canonical spelling of its listed values, so matching is string comparison only. Splitting
//! walks the rule tree, so a dataset rule that fails is tried once, not once per path below
//! it (FDB5's test schema has 98 dataset rules and 188 paths).

mod dump;
mod parse;

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

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
    /// Where the text came from, for messages: a file path, or `<default schema>`.
    pub source_name: String,
    text: String,
    /// Global type declarations, in file order.
    types: TypeDeclarations,
    /// Dataset-level rules; their children are collocation rules, whose one child is the
    /// element rule.
    rules: Vec<Rule>,
    /// Every keyword any rule names (found once: a resolve asks for each keyword of its
    /// request, and FDB5's schema has hundreds of rules).
    keywords: BTreeSet<String>,
    /// The data set rules by their key's keywords (`class,expver,stream`), in schema order:
    /// a stored data set key is offered only to the few rules that could have made it.
    dataset_rules: HashMap<String, Vec<usize>>,
}

/// One bracketed rule at any level.
#[derive(Clone, Debug)]
pub struct Rule {
    /// The line of the rule's `[`, counted from 1.
    pub line: usize,
    /// The column of the rule's `[` in characters, counted from 1.
    pub column: usize,
    /// The rule's entries, in file order.
    pub predicates: Vec<Predicate>,
    /// Types declared inside this rule (`date:ClimateMonthly`); they apply to it and below.
    types: TypeDeclarations,
    /// The rules nested in this one: collocation rules of a dataset rule, the element rule of a collocation rule.
    pub children: Vec<Rule>,
}

/// One `keyword[:Type][?default|-|=values]` entry of a rule.
#[derive(Clone, Debug)]
pub struct Predicate {
    /// The keyword, lowercased.
    pub keyword: String,
    /// Which values the predicate accepts.
    pub matcher: Matcher,
    /// The line of the keyword, counted from 1.
    pub line: usize,
    /// The column of the keyword in characters, counted from 1.
    pub column: usize,
    /// The keyword's type where this predicate stands (innermost declaration wins).
    ty: KeywordType,
    /// The matcher's listed values canonicalised with `ty` (a value the type cannot read is
    /// kept as written).
    listed_canonical: Vec<String>,
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
    /// `k?` or `k?default`: may be absent; absent is the empty value. The default is kept
    /// but, as in FDB5 5.25, not used: fields archived without the keyword have it empty.
    Optional(Option<String>),
    /// `k-`: consumed on archive but not part of any key.
    Hidden(Option<String>),
}

/// An identifier split by the first matching rule. The dataset and collocation keys are
/// shared: consecutive identifiers of an archive loop mostly have the same ones.
#[derive(Clone, Debug, PartialEq)]
pub struct SplitKey {
    /// The dataset key: the dataset rule's keywords and values.
    pub dataset: Arc<Key>,
    /// The collocation key: the collocation rule's keywords and values.
    pub collocation: Arc<Key>,
    /// The element key: the element rule's keywords and values.
    pub element: Key,
}

/// A dataset rule, one of its collocation rules and that rule's element rule.
#[derive(Clone, Copy, Debug)]
pub struct RulePath<'s> {
    /// The rules by level: dataset, collocation, element.
    pub levels: [&'s Rule; 3],
}

/// The result of offering one identifier value to one predicate.
enum Take<'a> {
    Value(std::borrow::Cow<'a, str>),
    Hidden,
    Fail(Miss<'a>),
}

/// Why a rule did not take an identifier. Most identifiers are refused by several rules
/// before one takes them, so the message is only written if none does.
#[derive(Clone, Copy)]
enum Miss<'a> {
    Missing(&'a Predicate),
    NotListed(&'a Predicate, &'a str),
    Excluded(&'a Predicate, &'a str),
    Unused(&'a str),
}

/// A non-match: how far it got (for choosing the most helpful message), the rule's line, why.
type NonMatch<'a> = (usize, usize, Miss<'a>);

impl std::fmt::Display for Miss<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Miss::Missing(p) => write!(f, "keyword '{}' is missing", p.keyword),
            Miss::NotListed(p, v) => match &p.matcher {
                Matcher::AnyOf(values) => write!(f, "{}={v} is not one of {}", p.keyword, values.join("/")),
                _ => write!(f, "{}={v} is not accepted", p.keyword),
            },
            Miss::Excluded(p, v) => write!(f, "{}={v} is excluded", p.keyword),
            Miss::Unused(k) => write!(f, "does not use keyword '{k}'"),
        }
    }
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

    /// The dataset rules, in file order (each holds its collocation and element rules).
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// The top-level type declarations, in file order (rules may declare more inside).
    pub fn global_types(&self) -> &[(String, KeywordType)] {
        &self.types
    }

    /// The `(keyword, value)` pairs of the data set that values given per keyword name (FDB5's
    /// reading of a DB request): the first level of the first rule whose first level they
    /// satisfy (every keyword it needs given, each value one it allows; `/`-separated lists
    /// too), in the rule's order, the optional keywords given; else the first keyword the
    /// first rule needs and was not given.
    pub fn dataset_level<'a>(&self, value: impl Fn(&str) -> Option<&'a str>) -> std::result::Result<Vec<(String, &'a str)>, String> {
        let mut first_missing = None;
        'rules: for rule in &self.rules {
            let mut key = Vec::new();
            for p in &rule.predicates {
                match (&p.matcher, value(&p.keyword)) {
                    (Matcher::Optional(_) | Matcher::Hidden(_), None) => {}
                    (_, None) => {
                        first_missing.get_or_insert_with(|| p.keyword.clone());
                        continue 'rules;
                    }
                    (Matcher::AnyOf(values), Some(v)) if !v.split('/').all(|v| values.iter().any(|l| l == v)) => continue 'rules,
                    (Matcher::Exclude(values), Some(v)) if v.split('/').any(|v| values.iter().any(|l| l == v)) => continue 'rules,
                    (_, Some(v)) => key.push((p.keyword.clone(), v)),
                }
            }
            return Ok(key);
        }
        Err(first_missing.unwrap_or_else(|| "class".to_string()))
    }

    /// Checks nesting (dataset -> collocation -> one element rule).
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
        self.rules.iter().flat_map(paths_under)
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
        self.keywords.iter().map(String::as_str).collect()
    }

    /// Whether any rule names `keyword`.
    pub fn names_keyword(&self, keyword: &str) -> bool {
        self.keywords.contains(keyword)
    }

    /// Splits a full identifier (archive): the first rule path whose predicates all match and
    /// which uses every keyword of the identifier wins. Values come back canonical and checked
    /// for storage.
    pub fn split(&self, identifier: &Key) -> Result<SplitKey> {
        self.split_walking(identifier).map(|walked| walked.split)
    }

    /// [`Schema::split`], faster for an identifier that differs from the last one split with
    /// `memo` only in values that the last one's element rule alone looked at: then the rule
    /// path and the dataset and collocation keys are the same, and only the element rule is
    /// applied again. The result is always exactly what `split` returns (tested).
    pub fn split_remembering(&self, identifier: &Key, memo: &mut SplitMemo) -> Result<SplitKey> {
        if let Some(split) = memo.last.as_ref().and_then(|m| m.reuse(self, identifier)) {
            memo.reused += 1;
            return Ok(split);
        }
        let walked = self.split_walking(identifier)?;
        memo.last = (identifier.len() < 64).then(|| Remembered {
            identifier: identifier.clone(),
            dataset: walked.split.dataset.clone(),
            collocation: walked.split.collocation.clone(),
            path: walked.path,
            looked_at: walked.looked_at,
        });
        Ok(walked.split)
    }

    fn split_walking<'a>(&'a self, identifier: &'a Key) -> Result<Walked> {
        let mut closest: Option<NonMatch<'a>> = None;
        // Keeps the non-match that got furthest (the first of equals) for the error message.
        let mut matched = |taken: std::result::Result<Taken, NonMatch<'a>>| match taken {
            Ok(taken) => Some(taken),
            Err(miss) => {
                if closest.as_ref().is_none_or(|(d, _, _)| miss.0 > *d) {
                    closest = Some(miss);
                }
                None
            }
        };
        // The identifier's positions whose values decided which path wins (all but the
        // winning element rule's own).
        let mut looked_at = 0u64;
        for (d, ds) in self.rules.iter().enumerate() {
            let Some(dataset) = matched(take_rule(ds, 0, identifier, &mut looked_at)?) else { continue };
            for (c, coll) in ds.children.iter().enumerate() {
                let Some(collocation) = matched(take_rule(coll, 1, identifier, &mut looked_at)?) else { continue };
                let mut element_looked_at = 0;
                let Some(element) = matched(take_rule(&coll.children[0], 2, identifier, &mut element_looked_at)?) else {
                    looked_at |= element_looked_at;
                    continue;
                };
                // Every keyword was used when every position was found (the exact check runs
                // for the rest, and for identifiers of more than 64 keywords).
                let all = if identifier.len() >= 64 { 0 } else { (1u64 << identifier.len()) - 1 };
                if dataset.found | collocation.found | element.found != all || all == 0 {
                    let path = RulePath { levels: [ds, coll, &coll.children[0]] };
                    if let Some(unused) = identifier.keywords().find(|k| !path.levels.iter().any(|r| r.names(k))) {
                        looked_at |= element_looked_at;
                        matched(Err((300, ds.line, Miss::Unused(unused))));
                        continue;
                    }
                }
                let split = SplitKey { dataset: Arc::new(dataset.key), collocation: Arc::new(collocation.key), element: element.key };
                for key in [&split.dataset, &split.collocation, &split.element] {
                    validate_values(key)?;
                }
                return Ok(Walked { split, path: (d, c), looked_at });
            }
        }
        let reason = closest.map_or_else(|| "the schema has no rules".into(), |(_, line, miss)| format!("rule at line {line}: {miss}"));
        Err(Error::NoRule { identifier: identifier.to_string(), reason })
    }

    /// Gives every predicate its type at its place in the tree and canonicalises its listed
    /// values with it, once, so that splitting compares strings only.
    fn resolve_predicate_types(&mut self) {
        fn walk(rule: &mut Rule, outer: &[&TypeDeclarations], global: &TypeDeclarations) {
            let types = rule.types.clone();
            let chain: Vec<&TypeDeclarations> = std::iter::once(&types).chain(outer.iter().copied()).collect();
            for p in &mut rule.predicates {
                p.ty = chain
                    .iter()
                    .copied()
                    .chain(std::iter::once(global))
                    .flat_map(|t| t.iter())
                    .find(|(k, _)| *k == p.keyword)
                    .map_or(KeywordType::Default, |(_, t)| *t);
                p.listed_canonical = match &p.matcher {
                    Matcher::AnyOf(values) | Matcher::Exclude(values) => {
                        values.iter().map(|v| p.ty.canonical(&p.keyword, v).unwrap_or_else(|_| v.clone())).collect()
                    }
                    _ => Vec::new(),
                };
            }
            for child in &mut rule.children {
                walk(child, &chain, global);
            }
        }
        let global = self.types.clone();
        for rule in &mut self.rules {
            walk(rule, &[], &global);
        }
    }

    /// Rule paths that could have produced a stored dataset key and collocation key (their
    /// keyword lists equal the keys' and every predicate accepts the stored values).
    pub fn paths_for<'s>(&'s self, dataset: &Key, collocation: Option<&Key>) -> Vec<RulePath<'s>> {
        // Only the data set rules with the key's keywords are tried, each once (not once per
        // collocation rule under it).
        let same_keywords = self.dataset_rules.get(&dataset.keywords().collect::<Vec<_>>().join(",")).map_or(&[][..], Vec::as_slice);
        same_keywords
            .iter()
            .map(|&i| &self.rules[i])
            .filter(|ds| ds.accepts_stored(dataset, |k| self.type_of(&[ds], k)))
            .flat_map(paths_under)
            .filter(|path| collocation.is_none_or(|c| path.levels[1].accepts_stored(c, |k| self.type_of(&path.levels[..2], k))))
            .collect()
    }
}

/// The rule paths under one data set rule, in schema order.
fn paths_under(ds: &Rule) -> impl Iterator<Item = RulePath<'_>> {
    ds.children.iter().map(move |coll| RulePath { levels: [ds, coll, &coll.children[0]] })
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

/// Checks every value of a split's key for storage.
fn validate_values(key: &Key) -> Result<()> {
    key.iter().try_for_each(|(k, v)| validate_value(k, v))
}

/// A split and how it was found.
struct Walked {
    split: SplitKey,
    /// The winning dataset and collocation rules, by position.
    path: (usize, usize),
    /// The identifier's positions whose values any rule looked at before the winning element
    /// rule (bit i: the i-th keyword).
    looked_at: u64,
}

/// The last split of [`Schema::split_remembering`]. Belongs to one schema: a memo used with
/// another schema gives wrong results.
#[derive(Default)]
pub struct SplitMemo {
    last: Option<Remembered>,
    /// Splits answered from the memo (for tests and curiosity).
    pub reused: u64,
}

struct Remembered {
    identifier: Key,
    dataset: Arc<Key>,
    collocation: Arc<Key>,
    path: (usize, usize),
    looked_at: u64,
}

impl Remembered {
    /// The split of `identifier` if it has the same keywords, in the same order, and the same
    /// values wherever the rule walk looked before the winning element rule: every rule then
    /// decides as before, up to that element rule, which is applied again. `None` (split in
    /// full) where anything could differ, including any failure.
    fn reuse(&self, schema: &Schema, identifier: &Key) -> Option<SplitKey> {
        let (last, now) = (&self.identifier, identifier);
        if last.len() != now.len() {
            return None;
        }
        for (i, ((k1, v1), (k2, v2))) in last.iter().zip(now.iter()).enumerate() {
            if k1 != k2 || (self.looked_at >> i & 1 == 1 && v1 != v2) {
                return None;
            }
        }
        let rule = &schema.rules.get(self.path.0)?.children.get(self.path.1)?.children[0];
        let element = take_rule(rule, 2, identifier, &mut 0).ok()?.ok()?.key;
        validate_values(&element).ok()?;
        Some(SplitKey { dataset: self.dataset.clone(), collocation: self.collocation.clone(), element })
    }
}

/// One rule's part of a key, taken from an identifier.
struct Taken {
    key: Key,
    /// Which of the identifier's keywords (by position, the first 64) the rule named.
    found: u64,
}

/// Offers an identifier to one rule at `level`. `Err` is a non-match: how far it got (for
/// choosing the most helpful message), the rule's line and why. Adds to `looked_at` the
/// positions of the values it looked at (up to the first that failed).
fn take_rule<'a>(
    rule: &'a Rule,
    level: usize,
    identifier: &'a Key,
    looked_at: &mut u64,
) -> Result<std::result::Result<Taken, NonMatch<'a>>> {
    // Room for typical keywords and values (about 16 bytes a pair), so the key grows once.
    let mut taken = Taken { key: Key::with_capacity(rule.predicates.len(), 16 * rule.predicates.len()), found: 0 };
    // Identifiers usually list keywords in schema order: look after the last one found first.
    let mut next = 0;
    for p in &rule.predicates {
        let raw = identifier.find_from(&p.keyword, next).map(|(i, v)| {
            taken.found |= 1u64.checked_shl(i as u32).unwrap_or(0);
            next = i + 1;
            v
        });
        *looked_at |= taken.found;
        match p.take(raw)? {
            Take::Value(v) => taken.key.push(&p.keyword, v),
            Take::Hidden => {}
            Take::Fail(miss) => return Ok(Err((level * 100 + taken.key.len(), rule.line, miss))),
        }
    }
    Ok(Ok(taken))
}

impl Predicate {
    /// Offers an identifier's raw value (None when absent) on archive.
    fn take<'a>(&'a self, raw: Option<&'a str>) -> Result<Take<'a>> {
        let raw = raw.filter(|v| !v.trim().is_empty());
        let kw = &self.keyword;
        let canonical = |v: &'a str| self.ty.canonical_cow(kw, v);
        Ok(match (&self.matcher, raw) {
            (Matcher::Hidden(_), _) => Take::Hidden,
            // Absent is empty, default or not: FDB5 5.25 stores nothing for `timespan?none`.
            (Matcher::Optional(_), None) => Take::Value("".into()),
            (_, None) => Take::Fail(Miss::Missing(self)),
            (Matcher::Always | Matcher::Optional(_), Some(v)) => Take::Value(canonical(v)?),
            (Matcher::AnyOf(_), Some(v)) => {
                let c = canonical(v)?;
                if self.listed_canonical.iter().any(|l| *l == c) {
                    Take::Value(c)
                } else {
                    Take::Fail(Miss::NotListed(self, v))
                }
            }
            (Matcher::Exclude(_), Some(v)) => {
                let c = canonical(v)?;
                if self.listed_canonical.iter().any(|l| *l == c) {
                    Take::Fail(Miss::Excluded(self, v))
                } else {
                    Take::Value(c)
                }
            }
        })
    }

    /// Whether a canonical value is among the predicate's listed values (compared after
    /// canonicalising those with `ty` too, unless it is the predicate's own type).
    fn listed(&self, ty: KeywordType, values: &[String], canonical: &str) -> bool {
        if ty == self.ty {
            return self.listed_canonical.iter().any(|v| v == canonical);
        }
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

/// The positions of the data set rules, by their key's keywords joined by commas.
fn dataset_rules_by_keywords(rules: &[Rule]) -> HashMap<String, Vec<usize>> {
    let mut by_keywords: HashMap<String, Vec<usize>> = HashMap::new();
    for (i, rule) in rules.iter().enumerate() {
        by_keywords.entry(rule.key_keywords().collect::<Vec<_>>().join(",")).or_default().push(i);
    }
    by_keywords
}

/// Every keyword the rules (and their children) name.
fn keywords_of(rules: &[Rule]) -> BTreeSet<String> {
    fn walk(r: &Rule, out: &mut BTreeSet<String>) {
        out.extend(r.predicates.iter().map(|p| p.keyword.clone()));
        r.children.iter().for_each(|c| walk(c, out));
    }
    let mut out = BTreeSet::new();
    rules.iter().for_each(|r| walk(r, &mut out));
    out
}

#[cfg(test)]
mod tests;
