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
}
