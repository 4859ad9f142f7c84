//! What `--runtime SPEC` names, parsed once: an embedded target, a shim over stdio, HTTP or
//! WebSocket, or a harness process. Each suite's `target` matches on it and refuses the kinds it
//! does not drive, in its own words.

use std::fmt;
use std::str::FromStr;

/// A target spec, as written after `--runtime`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Spec {
    /// `inproc:NAME`: an embedded target (`reference`, `mutant:NAME`, `variant:NAME` …).
    Inproc(String),
    /// `stdio:CMD ARGS`: a shim process speaking JSON-RPC, a line a message.
    Stdio(Command),
    /// `http://HOST:PORT…`: a shim serving JSON-RPC over HTTP (the whole URL).
    Http(String),
    /// `ws://HOST:PORT/PATH`: a shim serving JSON-RPC over WebSocket (the whole URL).
    Ws(String),
    /// `exec:CMD ARGS`: a harness process hcpspec starts.
    Exec(Command),
}

/// A command line: as written, and split into words as a shell would.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    pub line: String,
    pub argv: Vec<String>,
}

/// The kinds of [`Spec`] that carry a command, which may be bad.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    Stdio,
    Exec,
}

/// A spec that names nothing hcpspec can drive. One line naming it; exit 2.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    #[error("--runtime {0}: unknown runtime spec (expected inproc:NAME, stdio:'CMD ARGS', http://HOST:PORT or ws://HOST:PORT/PATH)")]
    Unknown(String),
    /// An `exec:` spec given to a suite that drives a shim: `exec:` launches a harness.
    #[error("--runtime {0}: exec: launches a harness, certified with --suite harness-api; this suite drives a shim: stdio:'CMD ARGS', http://HOST:PORT or ws://HOST:PORT/PATH (or inproc:NAME)")]
    Harness(String),
    /// A `stdio:` or `exec:` spec whose command is no words (an unclosed quote) or none.
    #[error("--runtime {spec}: {why}")]
    Command {
        spec: String,
        scheme: Scheme,
        why: String,
    },
}

impl From<SpecError> for crate::error::BadInput {
    fn from(e: SpecError) -> Self {
        crate::error::BadInput(e.to_string())
    }
}

impl Spec {
    /// A spec for a shim (every suite but harness-api's): `exec:` names none, so it is
    /// unknown there, however its command reads.
    pub fn of_shim(spec: &str) -> Result<Spec, SpecError> {
        match spec.parse() {
            Ok(Spec::Exec(_))
            | Err(SpecError::Command {
                scheme: Scheme::Exec,
                ..
            }) => Err(SpecError::Harness(spec.to_string())),
            other => other,
        }
    }
}

impl FromStr for Spec {
    type Err = SpecError;

    fn from_str(spec: &str) -> Result<Spec, SpecError> {
        let command = |line: &str, scheme: Scheme, prefix: &str| {
            let bad = |why: String| SpecError::Command {
                spec: spec.to_string(),
                scheme,
                why,
            };
            let argv = shell_words::split(line).map_err(|e| bad(e.to_string()))?;
            if argv.is_empty() {
                return Err(bad(format!("no command after {prefix}")));
            }
            Ok(Command {
                line: line.to_string(),
                argv,
            })
        };
        if let Some(name) = spec.strip_prefix("inproc:") {
            return Ok(Spec::Inproc(name.to_string()));
        }
        if let Some(line) = spec.strip_prefix("stdio:") {
            return command(line, Scheme::Stdio, "stdio:").map(Spec::Stdio);
        }
        if let Some(line) = spec.strip_prefix("exec:") {
            return command(line, Scheme::Exec, "exec:").map(Spec::Exec);
        }
        if spec.starts_with("http://") {
            return Ok(Spec::Http(spec.to_string()));
        }
        if spec.starts_with("ws://") {
            return Ok(Spec::Ws(spec.to_string()));
        }
        Err(SpecError::Unknown(spec.to_string()))
    }
}

impl fmt::Display for Spec {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Spec::Inproc(name) => write!(f, "inproc:{name}"),
            Spec::Stdio(c) => write!(f, "stdio:{}", c.line),
            Spec::Http(url) | Spec::Ws(url) => f.write_str(url),
            Spec::Exec(c) => write!(f, "exec:{}", c.line),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Scheme, Spec, SpecError};

    #[test]
    fn a_spec_reads_back_as_written() {
        for written in [
            "inproc:reference",
            "inproc:mutant:no-auth",
            "stdio:python3 'my shim.py' --x",
            "http://127.0.0.1:8080",
            "ws://127.0.0.1:9000/rpc",
            "exec:node harness.js",
        ] {
            let spec: Spec = written.parse().unwrap();
            assert_eq!(spec.to_string(), written);
            assert_eq!(spec.to_string().parse::<Spec>().unwrap(), spec);
        }
        let Spec::Stdio(c) = "stdio:python3 'my shim.py' --x".parse().unwrap() else {
            panic!("stdio");
        };
        assert_eq!(c.argv, ["python3", "my shim.py", "--x"]);
        assert!(matches!("exec:node h.js".parse(), Ok(Spec::Exec(_))));
        assert!(matches!("inproc:reference".parse(), Ok(Spec::Inproc(n)) if n == "reference"));
        assert!(matches!("ws://h:1/p".parse(), Ok(Spec::Ws(_))));
        assert!(matches!("http://h:1".parse(), Ok(Spec::Http(_))));
    }

    #[test]
    fn a_bad_spec_is_one_line_naming_it() {
        let e = "tcp://x".parse::<Spec>().unwrap_err();
        assert_eq!(e.to_string(), "--runtime tcp://x: unknown runtime spec (expected inproc:NAME, stdio:'CMD ARGS', http://HOST:PORT or ws://HOST:PORT/PATH)");
        let e = "stdio:  ".parse::<Spec>().unwrap_err();
        assert_eq!(e.to_string(), "--runtime stdio:  : no command after stdio:");
        assert!(matches!(
            "stdio:'open".parse::<Spec>(),
            Err(SpecError::Command {
                scheme: Scheme::Stdio,
                ..
            })
        ));
        assert_eq!(
            Spec::of_shim("exec:").unwrap_err(),
            SpecError::Harness("exec:".into())
        );
    }
}
