//! The extraction endpoints ([`fieldstore_extract::remote`]): a client's requests and ranges
//! extracted by the server's own [`Extractor`], next to the data, so that only the values
//! cross the network; and scans, which keep packings beside the server's data. The server's
//! extractor is shared by every client: a packing one learnt (a field's whole message read
//! once) serves all of them.

use axum::body::Body;
use axum::extract::State;
use axum::response::Response;

use fieldstore_core::api::{Need, Permission, Scope};
use fieldstore_core::{Error, ErrorKind, Request, Result};
use fieldstore_extract::remote::{encode_answer, value_bytes, ExtractCall, ScanCall};
use fieldstore_extract::Extractor;

use crate::access::Identity;
use crate::memory::Held;
use crate::routes::{admit, answer, authorise, blocking, bytes_answer, check, hide_beyond_access, name, read_body, sign, Caller, Shared};

/// The largest extraction call: a client sends [`fieldstore_extract::REMOTE_BATCH`] requests
/// a call, a few hundred kilobytes with their ranges.
const EXTRACT_LIMIT: usize = 16 << 20;

/// A field's share of an answer's header (its keys and location, as JSON), for the memory
/// budget.
const FIELD_HEADER_BYTES: u64 = 512;

pub(crate) async fn extract(State(served): State<Shared>, caller: Caller, body: Body) -> Response {
    let admitted = match admit(&served, &caller).await {
        Ok(admitted) => admitted,
        Err(refused) => return *refused,
    };
    let (call, received) = match read_body::<ExtractCall>(body, EXTRACT_LIMIT, "an extraction").await {
        Ok(read) => read,
        Err(e) => return answer(&served, &admitted, "extract", 0, Err(e)),
    };
    let outcome = extract_call(&served, admitted.identity, call).await.map(|body| bytes_answer("application/octet-stream", body));
    answer(&served, &admitted, "extract", received, outcome)
}

/// Each request checked against what `identity` may read, then extracted; the answer's
/// bytes held within the memory budget while it is made.
async fn extract_call(served: &Shared, identity: Option<&Identity>, call: ExtractCall) -> Result<Vec<u8>> {
    for one in &call.requests {
        check(identity, Permission::Read, &Scope::Request(&one.request))?;
    }
    let explanations = identity.is_none_or(|i| i.reads_everything());
    let (served, name) = (served.clone(), name(identity));
    let outcome = blocking(move || {
        let requests = call.parsed()?;
        let extractor: &Extractor = &served.extractor;
        let planned = extractor.plan_each(&served.fs, &requests)?;
        let fields = planned.fields() as u64;
        let bytes = value_bytes(planned.points()).saturating_add(fields.saturating_mul(FIELD_HEADER_BYTES));
        if bytes > served.memory.total() {
            // Never answered, however long the client waits: no retry.
            let message = format!(
                "an extraction of {} points from {fields} fields answers {bytes} bytes, more than the server's memory budget ({} bytes): split its requests (or ranges)",
                planned.points(),
                served.memory.total()
            );
            return Err(Error::new(ErrorKind::BadRequest, message));
        }
        let mut held = Held::none(&served.memory);
        held.set(bytes)?;
        let mut answers = extractor.extract_planned(&served.fs, &planned)?;
        for field in answers.iter_mut().flatten() {
            sign(&served.signing_key, &name, &mut field.field.location);
        }
        encode_answer(answers)
    })
    .await;
    outcome.map_err(|e| hide_beyond_access(explanations, e))
}

/// The largest scan call: a request.
const SCAN_LIMIT: usize = 1 << 20;

pub(crate) async fn scan(State(served): State<Shared>, caller: Caller, body: Body) -> Response {
    let admitted = match admit(&served, &caller).await {
        Ok(admitted) => admitted,
        Err(refused) => return *refused,
    };
    let (call, received) = match read_body::<ScanCall>(body, SCAN_LIMIT, "a scan").await {
        Ok(read) => read,
        Err(e) => return answer(&served, &admitted, "scan", 0, Err(e)),
    };
    let outcome = scan_call(&served, admitted.identity, call).await.map(|body| bytes_answer("application/json", body));
    answer(&served, &admitted, "scan", received, outcome)
}

/// A scan writes beside the data sets it names: `identity` must be allowed to read the
/// request and to archive into each of them, whole.
async fn scan_call(served: &Shared, identity: Option<&Identity>, call: ScanCall) -> Result<Vec<u8>> {
    if let Some(identity) = identity {
        let needs = [Need::on(&Permission::Read, Scope::Request(&call.request)), Need::on_datasets(&Permission::Archive, &call.request)];
        authorise(served, identity, &needs).await?;
    }
    let explanations = identity.is_none_or(|i| i.reads_everything());
    let served = served.clone();
    let outcome = blocking(move || {
        let kept = served.extractor.keep_packings(&served.fs, &Request::parse(&call.request)?, &mut |_, _| {})?;
        serde_json::to_vec(&kept).map_err(|e| Error::caused_by(ErrorKind::Io, "cannot encode a scan's answer", e))
    })
    .await;
    outcome.map_err(|e| hide_beyond_access(explanations, e))
}
