//! The optional fake session members of `hcpspec-host/2` (docs/host-protocol.md § 3.2): a shim
//! that does not list one in `host.describe`'s `fakes` is unimplemented on the cases giving it,
//! never played without it (which could pass them vacuously), and passes every other case.

use hcpspec::adapter::{Adapter, CallError};
use hcpspec::case::Level;
use hcpspec::run::Verdict;
use hcpspec::suites::host::{connector, run_case, Connector, FAKES};
use hcpspec::suites::load_suite;
use serde_json::Value;
use std::path::Path;

/// The reference adapter, its `host.describe` without `fakes`: a shim written before them.
struct Older(Box<dyn Adapter>);

impl Adapter for Older {
    fn call(&mut self, method: &str, params: Value) -> Result<Value, CallError> {
        let mut answer = self.0.call(method, params)?;
        if method == "host.describe" {
            answer.as_object_mut().map(|o| o.remove("fakes"));
        }
        Ok(answer)
    }
}

#[test]
fn a_shim_without_the_optional_fakes_is_unimplemented_where_a_case_needs_them() {
    let connect: Connector = Box::new(|| {
        let inner = connector(&"inproc:reference".parse().unwrap(), &Default::default())
            .map_err(|e| e.to_string())?()?;
        Ok(Box::new(Older(inner)) as Box<dyn Adapter>)
    });
    let vectors = Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors");
    let mut needing = 0;
    for c in load_suite(&vectors, "host").unwrap() {
        if c.level != Level::MUST {
            continue;
        }
        let text = c.member("host").map(Value::to_string).unwrap_or_default();
        let needs = FAKES.iter().any(|m| text.contains(&format!("\"{m}\"")));
        let v = run_case(&c, &connect).verdict;
        if needs {
            needing += 1;
            assert!(
                matches!(v, Verdict::Unimplemented { .. }),
                "{}: {v:?}",
                c.name()
            );
        } else {
            assert_eq!(v, Verdict::Pass, "{}", c.name());
        }
    }
    assert!(needing >= 4, "only {needing} cases give an optional fake");
}
