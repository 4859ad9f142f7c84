//! The random source every fuzzer draws from, and the generic mutators of JSON values: shared
//! by the cargo-fuzz targets (`fuzz/`) and every suite's black-box fuzzer (`hcpspec fuzz`).
//!
//! Every choice goes through a [`Source`]: a seeded PRNG ([`Rng`]) for `hcpspec fuzz`, so a run
//! is reproducible from its seed with no time-dependence, or libFuzzer's bytes through
//! `arbitrary::Unstructured` ([`Bytes`]) for the coverage-guided targets, so the same
//! structure-aware mutations reach past the JSON parser into the loader, the linter and the
//! authoriser.

use serde_json::{json, Map, Value};

/// Where the generators' choices come from.
pub trait Source {
    /// A number in `0..n`; 0 when `n` is 0 or 1.
    fn below(&mut self, n: usize) -> usize;

    /// True `percent` times in a hundred.
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    /// One item of a non-empty slice.
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// An index chosen by weight (weights need not sum to anything in particular).
    fn weighted(&mut self, weights: &[usize]) -> usize {
        let total: usize = weights.iter().sum();
        let mut x = self.below(total.max(1));
        for (i, w) in weights.iter().enumerate() {
            if x < *w {
                return i;
            }
            x -= w;
        }
        weights.len().saturating_sub(1)
    }
}

/// SplitMix64: small, fast, and the same sequence on every platform for a given seed.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The generator of case number `index` of a run seeded with `seed`: each case has its own
    /// stream, so cases can be generated in any order, on any number of threads.
    pub fn for_case(seed: u64, index: u64) -> Rng {
        let mut r = Rng(seed ^ index.wrapping_mul(0xA076_1D64_78BD_642F));
        r.next_u64();
        Rng(r.next_u64())
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

impl Source for Rng {
    fn below(&mut self, n: usize) -> usize {
        if n <= 1 {
            0
        } else {
            (self.next_u64() % n as u64) as usize
        }
    }
}

/// libFuzzer's bytes as a [`Source`]. When the bytes run out every choice is 0, which the
/// generators treat as "the plain, well-formed option", so short inputs are valid inputs.
pub struct Bytes<'a, 'b>(pub &'b mut arbitrary::Unstructured<'a>);

impl Source for Bytes<'_, '_> {
    fn below(&mut self, n: usize) -> usize {
        if n <= 1 {
            0
        } else {
            self.0.choose_index(n).unwrap_or(0)
        }
    }
}

/// Strings that break things: separators, shell syntax, traversal, lookalikes, control and
/// bidi characters, JSON and template syntax. `${tmp}` keeps anything a runtime might write
/// inside the case's own temp directory.
pub const WEIRD: &[&str] = &[
    "",
    " ",
    "a b",
    "x; rm -rf /",
    "$(id)",
    "`id`",
    "| cat /etc/passwd",
    "--report=${tmp}/injected.json",
    "--exit=7",
    "-",
    "--",
    "../../etc/passwd",
    "..",
    "/bin/sh",
    "{report}",
    "{confirm}",
    "${workdir}/../escape",
    "\u{202e}lanigiro",
    "ledger\u{200b}",
    "Ledger",
    "\u{0}",
    "\u{1b}[31m",
    "line\nbreak",
    "💥🦀",
    "ﬁ",
    "İ",
    "true",
    "null",
    "%s%n",
    "\\",
    "'\"",
    "*",
    "verb.exec.*",
];

/// One weird string; now and then a huge one (up to 64 KiB, under the kernel's per-argument
/// limit so a spawn still happens).
pub fn weird_string(src: &mut impl Source) -> String {
    match src.weighted(&[85, 5, 5, 5]) {
        0 => src.pick(WEIRD).to_string(),
        1 => "A".repeat(1 << (8 + src.below(9))),
        2 => "é𝕏".repeat(1 << (4 + src.below(8))),
        _ => format!("{}{}", src.pick(WEIRD), src.pick(WEIRD)),
    }
}

/// A short ordinary identifier-like string, or a weird one.
pub fn name(src: &mut impl Source, plain: &[&str]) -> String {
    if !plain.is_empty() && src.chance(80) {
        src.pick(plain).to_string()
    } else {
        weird_string(src)
    }
}

const KEYS: &[&str] = &[
    "confirm", "apply", "report", "amount", "text", "from", "to", "ok", "$not", "$regex", "a", "",
];

/// Any JSON value, at most `depth` levels deep.
pub fn any_json(src: &mut impl Source, depth: usize) -> Value {
    let kinds = if depth == 0 { 4 } else { 6 };
    match src.below(kinds) {
        0 => Value::Null,
        1 => Value::Bool(src.chance(50)),
        2 => any_number(src),
        3 => Value::String(weird_string(src)),
        4 => Value::Array(
            (0..src.below(4))
                .map(|_| any_json(src, depth - 1))
                .collect(),
        ),
        _ => {
            let mut m = Map::new();
            for _ in 0..src.below(4) {
                m.insert(src.pick(KEYS).to_string(), any_json(src, depth - 1));
            }
            Value::Object(m)
        }
    }
}

pub fn any_number(src: &mut impl Source) -> Value {
    match src.below(8) {
        0 => json!(0),
        1 => json!(1),
        2 => json!(-1),
        3 => json!(10),
        4 => json!(1.5),
        5 => json!(1e308),
        6 => json!(u64::MAX),
        _ => json!(i64::MIN),
    }
}

/// A value of another JSON type than `v` (a retyped field).
pub fn retype(src: &mut impl Source, v: &Value) -> Value {
    let options = [
        Value::Null,
        json!(true),
        json!(1),
        json!("true"),
        json!([]),
        json!({}),
        json!(["x"]),
        json!({ "confirm": true }),
    ];
    let same = |x: &Value| std::mem::discriminant(x) == std::mem::discriminant(v);
    let others: Vec<&Value> = options.iter().filter(|x| !same(x)).collect();
    (*src.pick(&others)).clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rng_is_deterministic_and_per_case() {
        let a: Vec<u64> = (0..4).map(|_| Rng::new(7).next_u64()).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        let mut x = Rng::for_case(1, 0);
        let mut y = Rng::for_case(1, 1);
        assert_ne!(x.next_u64(), y.next_u64());
        let mut z = Rng::for_case(1, 1);
        let mut w = Rng::for_case(1, 1);
        assert_eq!(z.next_u64(), w.next_u64());
    }

    #[test]
    fn bytes_source_defaults_to_zero_when_exhausted() {
        let mut u = arbitrary::Unstructured::new(&[]);
        let mut s = Bytes(&mut u);
        assert_eq!(s.below(10), 0);
        assert_eq!(s.weighted(&[3, 1]), 0);
    }
}
