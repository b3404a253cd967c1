//! The MARS request language: `verb,k=v,k=a/b/c,k=a/to/b/by/c,k=all`. A request file may hold
//! several requests, each starting with a verb (`retrieve`, `list`, ...); newlines and `#`
//! comments are free. Values stay as the user wrote them until a keyword's type is known
//! (it depends on the schema rule), then [`Request::values`] canonicalises and expands them.

use crate::error::{Error, Result};
use crate::types::{KeywordType, MAX_RANGE_VALUES};

/// One item of a value list.
#[derive(Clone, Debug, PartialEq)]
pub enum ValueItem {
    /// One value, as written.
    Single(String),
    /// `from/to/to[/by/by]`
    Range {
        /// The first value, as written.
        from: String,
        /// The last value, as written; the range stops at or before it.
        to: String,
        /// The step, as written; `None` means the type's default (see [`KeywordType::expand_range`]).
        by: Option<String>,
    },
}

/// What a request gives for one keyword.
#[derive(Clone, Debug, PartialEq)]
pub enum Values {
    /// `k=all`: every stored value.
    All,
    /// `k=a/b/c`: the values and ranges named, in order.
    List(Vec<ValueItem>),
}

/// A parsed MARS request.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Request {
    /// The verb (`retrieve`, `list`, ...), lowercased; `None` when the text names none.
    pub verb: Option<String>,
    entries: Vec<(String, Values)>,
}

impl Request {
    /// Parses exactly one request (the verb is optional).
    pub fn parse(text: &str) -> Result<Request> {
        let mut all = Request::parse_many(text)?;
        match all.len() {
            0 => Ok(Request::default()),
            1 => Ok(all.remove(0)),
            n => Err(syntax(text, format!("expected one request, found {n}"))),
        }
    }

    /// Parses a request file: one or more requests, each opened by a verb.
    pub fn parse_many(text: &str) -> Result<Vec<Request>> {
        let mut requests: Vec<Request> = Vec::new();
        for raw_item in split_items(text) {
            let item = raw_item.trim();
            if item.is_empty() {
                continue;
            }
            // NUL and other control characters end C strings and hide in messages: no request
            // names them (line ends and tabs only separate).
            if let Some(c) = item.chars().find(|c| c.is_control() && !matches!(c, '\t' | '\r')) {
                return Err(syntax(item, format!("control character {c:?} in the request")));
            }
            match item.split_once('=') {
                None => {
                    if !item.chars().all(|c| c.is_ascii_alphabetic() || c == '_') {
                        return Err(syntax(item, "expected keyword=value or a verb"));
                    }
                    requests.push(Request { verb: Some(item.to_ascii_lowercase()), entries: Vec::new() });
                }
                Some((k, v)) => {
                    if requests.is_empty() {
                        requests.push(Request::default());
                    }
                    let keyword = k.trim().to_ascii_lowercase();
                    if keyword.is_empty() || !keyword.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                        return Err(syntax(item, format!("'{}' is not a keyword", k.trim())));
                    }
                    let request = requests.last_mut().unwrap();
                    // `k=off` unsets a keyword, as in MARS (`levtype=sfc,levelist=off`).
                    if v.trim().eq_ignore_ascii_case("off") {
                        request.entries.retain(|(k, _)| *k != keyword);
                        continue;
                    }
                    let values = match keyword.as_str() {
                        // A path: '/' separates no values there.
                        "target" => Values::List(vec![ValueItem::Single(v.trim().to_string())]),
                        _ => parse_values(&keyword, v.trim())?,
                    };
                    if request.get(&keyword).is_some() {
                        return Err(syntax(item, format!("keyword '{keyword}' given twice in one request")));
                    }
                    request.entries.push((keyword, values));
                }
            }
        }
        Ok(requests)
    }

    /// What the request gives for `keyword`; `None` when it does not name it.
    pub fn get(&self, keyword: &str) -> Option<&Values> {
        self.entries.iter().find(|(k, _)| k == keyword).map(|(_, v)| v)
    }

    /// Whether the request asks for `keyword` to be absent, and nothing else (`timespan=`):
    /// a rule without the keyword matches it too.
    pub fn asks_only_absence(&self, keyword: &str) -> bool {
        match self.get(keyword) {
            Some(Values::List(items)) => items.iter().all(|i| matches!(i, ValueItem::Single(v) if v.trim().is_empty())),
            _ => false,
        }
    }

    /// The keywords the request names, in the order written.
    pub fn keywords(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|(k, _)| k.as_str())
    }

    /// Whether the request names no keyword (a bare verb is empty).
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Sets a keyword to explicit values (used by APIs that build requests).
    pub fn set(&mut self, keyword: &str, values: Vec<String>) {
        let v = Values::List(values.into_iter().map(ValueItem::Single).collect());
        match self.entries.iter_mut().find(|(k, _)| k == keyword) {
            Some(e) => e.1 = v,
            None => self.entries.push((keyword.to_string(), v)),
        }
    }

    /// Sets a keyword to values given one by one, as APIs building requests give them (`to`
    /// and `by` tokens make ranges: `0`, `to`, `12`, `by`, `6`); no value names no field.
    pub fn set_tokens(&mut self, keyword: &str, tokens: &[String]) -> Result<()> {
        if keyword.is_empty() || !keyword.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(syntax(keyword, format!("'{keyword}' is not a keyword")));
        }
        let values = match tokens {
            [] => Values::List(Vec::new()),
            _ => parse_values(keyword, &tokens.join("/"))?,
        };
        match self.entries.iter_mut().find(|(k, _)| k == keyword) {
            Some(e) => e.1 = values,
            None => self.entries.push((keyword.to_string(), values)),
        }
        Ok(())
    }

    /// The canonical values asked for `keyword` under type `ty`; `None` means "any value"
    /// (keyword absent or `all`).
    pub fn values(&self, keyword: &str, ty: KeywordType) -> Result<Option<Vec<String>>> {
        let Some(Values::List(items)) = self.get(keyword) else { return Ok(None) };
        let mut out = Vec::new();
        for item in items {
            match item {
                ValueItem::Single(v) => out.push(ty.canonical_asked(keyword, v)?),
                ValueItem::Range { from, to, by } => out.extend(ty.expand_range(keyword, from, to, by.as_deref())?),
            }
            // The whole list is bounded, not each range: 150 ranges of 100,000 values each
            // would otherwise take gigabytes.
            if out.len() > MAX_RANGE_VALUES {
                return Err(Error::TooManyValues { keyword: keyword.to_string(), count: out.len(), limit: MAX_RANGE_VALUES });
            }
        }
        // A value named twice is one value, at its first place (FDB5 and MARS do the same).
        let mut seen = std::collections::HashSet::new();
        out.retain(|v| seen.insert(v.clone()));
        Ok(Some(out))
    }
}

/// MARS keywords that route a request or name its output: they select no field, and a store
/// reads them as MARS does (`target` names the output) or passes over them.
pub const ROUTING_KEYWORDS: &[&str] = &["target", "database", "expect", "fieldset", "use", "padding", "priority", "transfer", "cache"];

/// MARS keywords that ask for the fields transformed (interpolated, cropped, repacked,
/// converted): fieldstore returns fields as they were archived, so a request naming one is
/// refused rather than answered with what was not asked for. (`format=grib` asks for nothing.)
pub const POST_PROCESSING_KEYWORDS: &[&str] = &[
    "grid",
    "area",
    "resol",
    "rotation",
    "frame",
    "bitmap",
    "interpolation",
    "accuracy",
    "packing",
    "truncation",
    "intgrid",
    "gaussian",
    "format",
];

/// Verbs of requests that read fields.
const READING_VERBS: &[&str] = &["retrieve", "list", "read"];

/// A request as a store reads it: the keywords that select fields, the output it names, and
/// the routing keywords passed over.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldRequest {
    /// The request with only the keywords that select fields (and the verb).
    pub request: Request,
    /// `target=`: the file MARS writes the fields to.
    pub target: Option<String>,
    /// Routing keywords passed over, as `k=v`.
    pub ignored: Vec<String>,
}

impl Request {
    /// Reads the request as MARS does for a store whose schemas use the keywords `uses` says:
    /// keywords they use select fields whatever their name (FDB5's schema uses `grid`);
    /// routing keywords are set aside (`target` as the output); post-processing keywords and
    /// verbs that read no fields are refused, naming them.
    pub fn for_fields(&self, uses: impl Fn(&str) -> bool) -> Result<FieldRequest> {
        if let Some(verb) = self.verb.as_deref().filter(|v| !READING_VERBS.contains(v)) {
            return Err(Error::RequestSyntax {
                context: self.to_string(),
                message: format!("verb '{verb}' reads no fields (requests here are {})", READING_VERBS.join(", ")),
            });
        }
        let mut out = FieldRequest { request: Request { verb: self.verb.clone(), entries: Vec::new() }, target: None, ignored: Vec::new() };
        for (keyword, values) in &self.entries {
            let text = Request { verb: None, entries: vec![(keyword.clone(), values.clone())] }.to_string();
            let harmless_format = keyword == "format" && text.eq_ignore_ascii_case("format=grib");
            if uses(keyword) {
                out.request.entries.push((keyword.clone(), values.clone()));
            } else if keyword == "target" {
                out.target = Some(text["target=".len()..].to_string());
            } else if ROUTING_KEYWORDS.contains(&keyword.as_str()) || harmless_format {
                out.ignored.push(text);
            } else if POST_PROCESSING_KEYWORDS.contains(&keyword.as_str()) {
                return Err(Error::RequestSyntax {
                    context: self.to_string(),
                    message: format!(
                        "{text} asks for the fields transformed (interpolated, cropped, repacked or converted), which fieldstore does \
                         not do: leave it out to have them as archived (FDB5's fdb-read passes over it and returns them as archived)"
                    ),
                });
            } else {
                out.request.entries.push((keyword.clone(), values.clone()));
            }
        }
        Ok(out)
    }
}

impl std::fmt::Display for Values {
    /// As a request writes them: `all`, or `a/b/1/to/9/by/2`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Values::List(items) = self else { return f.write_str("all") };
        for (n, item) in items.iter().enumerate() {
            if n > 0 {
                f.write_str("/")?;
            }
            match item {
                // Quoted where it would start a comment, so that the text parses back.
                ValueItem::Single(s) if s.contains('#') => write!(f, "\"{s}\"")?,
                ValueItem::Single(s) => f.write_str(s)?,
                ValueItem::Range { from, to, by: None } => write!(f, "{from}/to/{to}")?,
                ValueItem::Range { from, to, by: Some(b) } => write!(f, "{from}/to/{to}/by/{b}")?,
            }
        }
        Ok(())
    }
}

impl std::fmt::Display for Request {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts: Vec<String> = self.verb.iter().cloned().collect();
        parts.extend(self.entries.iter().map(|(k, v)| format!("{k}={v}")));
        f.write_str(&parts.join(","))
    }
}

fn syntax(context: &str, message: impl Into<String>) -> Error {
    Error::RequestSyntax { context: format!("{context:?}"), message: message.into() }
}

/// Splits request text into items at commas and line ends, dropping `#` comments and
/// honouring double quotes.
fn split_items(text: &str) -> Vec<String> {
    let mut items = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    let mut comment = false;
    for c in text.chars() {
        match c {
            '\n' => {
                comment = false;
                quoted = false;
                items.push(std::mem::take(&mut current));
            }
            _ if comment => {}
            '"' => quoted = !quoted,
            '#' if !quoted => comment = true,
            ',' if !quoted => items.push(std::mem::take(&mut current)),
            _ => current.push(c),
        }
    }
    items.push(current);
    // A value list may continue on the next line after a trailing '/': join such items.
    let mut joined: Vec<String> = Vec::new();
    for item in items {
        match joined.last_mut() {
            Some(last) if last.trim_end().ends_with('/') => last.push_str(item.trim()),
            _ => joined.push(item),
        }
    }
    joined
}

fn parse_values(keyword: &str, text: &str) -> Result<Values> {
    if text.eq_ignore_ascii_case("all") {
        return Ok(Values::All);
    }
    if text.trim().is_empty() {
        // `timespan=`: the absence of an optional keyword, as listings write it (FDB5's too).
        return Ok(Values::List(vec![ValueItem::Single(String::new())]));
    }
    let tokens: Vec<&str> = text.split('/').map(str::trim).collect();
    if tokens.iter().any(|t| t.is_empty()) {
        return Err(syntax(&format!("{keyword}={text}"), "empty value in list"));
    }
    let mut items = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let t = tokens[i];
        if t.eq_ignore_ascii_case("to") || t.eq_ignore_ascii_case("by") {
            return Err(syntax(&format!("{keyword}={text}"), format!("'{t}' needs a value before it")));
        }
        if tokens.get(i + 1).is_some_and(|n| n.eq_ignore_ascii_case("to")) {
            let to = tokens.get(i + 2).ok_or_else(|| syntax(&format!("{keyword}={text}"), "'to' needs a value after it"))?;
            let mut by = None;
            i += 3;
            if tokens.get(i).is_some_and(|n| n.eq_ignore_ascii_case("by")) {
                by =
                    Some(tokens.get(i + 1).ok_or_else(|| syntax(&format!("{keyword}={text}"), "'by' needs a value after it"))?.to_string());
                i += 2;
            }
            items.push(ValueItem::Range { from: t.to_string(), to: to.to_string(), by });
        } else {
            if t.eq_ignore_ascii_case("all") {
                return Ok(Values::All);
            }
            items.push(ValueItem::Single(t.to_string()));
            i += 1;
        }
    }
    Ok(Values::List(items))
}

#[cfg(test)]
mod tests {
    use super::*;
    use KeywordType::*;

    #[test]
    fn parses_verbs_lists_ranges_and_all() {
        let r = Request::parse("retrieve,class=od,step=0/to/12/by/6,levelist=500/850,param=all").unwrap();
        assert_eq!(r.verb.as_deref(), Some("retrieve"));
        assert_eq!(r.values("step", Step).unwrap().unwrap(), ["0", "6", "12"]);
        assert_eq!(r.values("levelist", Double).unwrap().unwrap(), ["500", "850"]);
        assert_eq!(r.values("param", Param).unwrap(), None);
        assert_eq!(r.values("number", Integer).unwrap(), None);
        assert_eq!(r.to_string(), "retrieve,class=od,step=0/to/12/by/6,levelist=500/850,param=all");
    }

    #[test]
    fn canonicalises_by_type() {
        let r = Request::parse("time=12,expver=1,param=130.128/167,date=2023-12-01/to/2023-12-02,number=1/to/3").unwrap();
        assert_eq!(r.values("time", Time).unwrap().unwrap(), ["1200"]);
        assert_eq!(r.values("expver", Expver).unwrap().unwrap(), ["0001"]);
        assert_eq!(r.values("param", Param).unwrap().unwrap(), ["130", "167"]);
        assert_eq!(r.values("date", Date).unwrap().unwrap(), ["20231201", "20231202"]);
        assert_eq!(r.values("number", Integer).unwrap().unwrap(), ["1", "2", "3"]);
    }

    #[test]
    fn mars_request_files_keep_what_selects_and_read_or_refuse_the_rest() {
        let text = "retrieve,class=od,grid=1/1,target=\"/tmp/out dir/t.grib\",database=fdb,format=GRIB,step=6\n";
        let request = &Request::parse_many(text).unwrap()[0];
        // A schema that uses `grid` selects on it.
        let read = request.for_fields(|k| ["class", "grid", "step"].contains(&k)).unwrap();
        assert_eq!(read.request.to_string(), "retrieve,class=od,grid=1/1,step=6");
        assert_eq!(read.target.as_deref(), Some("/tmp/out dir/t.grib"));
        assert_eq!(read.ignored, ["database=fdb", "format=GRIB"]);
        // Else it asks for interpolation, which is refused by name.
        let err = request.for_fields(|k| ["class", "step"].contains(&k)).unwrap_err().to_string();
        assert!(err.contains("grid=1/1 asks for the fields transformed"), "{err}");
        // Keywords neither MARS nor the schema know stay, for the store to name as unknown.
        let typo = Request::parse("class=od,setp=6").unwrap().for_fields(|k| k == "class").unwrap();
        assert_eq!(typo.request.to_string(), "class=od,setp=6");
        let archive = Request::parse("archive,class=od").unwrap().for_fields(|_| true).unwrap_err().to_string();
        assert!(archive.contains("verb 'archive' reads no fields"), "{archive}");
        assert!(Request::parse("format=netcdf").unwrap().for_fields(|_| false).is_err());
    }

    #[test]
    fn request_files_hold_several_requests() {
        let text = "# two requests\nretrieve,\n  class=od,\n  step=0/\n   6/12   # continued list\nlist, class=rd, expver=\"0001\"\n";
        let all = Request::parse_many(text).unwrap();
        assert_eq!(all.len(), 2);
        assert_eq!(all[0].values("step", Step).unwrap().unwrap(), ["0", "6", "12"]);
        assert_eq!(all[1].verb.as_deref(), Some("list"));
        assert_eq!(all[1].values("expver", Expver).unwrap().unwrap(), ["0001"]);
        assert!(Request::parse(text).is_err());
    }

    #[test]
    fn a_whole_list_is_bounded_not_each_range() {
        let many = vec!["0/to/99999"; 150].join("/");
        let err = Request::parse(&format!("number={many}")).unwrap().values("number", Integer).unwrap_err().to_string();
        assert!(err.contains("at most 100000 may be named"), "{err}");
    }

    #[test]
    fn an_empty_value_asks_for_the_absence_of_a_keyword() {
        let r = Request::parse("class=od,timespan=,step=6").unwrap();
        assert!(r.asks_only_absence("timespan") && !r.asks_only_absence("step") && !r.asks_only_absence("number"));
        assert_eq!(r.values("timespan", Default).unwrap().unwrap(), [""]);
        assert_eq!(r.to_string(), "class=od,timespan=,step=6");
    }

    #[test]
    fn off_unsets_a_keyword_and_repeated_values_count_once() {
        let r = Request::parse("levtype=sfc,levelist=500,levelist=OFF,step=6/0/6/12/0").unwrap();
        assert_eq!(r.get("levelist"), None);
        assert_eq!(r.values("step", Step).unwrap().unwrap(), ["6", "0", "12"]);
    }

    #[test]
    fn syntax_errors_name_the_item() {
        for (text, needle) in [
            ("class=od,step=0/to", "'to' needs a value after it"),
            ("step=/6", "empty value"),
            ("class=o\0d", "control character '\\0'"),
            ("cla\u{1b}ss=od", "control character '\\u{1b}'"),
            ("cla ss=od", "not a keyword"),
            ("class=od,class=rd", "twice"),
            ("step=to/6", "needs a value before"),
        ] {
            let err = Request::parse(text).unwrap_err().to_string();
            assert!(err.contains(needle), "{text}: {err}");
        }
        let err = Request::parse("step=x").unwrap().values("step", Step).unwrap_err().to_string();
        assert!(err.contains("'step'") && err.contains("\"x\""), "{err}");
    }
}
