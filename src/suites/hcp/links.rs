//! A case's `setup.links` (issue 44): symlinks hcpspec makes before `runtime.create`, so that a
//! runtime's own jail construction meets a link that leads outside the jail. Each path and
//! target stays inside the case's temp dir: `${workdir}/…` or `${tmp}/…`, no `..`.

use super::materialize::Vars;
use serde_json::{Map, Value};

/// The two roots a link's path or target may start from.
const ROOTS: &[&str] = &["${workdir}/", "${tmp}/"];

fn inside(s: &str) -> Result<(), String> {
    let Some(rest) = ROOTS.iter().find_map(|r| s.strip_prefix(r)) else {
        return Err(format!("{s:?} must start with ${{workdir}}/ or ${{tmp}}/"));
    };
    if rest.is_empty()
        || rest
            .split('/')
            .any(|c| c.is_empty() || c == "." || c == "..")
    {
        return Err(format!(
            "{s:?} must name a plain relative path (no empty, . or .. segment)"
        ));
    }
    Ok(())
}

/// A link as the case writes it, checked without touching the file system.
pub(super) fn check(path: &str, target: &Value) -> Result<(), String> {
    inside(path)?;
    match target.as_str() {
        Some(t) => inside(t),
        None => Err("a link's target must be a string".into()),
    }
}

/// Make every link (its parent directories too) in the case's temp dir.
pub(super) fn make(links: &Map<String, Value>, vars: &Vars) -> Result<(), String> {
    for (path, target) in links {
        check(path, target)?;
        let at = vars.substitute(&Value::String(path.clone()));
        let to = vars.substitute(target);
        let (Some(at), Some(to)) = (at.as_str(), to.as_str()) else {
            continue;
        };
        let at = std::path::Path::new(at);
        if let Some(parent) = at.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("setup.links: cannot create {}: {e}", parent.display()))?;
        }
        std::os::unix::fs::symlink(to, at)
            .map_err(|e| format!("setup.links: cannot link {} to {to}: {e}", at.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_link_stays_in_the_case() {
        assert!(check("${workdir}/transit", &json!("${tmp}/packs/transit")).is_ok());
        assert!(check("/etc/passwd", &json!("${tmp}/x")).is_err());
        assert!(check("${workdir}/../x", &json!("${tmp}/x")).is_err());
        assert!(check("${workdir}/x", &json!("/etc")).is_err());
        assert!(check("${workdir}/x", &json!(1)).is_err());
    }
}
