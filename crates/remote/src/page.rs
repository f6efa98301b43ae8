//! The phone page itself: ui/dist's phone.html with its scripts, manifest, service worker and
//! icons — the same Svelte UI the desktop runs, in its phone layout. Nothing here needs a token:
//! it is code, and what waits is only ever read through the token-checked `/v1` routes. The
//! desktop's own page (index.html) is not served.

use axum::extract::{Path, Request};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// Built by `npm run build` in ui/ (scripts/test.sh and setup.sh build it before any cargo
/// step); in debug builds rust-embed reads it from disk.
#[derive(rust_embed::Embed)]
#[folder = "../../ui/dist/"]
#[include = "phone.html"]
#[include = "assets/*"]
#[include = "manifest.webmanifest"]
#[include = "sw.js"]
#[allow_missing = true]
struct PhonePage;

const ICON_256: &[u8] = include_bytes!("../../../src-tauri/icons/128x128@2x.png");
const ICON_512: &[u8] = include_bytes!("../../../src-tauri/icons/icon.png");

/// Only this origin, no inline scripts, no framing: arguments shown on the page are text, and
/// even if one were not, it could not run or send anything anywhere else.
const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
                   img-src 'self' data:; connect-src 'self'; manifest-src 'self'; \
                   worker-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

fn file(path: &str) -> Response {
    match PhonePage::get(path) {
        Some(file) => {
            let mime = file.metadata.mimetype().to_string();
            let cache = if path.starts_with("assets/") {
                // Vite names assets by their content.
                "public, max-age=31536000, immutable"
            } else {
                "no-store"
            };
            (
                [
                    (header::CONTENT_TYPE, mime),
                    (header::CACHE_CONTROL, cache.to_string()),
                ],
                file.data.into_owned(),
            )
                .into_response()
        }
        None if path == "phone.html" => (
            StatusCode::SERVICE_UNAVAILABLE,
            "the phone page was not built: run `npm run build` in ui/ and build Airlock again",
        )
            .into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

pub async fn index() -> Response {
    file("phone.html")
}

pub async fn asset(Path(name): Path<String>) -> Response {
    // One file name (the path arrives decoded: `%2F` is a `/` here).
    if name.contains(['/', '\\']) || name.starts_with('.') {
        return StatusCode::NOT_FOUND.into_response();
    }
    file(&format!("assets/{name}"))
}

pub async fn manifest() -> Response {
    file("manifest.webmanifest")
}

pub async fn service_worker() -> Response {
    file("sw.js")
}

fn png(bytes: &'static [u8]) -> Response {
    ([(header::CONTENT_TYPE, "image/png")], bytes).into_response()
}

pub async fn icon_256() -> Response {
    png(ICON_256)
}

pub async fn icon_512() -> Response {
    png(ICON_512)
}

/// The headers every answer of the phone server carries.
pub async fn security_headers(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::STRICT_TRANSPORT_SECURITY,
        HeaderValue::from_static("max-age=31536000"),
    );
    response
}
