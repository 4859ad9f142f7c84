//! Errors as values, shared by every layer: bad input and an unreachable implementation. Each
//! layer may wrap them in a type of its own; `exit::Error` gathers them all and `exit::code` is
//! the one place an error becomes an exit code.

/// Bad input: an argument, a case file, a pack or a file hcpspec was handed. One line that
/// names the file and the field. Exit 2.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadInput(pub String);

impl From<String> for BadInput {
    fn from(s: String) -> BadInput {
        BadInput(s)
    }
}

impl From<&str> for BadInput {
    fn from(s: &str) -> BadInput {
        BadInput(s.to_string())
    }
}

/// The implementation under test cannot be reached at all: it would not start, connect or
/// answer its first message. Exit 3.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unreachable: {0}")]
pub struct Unreachable(pub String);

/// For callers that still speak in strings: the line itself.
impl From<BadInput> for String {
    fn from(e: BadInput) -> String {
        e.0
    }
}
