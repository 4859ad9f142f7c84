//! JSON pointers (RFC 6901): the one place that escapes and unescapes a reference token.

use std::borrow::Cow;

/// The reference token of an object key: `~` → `~0`, then `/` → `~1`. Borrows when the key
/// needs no escaping (almost always).
pub fn escape(key: &str) -> Cow<'_, str> {
    if key.contains(['~', '/']) {
        Cow::Owned(key.replace('~', "~0").replace('/', "~1"))
    } else {
        Cow::Borrowed(key)
    }
}

/// The object key a reference token names: `~1` → `/`, then `~0` → `~` (so `~01` is `~1`).
pub fn unescape(token: &str) -> Cow<'_, str> {
    if token.contains('~') {
        Cow::Owned(token.replace("~1", "/").replace("~0", "~"))
    } else {
        Cow::Borrowed(token)
    }
}

/// The most reference tokens a pointer hcpspec follows or builds may have (`/a` is one). A
/// pointer comes from cores (`purposeAt`) and cases (`padAt`); a value built along a deeper one
/// would be nested past what serde's recursive clone, drop and printing take on a thread's stack.
pub const MAX_TOKENS: usize = 64;

/// `pointer`'s reference tokens (unescaped not), or why it is past [`MAX_TOKENS`]: one line.
pub(crate) fn bounded_tokens(pointer: &str) -> Result<Vec<&str>, String> {
    let path = pointer.strip_prefix('/').unwrap_or(pointer);
    let n = path.split('/').take(MAX_TOKENS + 1).count();
    if n > MAX_TOKENS {
        let all = path.split('/').count();
        return Err(format!(
            "a JSON pointer of {all} tokens (at most {MAX_TOKENS})"
        ));
    }
    Ok(path.split('/').collect())
}

/// `base` with one more token, the object key `key`.
pub fn push(base: &str, key: &str) -> String {
    format!("{base}/{}", escape(key))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        for key in ["", "a", "a/b", "m~n", "~1", "~01", "/~/", "é/ü~"] {
            assert_eq!(unescape(&escape(key)), key, "{key}");
        }
        assert_eq!(escape("a/b~c"), "a~1b~0c");
        assert_eq!(unescape("~01"), "~1");
        assert_eq!(push("/verbs", "x/y"), "/verbs/x~1y");
        assert!(matches!(escape("plain"), Cow::Borrowed(_)));
    }

    #[test]
    fn pointers_past_the_bound_are_refused() {
        assert_eq!(bounded_tokens("/a/b").unwrap(), ["a", "b"]);
        assert_eq!(
            bounded_tokens(&"/a".repeat(MAX_TOKENS)).unwrap().len(),
            MAX_TOKENS
        );
        let past = bounded_tokens(&"/a".repeat(5000)).unwrap_err();
        assert_eq!(past, "a JSON pointer of 5000 tokens (at most 64)");
    }
}
