//! This backend's errors, converted into `crucible_core::Error`. A real backend adds
//! a variant per kind of driver failure, each with a `#[from]` conversion from the
//! driver's own error type, and maps them to `Error::Device` (see backend-cuda's
//! error.rs).

/// What this backend can answer.
#[derive(Debug, thiserror::Error)]
pub enum TemplateError {
    /// An operation this backend does not implement yet.
    #[error("template: `{operation}` is not implemented; {todo} (backend-template/src/{file})")]
    NotImplemented {
        /// The trait method.
        operation: &'static str,
        /// The file it belongs in.
        file: &'static str,
        /// What to implement.
        todo: &'static str,
    },
}

impl From<TemplateError> for crucible_core::Error {
    fn from(e: TemplateError) -> Self {
        match e {
            TemplateError::NotImplemented { .. } => {
                crucible_core::Error::Unsupported(e.to_string())
            }
        }
    }
}

/// The `Unsupported` answer of `operation`, which belongs in `file`: `todo` says what
/// to write there.
pub fn not_implemented<T>(
    operation: &'static str,
    file: &'static str,
    todo: &'static str,
) -> crucible_core::Result<T> {
    Err(TemplateError::NotImplemented {
        operation,
        file,
        todo,
    }
    .into())
}
