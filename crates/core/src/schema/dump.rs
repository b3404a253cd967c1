//! A schema printed as FDB5's `fdb-schema` prints it: the global types sorted by keyword
//! (`date:Date;`), then each top-level rule on one line, without spaces, its sub-rules after
//! its keywords (`[class,expver[type[step,param]][type=pf[number,step]]]`), a keyword with its
//! rule's type (`param:ParamID`), values in text order (`stream=efov/enfo`), exclusions
//! (`!=`), optional (`number?`, `domain?g`) and hidden (`levelist:Ignore-`) keywords.

use super::{Matcher, Predicate, Rule, Schema};

impl Schema {
    /// The schema as FDB5's `fdb-schema` prints it.
    pub fn fdb5_text(&self) -> String {
        let mut types: Vec<&(String, crate::types::KeywordType)> = self.types.iter().collect();
        types.sort_by(|a, b| a.0.cmp(&b.0));
        let mut text: String = types.iter().map(|(k, t)| format!("{k}:{};\n", t.name())).collect();
        for rule in &self.rules {
            text.push_str(&rule_text(rule));
            text.push('\n');
        }
        text
    }
}

/// A rule and its sub-rules on one line.
fn rule_text(rule: &Rule) -> String {
    let predicates: Vec<String> = rule.predicates.iter().map(|p| predicate_text(rule, p)).collect();
    let children: String = rule.children.iter().map(rule_text).collect();
    format!("[{}{children}]", predicates.join(","))
}

/// Values in text order, as FDB5 keeps them (a set).
fn sorted(values: &[String]) -> String {
    let mut values: Vec<&str> = values.iter().map(String::as_str).collect();
    values.sort_unstable();
    values.dedup();
    values.join("/")
}

/// A keyword of a rule: its type in that rule, and how it matches.
fn predicate_text(rule: &Rule, p: &Predicate) -> String {
    let ty = rule.types.iter().find(|(k, _)| *k == p.keyword).map(|(_, t)| format!(":{}", t.name())).unwrap_or_default();
    let keyword = format!("{}{ty}", p.keyword);
    match &p.matcher {
        Matcher::Always => keyword,
        Matcher::AnyOf(values) => format!("{keyword}={}", sorted(values)),
        Matcher::Exclude(values) => format!("{keyword}!={}", sorted(values)),
        Matcher::Optional(default) => format!("{keyword}?{}", default.as_deref().unwrap_or_default()),
        Matcher::Hidden(default) => format!("{keyword}-{}", default.as_deref().unwrap_or_default()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_schema_prints_as_fdb5_prints_it() {
        let text = "param: Param; date: Date;\n[ class, expver, stream=enfo/efov, domain?g\n  [ type, levtype [ step, number?, levelist-, param:ParamID ]]\n  [ type=pf, grid:Grid [ step, param ]]]\n[ class=rd, expver [ type [ step ]]]\n";
        let schema = Schema::parse("test", text).unwrap();
        assert_eq!(
            schema.fdb5_text(),
            "date:Date;\nparam:Param;\n\
             [class,expver,stream=efov/enfo,domain?g[type,levtype[step,number?,levelist:Ignore-,param:ParamID]][type=pf,grid:Grid[step,param]]]\n\
             [class=rd,expver[type[step]]]\n"
        );
    }
}
