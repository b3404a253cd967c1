//! Keys: ordered `keyword=value` lists. A field's identifier is split by the schema into a
//! dataset key, a collocation key and an element key; each is a [`Key`].
//!
//! Values that reach storage pass [`validate_value`]: they end up in file and object names and
//! in index records, so separators, control characters and over-long values are refused here,
//! once, for every backend.

use std::fmt;

use crate::error::{Error, ErrorKind, Result};

/// Longest value accepted for any keyword, in bytes.
pub const MAX_VALUE_LEN: usize = 128;

/// An ordered list of `keyword=value` pairs. Order is the schema's order; lookups are linear
/// because keys hold a handful of entries.
///
/// The keywords and values are stored back to back in one string, with where each ends: a
/// key costs two allocations however many entries it has (a list of 10,000 fields builds
/// 10,000 element keys).
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct Key {
    text: String,
    /// Per entry: where its keyword ends and where its value ends, in `text`.
    ends: Vec<(u32, u32)>,
}

impl Key {
    /// An empty key.
    pub fn new() -> Self {
        Key::default()
    }

    /// An empty key with room for `entries` entries of `bytes` keyword and value bytes in all.
    pub fn with_capacity(entries: usize, bytes: usize) -> Self {
        Key { text: String::with_capacity(bytes), ends: Vec::with_capacity(entries) }
    }

    /// Builds a key from pairs, keeping their order.
    pub fn from_pairs<K: AsRef<str>, V: AsRef<str>>(pairs: impl IntoIterator<Item = (K, V)>) -> Self {
        let mut key = Key::new();
        for (k, v) in pairs {
            key.push(k, v);
        }
        key
    }

    /// Parses `k=v,k=v` (the display form). Used for keys given on the command line.
    pub fn parse(text: &str) -> Result<Self> {
        let mut key = Key::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (k, v) = part.split_once('=').ok_or_else(|| Error::RequestSyntax {
                context: format!("key {text:?}"),
                message: format!("'{part}' is not keyword=value"),
            })?;
            let keyword = k.trim().to_ascii_lowercase();
            if key.get(&keyword).is_some() {
                return Err(Error::RequestSyntax { context: format!("key {text:?}"), message: format!("keyword '{keyword}' given twice") });
            }
            key.push(keyword, v.trim());
        }
        Ok(key)
    }

    /// Appends a pair; the caller keeps keywords unique.
    pub fn push(&mut self, keyword: impl AsRef<str>, value: impl AsRef<str>) {
        self.text.push_str(keyword.as_ref());
        let keyword_end = self.text.len() as u32;
        self.text.push_str(value.as_ref());
        self.ends.push((keyword_end, self.text.len() as u32));
    }

    /// Sets a keyword's value, appending it if absent.
    pub fn set(&mut self, keyword: &str, value: impl AsRef<str>) {
        if self.get(keyword).is_none() {
            return self.push(keyword, value);
        }
        let old = std::mem::take(self);
        for (k, v) in old.iter() {
            self.push(k, if k == keyword { value.as_ref() } else { v });
        }
    }

    /// Entry `i`'s keyword and value.
    fn entry(&self, i: usize) -> (&str, &str) {
        let start = if i == 0 { 0 } else { self.ends[i - 1].1 as usize };
        let (keyword_end, value_end) = self.ends[i];
        (&self.text[start..keyword_end as usize], &self.text[keyword_end as usize..value_end as usize])
    }

    /// The value of `keyword`; `None` if the key has no such entry.
    pub fn get(&self, keyword: &str) -> Option<&str> {
        self.iter().find(|(k, _)| *k == keyword).map(|(_, v)| v)
    }

    /// Like [`Key::get`], with the entry's position; entry `start` is checked first, then
    /// the whole key: cheap when keywords are looked up in the key's own order.
    pub fn find_from(&self, keyword: &str, start: usize) -> Option<(usize, &str)> {
        if start < self.len() {
            let (k, v) = self.entry(start);
            if k == keyword {
                return Some((start, v));
            }
        }
        self.iter().position(|(k, _)| k == keyword).map(|i| (i, self.entry(i).1))
    }

    /// The entries as `(keyword, value)`, in the key's order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, &str)> + Clone {
        let mut start = 0;
        self.ends.iter().map(move |&(keyword_end, value_end)| {
            let (keyword_end, value_end) = (keyword_end as usize, value_end as usize);
            let entry = (&self.text[start..keyword_end], &self.text[keyword_end..value_end]);
            start = value_end;
            entry
        })
    }

    /// The keywords, in the key's order.
    pub fn keywords(&self) -> impl ExactSizeIterator<Item = &str> {
        self.iter().map(|(k, _)| k)
    }

    /// The values, in the key's order.
    pub fn values(&self) -> impl ExactSizeIterator<Item = &str> {
        self.iter().map(|(_, v)| v)
    }

    /// How many entries the key has.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether the key has no entry.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The values joined by `,`: the compact form used as an index key inside one index,
    /// where the keyword list is stored once. Values never contain `,` (see [`validate_value`]).
    pub fn values_string(&self) -> String {
        // Built in place: this runs for every field archived.
        let mut joined = String::with_capacity(self.text.len());
        for (i, value) in self.values().enumerate() {
            if i > 0 {
                joined.push(',');
            }
            joined.push_str(value);
        }
        joined
    }

    /// Rebuilds a key from a keyword list and a [`Key::values_string`].
    pub fn from_values_string(keywords: &[String], values: &str) -> Result<Self> {
        let miscounted = || {
            let given = if values.is_empty() { 0 } else { values.split(',').count() };
            let message = format!("values {values:?} are {given} values for {} keywords", keywords.len());
            Err(Error::new(ErrorKind::Corrupt, message))
        };
        // No keywords, no values (the empty string): else one value per keyword.
        if keywords.is_empty() {
            return if values.is_empty() { Ok(Key::new()) } else { miscounted() };
        }
        let mut key = Key::with_capacity(keywords.len(), values.len() + keywords.iter().map(String::len).sum::<usize>());
        let mut parts = values.split(',');
        for keyword in keywords {
            match parts.next() {
                Some(value) => key.push(keyword, value),
                None => return miscounted(),
            }
        }
        match parts.next() {
            Some(_) => miscounted(),
            None => Ok(key),
        }
    }

    /// Keywords from outside (a server's answer) checked as [`Key`]'s `Deserialize` checks
    /// them: each a keyword name, none twice, at most a thousand or so; then
    /// [`Key::from_checked_values`] builds keys of them.
    pub fn check_keywords(keywords: &[String]) -> Result<()> {
        if keywords.len() > MAX_KEYWORDS {
            return Err(Error::new(ErrorKind::BadRequest, format!("a key of more than {MAX_KEYWORDS} keywords")));
        }
        for (i, keyword) in keywords.iter().enumerate() {
            validate_keyword(keyword)?;
            if keywords[..i].contains(keyword) {
                return Err(Error::new(ErrorKind::BadRequest, format!("keyword '{keyword}' given twice")));
            }
        }
        Ok(())
    }

    /// [`Key::from_values_string`] of values from outside, each checked as a parsed key's
    /// are, for keywords [`Key::check_keywords`] accepted.
    pub fn from_checked_values(keywords: &[String], values: &str) -> Result<Self> {
        let key = Key::from_values_string(keywords, values)?;
        // Checked at once where the whole string is short and every character storable (a
        // listing reads thousands of them); else value by value, for the error naming one.
        let all_storable = values.len() <= MAX_VALUE_LEN && values.chars().all(|c| c == ',' || is_storable_char(c));
        if !all_storable {
            for (keyword, value) in key.iter() {
                validate_value(keyword, value)?;
            }
        }
        Ok(key)
    }

    /// The key with its empty (absent optional) values left out, as FDB5 prints keys.
    pub fn display_non_empty(&self) -> String {
        self.non_empty().to_string()
    }

    /// [`Key::display_non_empty`] written where it goes, with nothing allocated (a listing
    /// prints thousands of keys).
    pub fn non_empty(&self) -> NonEmpty<'_> {
        NonEmpty(self)
    }

    /// Concatenates keys (dataset + collocation + element = the full identifier).
    pub fn join(parts: &[&Key]) -> Key {
        Key::join_where(parts, |_| true)
    }

    /// Concatenates keys, leaving out the empty values (absent optional keywords): a field's
    /// identifier as a request names it.
    pub fn join_non_empty(parts: &[&Key]) -> Key {
        Key::join_where(parts, |value| !value.is_empty())
    }

    /// Concatenates the entries of keys whose values `keep` accepts, in one allocation each
    /// for the text and the ends (identifiers are built for every field listed).
    fn join_where(parts: &[&Key], keep: impl Fn(&str) -> bool) -> Key {
        let entries = parts.iter().map(|k| k.ends.len()).sum();
        let bytes = parts.iter().map(|k| k.text.len()).sum();
        let mut key = Key::with_capacity(entries, bytes);
        for (k, v) in parts.iter().flat_map(|k| k.iter()).filter(|(_, v)| keep(v)) {
            key.push(k, v);
        }
        key
    }
}

/// A key shown with its empty values left out ([`Key::non_empty`]).
pub struct NonEmpty<'k>(&'k Key);

impl NonEmpty<'_> {
    /// Whether nothing would be shown: every value is empty.
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|(_, v)| v.is_empty())
    }
}

impl fmt::Display for NonEmpty<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (k, v)) in self.0.iter().filter(|(_, v)| !v.is_empty()).enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            f.write_str(k)?;
            f.write_str("=")?;
            f.write_str(v)?;
        }
        Ok(())
    }
}

/// Entry by entry: keyword, then value.
impl Ord for Key {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.iter().cmp(other.iter())
    }
}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Key({self})")
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (k, v)) in self.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{k}={v}")?;
        }
        Ok(())
    }
}

/// Checks that a canonical value may be stored: it ends up in index records and in file and
/// object names, so MARS separators (`,` `=` `/`), quotes, backslashes, whitespace, control
/// characters and values longer than [`MAX_VALUE_LEN`] are refused. The empty value is allowed
/// (an absent optional keyword).
pub fn validate_value(keyword: &str, value: &str) -> Result<()> {
    if value.len() > MAX_VALUE_LEN {
        return Err(Error::bad_value(keyword, value, format!("longer than {MAX_VALUE_LEN} bytes")));
    }
    if let Some(c) = value.chars().find(|c| !is_storable_char(*c)) {
        return Err(Error::bad_value(keyword, value, format!("character {c:?} is not allowed in stored values")));
    }
    Ok(())
}

/// Checks a keyword name: lower-case ASCII letters, digits and `_`, starting with a letter.
pub fn validate_keyword(keyword: &str) -> Result<()> {
    let ok = !keyword.is_empty()
        && keyword.len() <= 64
        && keyword.starts_with(|c: char| c.is_ascii_lowercase())
        && keyword.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if ok {
        Ok(())
    } else {
        Err(Error::bad_value(keyword, "", "keyword names are lower-case letters, digits and '_'"))
    }
}

fn is_storable_char(c: char) -> bool {
    c.is_ascii_graphic() && !matches!(c, ',' | '=' | '/' | '\\' | '"' | '\'' | '`')
}

/// Serialises as a JSON object whose members keep the key's order.
impl serde::Serialize for Key {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(self.len()))?;
        for (k, v) in self.iter() {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// The most keywords a key read from JSON may have (any schema's keys have a few dozen).
const MAX_KEYWORDS: usize = 1024;

/// Reads the JSON object [`Key`]'s `Serialize` writes, in its order, each keyword and value
/// checked as [`Key::parse`] checks them.
impl<'de> serde::Deserialize<'de> for Key {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        struct Pairs;
        impl<'de> serde::de::Visitor<'de> for Pairs {
            type Value = Key;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a key: an object of keyword to value")
            }
            fn visit_map<M: serde::de::MapAccess<'de>>(self, mut map: M) -> std::result::Result<Key, M::Error> {
                let mut pairs: Vec<(String, String)> = Vec::new();
                let mut seen = std::collections::HashSet::new();
                while let Some((keyword, value)) = map.next_entry::<String, String>()? {
                    if pairs.len() == MAX_KEYWORDS {
                        return Err(serde::de::Error::custom(format!("a key of more than {MAX_KEYWORDS} keywords")));
                    }
                    if !seen.insert(keyword.clone()) {
                        return Err(serde::de::Error::custom(format!("keyword '{keyword}' given twice")));
                    }
                    validate_keyword(&keyword).map_err(serde::de::Error::custom)?;
                    validate_value(&keyword, &value).map_err(serde::de::Error::custom)?;
                    pairs.push((keyword, value));
                }
                Ok(Key::from_pairs(pairs))
            }
        }
        deserializer.deserialize_map(Pairs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_display_round_trip() {
        let key = Key::parse("class=od, expver=0001,step=12").unwrap();
        assert_eq!(key.to_string(), "class=od,expver=0001,step=12");
        assert_eq!(key.get("expver"), Some("0001"));
        assert!(Key::parse("class").is_err());
        assert!(Key::parse("class=od,class=rd").is_err());
    }

    #[test]
    fn values_string_round_trip_with_empty_values() {
        let key = Key::from_pairs([("step", "12"), ("levelist", ""), ("param", "130")]);
        let kws: Vec<String> = key.keywords().map(String::from).collect();
        assert_eq!(key.values_string(), "12,,130");
        assert_eq!(Key::from_values_string(&kws, "12,,130").unwrap(), key);
        assert!(Key::from_values_string(&kws, "12,130").is_err());
        let too_many = Key::from_values_string(&kws, "12,,130,4").unwrap_err();
        assert!(too_many.to_string().contains("4 values for 3 keywords"), "{too_many}");
        assert_eq!(key.display_non_empty(), "step=12,param=130");
        assert!(!key.non_empty().is_empty());
        let absent = Key::from_pairs([("number", ""), ("levelist", "")]);
        assert!(absent.non_empty().is_empty());
        assert_eq!(format!("{{{}}}", absent.non_empty()), "{}");
        assert_eq!(Key::from_values_string(&[], "").unwrap(), Key::new());
        assert!(Key::from_values_string(&[], "x").is_err());
    }

    #[test]
    fn values_from_outside_are_checked_as_parsed_ones_are() {
        let kws: Vec<String> = ["step", "param"].map(String::from).to_vec();
        assert_eq!(Key::from_checked_values(&kws, "12,130").unwrap(), Key::from_pairs([("step", "12"), ("param", "130")]));
        for (values, culprit) in [("12,a/b", "a/b"), ("x=y,1", "x=y"), ("1,a b", "a b")] {
            let refused = Key::from_checked_values(&kws, values).unwrap_err();
            assert!(refused.to_string().contains(culprit), "{values:?}: {refused}");
        }
        let long = "9".repeat(MAX_VALUE_LEN + 1);
        let refused = Key::from_checked_values(&kws, &format!("1,{long}")).unwrap_err();
        assert!(refused.to_string().contains("longer than"), "{refused}");
        let longest = "9".repeat(MAX_VALUE_LEN);
        assert!(Key::from_checked_values(&kws, &format!("{longest},{longest}")).is_ok());
    }

    #[test]
    fn stored_values_cannot_escape_their_place() {
        for bad in ["a/b", "..\\x", "a,b", "a=b", "a b", "nul\0", "tab\t"] {
            assert!(validate_value("class", bad).is_err(), "{bad:?} must be refused");
        }
        assert!(validate_value("class", &"x".repeat(MAX_VALUE_LEN + 1)).is_err());
        for good in ["od", "0001", "", "..", "0-12", "1.5+1.5", "130.128"] {
            assert!(validate_value("class", good).is_ok(), "{good:?} must be accepted");
        }
    }
}
