//! The one error type of the REST API: `{"error": {"code", "message"}}` with
//! a 4xx status for the client's mistakes.

use axum::extract::{FromRequestParts, Path, Query};
use axum::http::request::Parts;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;
use serde_json::json;

#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
        }
    }
    pub fn bad_request(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, code, message)
    }
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid_value", message)
    }
    pub fn not_found(what: &str) -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("{what} not found"),
        )
    }
    pub fn conflict(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, code, message)
    }
    pub fn unavailable(message: impl Into<String>) -> Self {
        Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "world_unavailable",
            message,
        )
    }
}

/// The error shape's body, `{"error": {"code", "message"}}` (also written
/// for hyper's own answers by `http.rs`).
pub fn error_body(code: &str, message: &str) -> serde_json::Value {
    json!({"error": {"code": code, "message": message}})
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (
            self.status,
            axum::Json(error_body(self.code, &self.message)),
        )
            .into_response()
    }
}

pub type ApiResult<T> = Result<T, ApiError>;

/// A route's path parameters; a path whose parameters cannot be read (a
/// segment that is not UTF-8, say) names nothing here: a 404 in the error
/// shape (axum's own rejection is a plain-text 400).
pub struct ApiPath<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for ApiPath<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        match Path::<T>::from_request_parts(parts, state).await {
            Ok(Path(t)) => Ok(Self(t)),
            Err(e) => Err(ApiError::new(
                StatusCode::NOT_FOUND,
                "not_found",
                format!("no such path: {}", e.body_text()),
            )),
        }
    }
}

/// A query string, whose rejection (a parameter of the wrong type or out
/// of its type's range, or given twice) is a 422 in the error shape.
pub struct ApiQuery<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        match Query::<T>::from_request_parts(parts, state).await {
            Ok(Query(t)) => Ok(Self(t)),
            Err(e) => Err(ApiError::invalid(e.body_text())),
        }
    }
}
