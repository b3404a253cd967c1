//! GRIB input: splitting a byte stream into messages, reading each one's MARS identifier
//! (through ecCodes), and FDB5's `fdb-write` options: keys set in each message
//! (`--modifiers`) and messages kept or left out by their keys (`--include-filter`,
//! `--exclude-filter`).

use std::borrow::Cow;

use fieldstore_core::error::ErrorKind;
use fieldstore_core::schema::Schema;
use fieldstore_core::{Error, FieldStore, Key, Request, Result};
use fieldstore_grib as grib;

/// One GRIB message ready to archive: the input's bytes, or the message re-encoded with the
/// modifiers set.
pub struct GribField<'a> {
    /// The message's MARS identifier, as ecCodes reads it.
    pub identifier: Key,
    /// The bytes to archive.
    pub bytes: Cow<'a, [u8]>,
}

/// What is done to each message before it is archived (FDB5's `fdb-write` options).
#[derive(Clone, Debug, Default)]
pub struct GribOptions {
    /// Keys set in each message through ecCodes before its identifier is read, so the
    /// stored message says what its identifier says (`--modifiers=expver=0042,...`).
    pub modifiers: Vec<(String, String)>,
    /// Only messages whose keys match this request are archived (`--include-filter`).
    pub include: Option<Request>,
    /// Messages whose keys match this request are not archived (`--exclude-filter`).
    pub exclude: Option<Request>,
}

impl GribOptions {
    /// Parses `k=v,k=v` modifiers; the error names the one without a value.
    pub fn parse_modifiers(text: &str) -> Result<Vec<(String, String)>> {
        text.split(',')
            .map(str::trim)
            .filter(|item| !item.is_empty())
            .map(|item| match item.split_once('=') {
                Some((k, v)) if !k.trim().is_empty() && !v.trim().is_empty() => Ok((k.trim().to_string(), v.trim().to_string())),
                _ => Err(Error::RequestSyntax { context: item.to_string(), message: "a modifier is key=value".into() }),
            })
            .collect()
    }
}

/// Splits GRIB bytes into messages and reads each one's MARS identifier, checking every
/// message against the schema before anything is archived: a bad message anywhere means
/// nothing from this input is archived. Errors name the input and the message. Messages the
/// filters leave out are not returned. `decoded` is told the length of each message decoded
/// (from several threads).
pub fn prepare_grib<'a>(
    fs: &FieldStore,
    data: &'a [u8],
    source: &str,
    options: &GribOptions,
    decoded: &(dyn Fn(usize) + Sync),
) -> Result<Vec<GribField<'a>>> {
    let spans = grib::scan(data, source)?;
    // Decoding keys with ecCodes is the cost here; it is thread-safe, so each core takes a
    // share of the messages. Results keep the input order.
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(spans.len().div_ceil(64)).max(1);
    let chunk = spans.len().div_ceil(threads).max(1);
    // A filter naming a keyword no schema rule uses would match nothing, or everything.
    let keywords = fs.schema().keywords();
    for (filter, name) in [(&options.include, "--include-filter"), (&options.exclude, "--exclude-filter")] {
        if let Some(unknown) = filter.iter().flat_map(|f| f.keywords()).find(|k| !keywords.contains(k)) {
            return Err(Error::RequestSyntax {
                context: name.to_string(),
                message: format!("unknown keyword '{unknown}': no schema rule uses it"),
            });
        }
    }
    let input = Input { schema: fs.schema(), data, source, options, decoded };
    std::thread::scope(|s| {
        let workers: Vec<_> = spans.chunks(chunk).enumerate().map(|(c, part)| s.spawn(move || input.identify(c * chunk, part))).collect();
        let mut fields = Vec::with_capacity(spans.len());
        for w in workers {
            fields.extend(w.join().map_err(|_| Error::new(ErrorKind::Io, "decoding GRIB keys panicked"))??);
        }
        Ok(fields)
    })
}

/// Archives every message of a GRIB byte stream (not flushed); `progress` gets the count
/// archived so far. Returns the number of fields.
pub fn archive_grib(fs: &FieldStore, data: &[u8], source: &str, mut progress: impl FnMut(usize)) -> Result<usize> {
    let fields = prepare_grib(fs, data, source, &GribOptions::default(), &|_| {})?;
    for (i, field) in fields.iter().enumerate() {
        fs.archive(&field.identifier, &field.bytes)?;
        progress(i + 1);
    }
    Ok(fields.len())
}

/// One input being prepared, shared by the threads that decode its messages.
#[derive(Clone, Copy)]
struct Input<'i, 'a> {
    schema: &'i Schema,
    data: &'a [u8],
    source: &'i str,
    options: &'i GribOptions,
    decoded: &'i (dyn Fn(usize) + Sync),
}

impl<'a> Input<'_, 'a> {
    /// The fields of some messages (`first` is the index of the first), checked against the
    /// schema, without those the filters leave out.
    fn identify(self, first: usize, spans: &[grib::MessageSpan]) -> Result<Vec<GribField<'a>>> {
        let mut fields = Vec::with_capacity(spans.len());
        for (i, span) in spans.iter().enumerate() {
            let context = || format!("{}, message {} at byte {}", self.source, first + i + 1, span.offset);
            // A refused message is a bad request, whatever refused it (ecCodes, the schema).
            let refused = |e: Error| Error::caused_by(ErrorKind::BadRequest, format!("GRIB {}", context()), e);
            let original = &self.data[span.offset..span.offset + span.length];
            let bytes = match self.options.modifiers.as_slice() {
                [] => Cow::Borrowed(original),
                modifiers => Cow::Owned(grib::modify(original, modifiers).map_err(refused)?),
            };
            let identifier = grib::mars_keys(&bytes).map_err(refused)?;
            (self.decoded)(span.length);
            // Filtered first, as fdb-write does: a message left out is not checked.
            if !self.wanted(&identifier)? {
                continue;
            }
            if let Some(missing) = ["class", "expver", "stream"].into_iter().find(|k| identifier.get(k).is_none()) {
                return Err(Error::Grib {
                    context: context(),
                    message: format!(
                        "no MARS '{missing}' key (has {identifier}): not an ECMWF-style GRIB; add MARS keys with grib_set or \
                         --modifiers, e.g. -s centre=98,setLocalDefinition=1,localDefinitionNumber=1,class=od,stream=oper,type=fc,expver=0001"
                    ),
                });
            }
            self.schema.split(&identifier).map_err(refused)?;
            fields.push(GribField { identifier, bytes });
        }
        Ok(fields)
    }

    /// Whether the filters keep a message with these keys.
    fn wanted(&self, identifier: &Key) -> Result<bool> {
        let include = self.options.include.as_ref().map_or(Ok(true), |r| self.matches(r, identifier))?;
        let exclude = self.options.exclude.as_ref().map_or(Ok(false), |r| self.matches(r, identifier))?;
        Ok(include && !exclude)
    }

    /// Whether every keyword of `filter` has one of its values in the message's keys, both
    /// read as the schema's types read them (`param=t` is `param=130`, `time=12` is `1200`).
    fn matches(&self, filter: &Request, identifier: &Key) -> Result<bool> {
        for keyword in filter.keywords() {
            let ty = self.schema.type_of(&[], keyword);
            let Some(values) = filter.values(keyword, ty)? else { continue };
            let value = identifier.get(keyword).map(|v| ty.canonical(keyword, v)).transpose()?;
            if !value.is_some_and(|v| values.contains(&v)) {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_message_names_itself_and_keeps_the_refusal_as_its_source() {
        let root = tempfile::tempdir().unwrap();
        let yaml = format!(
            "catalogue: {{type: posix, root: {0}, create: true}}\nstore: {{type: posix, root: {0}, create: true}}\n",
            root.path().display()
        );
        let fs = crate::open(&crate::Config::parse("t.yaml", &yaml).unwrap()).unwrap();
        let message = grib::sample_message("regular_ll_sfc_grib2", &[]).unwrap();
        let options = GribOptions { modifiers: vec![("noSuchKey".into(), "1".into())], ..GribOptions::default() };
        let err = prepare_grib(&fs, &message, "t.grib", &options, &|_| {}).err().unwrap();
        assert_eq!((err.kind(), err.to_string().as_str()), (ErrorKind::BadRequest, "GRIB t.grib, message 1 at byte 0"));
        let refusal = std::error::Error::source(&err).and_then(|cause| cause.downcast_ref::<Error>());
        assert!(refusal.is_some_and(|e| e.to_string().contains("noSuchKey")), "ecCodes' refusal is the source: {err:?}");
    }
}
