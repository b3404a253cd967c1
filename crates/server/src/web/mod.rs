//! The web catalogue: a page served at `/web/` (its HTML, script and style compiled in, so it
//! works offline and loads nothing from elsewhere) and the read-only JSON and PNG endpoints it
//! calls, each admitted and checked like every other request ([`browse`]: what is stored,
//! keyword by keyword with counts; [`field`]: one field's keys, statistics, location and map).
//! Nothing here writes. docs/web.md is the reference.

mod browse;
mod field;

pub use browse::{catalogue, BrowseQuery, Catalogue, Choice, Choices, Listed};

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use axum::Router;

use crate::routes::Shared;

/// The catalogue's data, as JSON ([`browse::browse`]).
pub const BROWSE: &str = "/v1/web/browse";
/// One field's keys, statistics and location, as JSON ([`field::field`]).
pub const FIELD: &str = "/v1/web/field";
/// One field drawn as a map, a PNG ([`field::map`]).
pub const MAP: &str = "/v1/web/map";

const PAGE: &str = include_str!("../../web/index.html");
const SCRIPT: &str = include_str!("../../web/catalogue.js");
const STYLE: &str = include_str!("../../web/catalogue.css");
const ICON: &str = include_str!("../../web/icon.svg");

/// The page, its files and its endpoints.
pub(crate) fn routes() -> Router<Shared> {
    Router::new()
        .route("/", get(|| async { Redirect::to("/web/") }))
        .route("/web", get(|| async { Redirect::to("/web/") }))
        .route("/web/", get(|| async { asset("text/html; charset=utf-8", PAGE) }))
        .route("/web/catalogue.js", get(|| async { asset("text/javascript; charset=utf-8", SCRIPT) }))
        .route("/web/catalogue.css", get(|| async { asset("text/css; charset=utf-8", STYLE) }))
        .route("/web/icon.svg", get(|| async { asset("image/svg+xml", ICON) }))
        // Browsers ask for it whatever the page says.
        .route("/favicon.ico", get(|| async { Redirect::to("/web/icon.svg") }))
        .route(BROWSE, get(browse::browse))
        .route(FIELD, get(field::field))
        .route(MAP, get(field::map))
}

/// One of the page's files: the same for every caller (no data in it), so no token is needed.
fn asset(content_type: &'static str, body: &'static str) -> Response {
    (StatusCode::OK, [(header::CONTENT_TYPE, content_type), (header::CACHE_CONTROL, "no-cache")], body).into_response()
}

/// The headers every answer of the server carries: scripts, styles, images and connections
/// from the server itself only (the page loads nothing from elsewhere and no inline script
/// runs), never framed, no type sniffing, no referrer sent on; and, over TLS, browsers told to
/// keep to HTTPS.
pub(crate) fn add_security_headers(tls: bool, mut response: Response) -> Response {
    let headers = response.headers_mut();
    let policy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob:; connect-src 'self'; \
                  base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(policy));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers.insert("cross-origin-opener-policy", HeaderValue::from_static("same-origin"));
    headers.insert("cross-origin-resource-policy", HeaderValue::from_static("same-origin"));
    headers.insert("permissions-policy", HeaderValue::from_static("camera=(), microphone=(), geolocation=(), payment=()"));
    if tls {
        headers.insert(header::STRICT_TRANSPORT_SECURITY, HeaderValue::from_static("max-age=31536000"));
    }
    if !headers.contains_key(header::CACHE_CONTROL) {
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    response
}
