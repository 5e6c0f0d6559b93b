//! The browser viewer (clients/viewer) and the JavaScript client it imports
//! (clients/js), built into the binary so `arbiter serve` needs nothing at
//! run time: `GET /` and `/viewer/` give the page, `/viewer/{file}` the
//! viewer's modules and `/viewer/client/{file}` the client's.

use axum::extract::Path;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;

const INDEX: &str = include_str!("../../clients/viewer/index.html");

const FILES: &[(&str, &str)] = &[
    ("viewer.js", include_str!("../../clients/viewer/viewer.js")),
    ("gl.js", include_str!("../../clients/viewer/gl.js")),
    ("client/index.js", include_str!("../../clients/js/index.js")),
    (
        "client/binary.js",
        include_str!("../../clients/js/binary.js"),
    ),
    (
        "client/interpolation.js",
        include_str!("../../clients/js/interpolation.js"),
    ),
];

/// The viewer's routes (stateless; merge them into the app).
pub fn router<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route("/", get(index))
        .route("/viewer", get(index))
        .route("/viewer/", get(index))
        .route("/viewer/index.html", get(index))
        .route("/viewer/{*file}", get(file))
}

async fn index() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        INDEX,
    )
        .into_response()
}

async fn file(Path(file): Path<String>) -> Response {
    match FILES.iter().find(|(name, _)| *name == file) {
        Some((_, body)) => (
            [
                (header::CONTENT_TYPE, "text/javascript; charset=utf-8"),
                (header::CACHE_CONTROL, "no-cache"),
            ],
            *body,
        )
            .into_response(),
        None => super::error::ApiError::not_found("file").into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_import_of_the_viewer_is_served() {
        // Relative imports in the served modules resolve to served files.
        for (name, body) in FILES {
            let dir = name.rsplit_once('/').map_or("", |(d, _)| d);
            for line in body
                .lines()
                .filter(|l| l.starts_with("import ") || l.contains("} from \""))
            {
                if let Some(spec) = line.split('"').nth(1).filter(|s| s.starts_with("./")) {
                    let path = if dir.is_empty() {
                        spec[2..].to_string()
                    } else {
                        format!("{dir}/{}", &spec[2..])
                    };
                    assert!(
                        FILES.iter().any(|(n, _)| *n == path),
                        "{name} imports {spec}, not served"
                    );
                }
            }
        }
        assert!(INDEX.contains("/viewer/viewer.js"));
    }
}
