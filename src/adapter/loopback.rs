//! Every address a case, a shim or a core names resolves to the loopback interface
//! (docs/security.md): the one check, for every suite's clients.

use crate::error::BadInput;

/// The `host:port` of a URL on the loopback interface (`127.0.0.1`, `[::1]`, `localhost`), with
/// no user info: every address a case or a core names must be one (docs/security.md).
pub fn loopback_origin(url: &str) -> Result<String, BadInput> {
    let shown = crate::snapshot::contain_text(url);
    let uri: http::Uri = url
        .parse()
        .map_err(|e| format!("`{shown}` is not a URL: {e}"))?;
    let a = uri
        .authority()
        .ok_or_else(|| format!("`{shown}` names no host"))?;
    if a.as_str().contains('@') {
        return Err(BadInput(format!("`{shown}` carries user info")));
    }
    if !matches!(a.host(), "127.0.0.1" | "[::1]" | "::1" | "localhost") {
        return Err(BadInput(format!(
            "`{shown}` is not on the loopback interface"
        )));
    }
    let port = a
        .port_u16()
        .ok_or_else(|| format!("`{shown}` names no port"))?;
    Ok(format!("{}:{port}", a.host()))
}
