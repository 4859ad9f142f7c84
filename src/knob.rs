//! Mutants and allowed variants as types, as BoGo's `ProtocolBugs` are fields and never strings:
//! each suite declares its own with [`mutants!`](crate::mutants) and
//! [`variants!`](crate::variants), and its reference asks `knobs.breaks(Mutant::X)` or
//! `knobs.decides(Variant::Y)`. A name that is no member does not compile.

/// One mutant (a rule broken) or one allowed variant (an open point decided otherwise).
pub trait Knob: Copy + Eq + std::fmt::Debug + Send + Sync + 'static {
    const ALL: &'static [Self];
    /// Its name in `inproc:mutant:NAME` / `inproc:variant:NAME`.
    fn name(self) -> &'static str;
    /// The rule a mutant breaks, or the point a variant decides otherwise.
    fn about(self) -> &'static str;
    /// The sections whose MUST cases must catch a mutant; none for a variant.
    fn sections(self) -> &'static [&'static str];
    fn by_name(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|k| k.name() == name)
    }
}

/// A suite's mutants: `Name = "name", ["section", …], "the rule it breaks";`.
#[macro_export]
macro_rules! mutants {
    ($(#[$attr:meta])* $vis:vis enum $T:ident {
        $($(#[$va:meta])* $V:ident = $name:literal, [$($sec:literal),+], $what:literal;)+
    }) => {
        $(#[$attr])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        $vis enum $T { $($(#[$va])* $V),+ }

        impl $crate::knob::Knob for $T {
            const ALL: &'static [$T] = &[$($T::$V),+];
            fn name(self) -> &'static str { match self { $($T::$V => $name),+ } }
            fn about(self) -> &'static str { match self { $($T::$V => $what),+ } }
            fn sections(self) -> &'static [&'static str] { match self { $($T::$V => &[$($sec),+]),+ } }
        }
    };
}

/// A suite's allowed variants: `Name = "name", "the point it decides otherwise";`.
#[macro_export]
macro_rules! variants {
    ($(#[$attr:meta])* $vis:vis enum $T:ident {
        $($(#[$va:meta])* $V:ident = $name:literal, $what:literal;)+
    }) => {
        $(#[$attr])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        $vis enum $T { $($(#[$va])* $V),+ }

        impl $crate::knob::Knob for $T {
            const ALL: &'static [$T] = &[$($T::$V),+];
            fn name(self) -> &'static str { match self { $($T::$V => $name),+ } }
            fn about(self) -> &'static str { match self { $($T::$V => $what),+ } }
            fn sections(self) -> &'static [&'static str] { &[] }
        }
    };
}

/// Which mutant or variant an embedded reference is, if any: at most one of the two (or, for a
/// suite that offers `variant:all`, every variant at once).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Knobs<M, V> {
    pub mutant: Option<M>,
    pub variant: Option<V>,
    /// Every allowed variant's choice at once: the runtime a stranger could write from the
    /// spec alone (the contract's `variant:all`).
    every_variant: bool,
    /// Every point the spec leaves free decided at random by a seed (`variant:freedom:SEED`).
    pub freedom: Option<Freedom>,
    /// The reference, noting which variants its run asks about in an [`asked`] slot
    /// (`reference:asked:SLOT`, the self-check's own).
    asked: Option<u32>,
}

impl<M, V> Default for Knobs<M, V> {
    fn default() -> Self {
        Knobs {
            mutant: None,
            variant: None,
            every_variant: false,
            freedom: None,
            asked: None,
        }
    }
}

impl<M: Knob, V: Knob> Knobs<M, V> {
    /// `reference`, `mutant:NAME`, `variant:NAME` or `variant:freedom[:SEED[:CLASS+…]]`; any
    /// other name is none.
    pub fn named(name: &str) -> Option<Self> {
        if name == "reference" {
            return Some(Self::default());
        }
        if let Some(slot) = name.strip_prefix("reference:asked:") {
            return Some(Knobs {
                asked: Some(slot.parse().ok()?),
                ..Self::default()
            });
        }
        if let Some(f) = name.strip_prefix("variant:").and_then(Freedom::named) {
            return Some(Knobs {
                freedom: Some(f),
                ..Self::default()
            });
        }
        if let Some(m) = name.strip_prefix("mutant:") {
            return Some(Knobs {
                mutant: Some(M::by_name(m)?),
                ..Self::default()
            });
        }
        Some(Knobs {
            variant: Some(V::by_name(name.strip_prefix("variant:")?)?),
            ..Self::default()
        })
    }

    /// Every allowed variant at once (`variant:all`, where a suite offers it).
    pub fn every_variant() -> Self {
        Knobs {
            every_variant: true,
            ..Self::default()
        }
    }

    /// Is this every allowed variant at once?
    pub fn is_every_variant(&self) -> bool {
        self.every_variant
    }

    /// Is this the mutant that breaks `m`'s rule?
    pub fn breaks(&self, m: M) -> bool {
        self.mutant == Some(m)
    }

    /// The freedom variant's choices in `class`, when this is a freedom variant that takes it.
    pub fn free(&self, class: Class) -> Option<Freedom> {
        self.freedom.filter(|f| f.takes(class))
    }

    /// Is this the allowed variant that decides `v`'s point otherwise?
    pub fn decides(&self, v: V) -> bool {
        self.note(v);
        self.every_variant || self.variant == Some(v)
    }

    /// Is this exactly the variant `v` (not `variant:all`)?
    pub fn is_variant(&self, v: V) -> bool {
        self.note(v);
        self.variant == Some(v)
    }

    fn note(&self, v: V) {
        if let Some(slot) = self.asked {
            asked::note(slot, v.name());
        }
    }
}

/// Which allowed variants a run of the reference asks about, each run in a slot of its own
/// (`inproc:reference:asked:SLOT`). The self-check plays a variant only on the MUST cases whose
/// reference run asks about it: elsewhere the variant takes every branch the reference takes,
/// so it plays the reference's run, which the case's own test already passes (the coverage
/// analysis of PIT's and Stryker's mutation testing, for variants).
pub mod asked {
    use std::collections::BTreeSet;
    use std::sync::{Mutex, MutexGuard};

    static SLOTS: Mutex<Vec<BTreeSet<&'static str>>> = Mutex::new(Vec::new());

    fn slots() -> MutexGuard<'static, Vec<BTreeSet<&'static str>>> {
        SLOTS.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A new, empty slot.
    pub fn slot() -> u32 {
        let mut s = slots();
        s.push(BTreeSet::new());
        (s.len() - 1) as u32
    }

    pub(super) fn note(slot: u32, variant: &'static str) {
        if let Some(s) = slots().get_mut(slot as usize) {
            s.insert(variant);
        }
    }

    /// The variants asked about in `slot` so far, emptying it.
    pub fn take(slot: u32) -> BTreeSet<&'static str> {
        slots()
            .get_mut(slot as usize)
            .map(std::mem::take)
            .unwrap_or_default()
    }
}

/// The kinds of point a spec leaves free, each a class of the freedom variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Class {
    /// Arrays whose order the spec does not fix are permuted.
    Order,
    /// Every text the implementation chooses (messages, reasons, names, ids it mints) is replaced.
    Words,
    /// Objects gain members the schema does not forbid.
    Extra,
    /// A shape the spec leaves open is taken another way (through what an implementation may
    /// declare: maps, `failure`, `names`, `purposeAt`, encodings, redactions).
    Shapes,
    /// A precondition the spec lets an implementation demand is demanded.
    Preconditions,
    /// Answers and start-ups take time, within what the spec allows.
    Time,
}

impl Class {
    pub const ALL: [Class; 6] = [
        Class::Order,
        Class::Words,
        Class::Extra,
        Class::Shapes,
        Class::Preconditions,
        Class::Time,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Class::Order => "order",
            Class::Words => "words",
            Class::Extra => "extra",
            Class::Shapes => "shapes",
            Class::Preconditions => "preconditions",
            Class::Time => "time",
        }
    }

    fn bit(self) -> u8 {
        1 << Class::ALL.iter().position(|c| *c == self).unwrap_or(0)
    }
}

/// The freedom variants every suite's self-check plays every MUST case against (`cargo test`'s
/// `variants::SUITE::freedom:SEED`), each seed with every class.
pub fn freedoms() -> Vec<Info> {
    const SEEDS: [&str; 8] = [
        "freedom:1",
        "freedom:2",
        "freedom:3",
        "freedom:4",
        "freedom:5",
        "freedom:6",
        "freedom:7",
        "freedom:8",
    ];
    SEEDS
        .iter()
        .map(|name| Info {
            name,
            about: "every point the spec leaves free (order, words, extra members, open shapes, \
                    preconditions, time) decided at random by the seed",
            sections: &[],
        })
        .collect()
}

/// The freedom variant: an embedded reference that decides every point its spec leaves free at
/// random, by a seed (`variant:freedom:SEED`, all classes; `variant:freedom:SEED:order+words`,
/// only those). Each choice is a pure function of the seed, its class and the site asking (a
/// short name of the place in the reference, with whatever makes the choice differ there), so
/// a case's choices do not depend on what ran before it, and a failure replays from its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Freedom {
    pub seed: u64,
    classes: u8,
}

impl Freedom {
    /// Every class, decided by `seed`.
    pub fn all(seed: u64) -> Freedom {
        Freedom {
            seed,
            classes: 0x3f,
        }
    }

    /// Only `classes`, decided by `seed`.
    pub fn only(seed: u64, classes: &[Class]) -> Freedom {
        Freedom {
            seed,
            classes: classes.iter().fold(0, |b, c| b | c.bit()),
        }
    }

    /// `freedom`, `freedom:SEED` or `freedom:SEED:CLASS+CLASS…`.
    pub fn named(name: &str) -> Option<Freedom> {
        let mut parts = name.split(':');
        if parts.next()? != "freedom" {
            return None;
        }
        let seed = match parts.next() {
            None => return Some(Freedom::all(1)),
            Some(s) => s.parse().ok()?,
        };
        let f = match parts.next() {
            None => Freedom::all(seed),
            Some(cs) => {
                let cs: Option<Vec<Class>> = cs
                    .split('+')
                    .map(|c| Class::ALL.into_iter().find(|k| k.name() == c))
                    .collect();
                Freedom::only(seed, &cs?)
            }
        };
        parts.next().is_none().then_some(f)
    }

    /// Its name after `variant:`.
    pub fn name(&self) -> String {
        if self.classes == 0x3f {
            return format!("freedom:{}", self.seed);
        }
        let cs: Vec<&str> = self.classes().iter().map(|c| c.name()).collect();
        format!("freedom:{}:{}", self.seed, cs.join("+"))
    }

    pub fn classes(&self) -> Vec<Class> {
        Class::ALL.into_iter().filter(|c| self.takes(*c)).collect()
    }

    pub fn takes(&self, class: Class) -> bool {
        self.classes & class.bit() != 0
    }

    /// The choice at `site` in `class`: a number from the seed, the class and the site, or none
    /// when this freedom does not take the class.
    pub fn roll(&self, class: Class, site: &str) -> Option<u64> {
        if !self.takes(class) {
            return None;
        }
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in class.name().bytes().chain([0]).chain(site.bytes()) {
            h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
        }
        Some(mix(h ^ mix(self.seed)))
    }

    /// A coin at `site`: true about half the time, never when the class is not taken.
    pub fn coin(&self, class: Class, site: &str) -> bool {
        self.roll(class, site).is_some_and(|r| r & 1 == 1)
    }

    /// A number in `0..n` at `site`, 0 when the class is not taken.
    pub fn below(&self, class: Class, site: &str, n: u64) -> u64 {
        self.roll(class, site).map_or(0, |r| r % n.max(1))
    }

    /// `items` permuted (class `order`), as the seed and `site` decide.
    pub fn permute<T>(&self, site: &str, items: &mut [T]) {
        let Some(mut r) = self.roll(Class::Order, site) else {
            return;
        };
        for i in (1..items.len()).rev() {
            r = mix(r);
            items.swap(i, (r % (i as u64 + 1)) as usize);
        }
    }

    /// Another text in place of `text` (class `words`): the same text always gets the same
    /// replacement at a site, different texts different ones (so ids stay distinct).
    pub fn word(&self, site: &str, text: &str) -> String {
        match self.roll(Class::Words, &format!("{site}\0{text}")) {
            None => text.to_string(),
            Some(r) => {
                const WORDS: [&str; 8] = [
                    "nope",
                    "refusé",
                    "E_DENY",
                    "blocked by policy",
                    "拒否",
                    "x",
                    "no: see log",
                    "⚠ fault",
                ];
                format!("{} {:08x}", WORDS[(r % 8) as usize], r >> 32)
            }
        }
    }

    /// `value`, an object, with members added (class `extra`), named so they cannot be taken
    /// for any member a spec names.
    pub fn extra(&self, site: &str, value: &mut serde_json::Value) {
        let (Some(r), Some(obj)) = (self.roll(Class::Extra, site), value.as_object_mut()) else {
            return;
        };
        let extra = match r % 4 {
            0 => serde_json::json!("x"),
            1 => serde_json::json!(r >> 40),
            2 => serde_json::json!({"nested": [true, null]}),
            _ => serde_json::json!(null),
        };
        obj.insert(format!("x-freedom-{:04x}", (r >> 16) & 0xffff), extra);
    }

    /// A delay at `site` of up to `max_ms` (class `time`), 0 when the class is not taken.
    pub fn delay_ms(&self, site: &str, max_ms: u64) -> u64 {
        self.below(Class::Time, site, max_ms + 1)
    }
}

/// splitmix64's finaliser.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A mutant or variant as listings and self-checks show it, whatever its suite.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Info {
    pub name: &'static str,
    pub about: &'static str,
    pub sections: &'static [&'static str],
}

/// Every member of a knob type, as [`Info`].
pub fn infos<K: Knob>() -> Vec<Info> {
    K::ALL
        .iter()
        .map(|k| Info {
            name: k.name(),
            about: k.about(),
            sections: k.sections(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_freedom_decides_by_its_seed_and_site_alone() {
        let f = Freedom::all(5);
        let mut a: Vec<u32> = (0..20).collect();
        let mut b = a.clone();
        f.permute("list", &mut a);
        f.permute("list", &mut b);
        assert_eq!(a, b);
        assert_ne!(a, (0..20).collect::<Vec<_>>());
        let mut c: Vec<u32> = (0..20).collect();
        Freedom::all(6).permute("list", &mut c);
        assert_ne!(a, c);
        assert_ne!(f.word("id", "a"), f.word("id", "b"));
        assert_ne!(f.word("id", "a"), "a");
        let words_off = Freedom::only(5, &[Class::Order]);
        assert_eq!(words_off.word("id", "a"), "a");
        let mut v = serde_json::json!({"a": 1});
        f.extra("o", &mut v);
        assert_eq!(v.as_object().unwrap().len(), 2);
        assert!(f.delay_ms("t", 10) <= 10);
    }

    crate::mutants! {
        enum M { A = "a", ["1"], "breaks a"; B = "b", ["2", "3"], "breaks b"; }
    }
    crate::variants! {
        enum V { X = "x", "decides x"; }
    }

    #[test]
    fn names_parse_to_members_and_nothing_else() {
        let k = Knobs::<M, V>::named("mutant:b").unwrap();
        assert!(k.breaks(M::B) && !k.breaks(M::A) && !k.decides(V::X));
        assert!(Knobs::<M, V>::named("variant:x").unwrap().decides(V::X));
        assert_eq!(Knobs::<M, V>::named("reference"), Some(Knobs::default()));
        for bad in ["mutant:c", "variant:a", "x", "mutant:", ""] {
            assert_eq!(Knobs::<M, V>::named(bad), None, "{bad}");
        }
        assert_eq!(M::B.sections(), &["2", "3"]);
        assert_eq!(infos::<M>().len(), 2);
        // The self-check's noting reference: the reference's decisions, each ask noted.
        let slot = asked::slot();
        let k = Knobs::<M, V>::named(&format!("reference:asked:{slot}")).unwrap();
        assert!(!k.decides(V::X) && k.mutant.is_none() && k.variant.is_none());
        assert_eq!(asked::take(slot), ["x"].into());
        assert!(asked::take(slot).is_empty());
        assert_eq!(Knobs::<M, V>::named("reference:asked:x"), None);
        let f = Knobs::<M, V>::named("variant:freedom:3:order+words").unwrap();
        let free = f.freedom.unwrap();
        assert!(free.takes(Class::Order) && !free.takes(Class::Time) && !f.decides(V::X));
        assert_eq!(free.name(), "freedom:3:order+words");
        assert_eq!(Freedom::named("freedom:3").unwrap().name(), "freedom:3");
        assert_eq!(Freedom::named("freedom"), Some(Freedom::all(1)));
        for bad in [
            "freedom:x",
            "freedom:1:colour",
            "freedom:1:order:2",
            "freedoms",
        ] {
            assert_eq!(Freedom::named(bad), None, "{bad}");
        }
        let all = Knobs::<M, V>::every_variant();
        assert!(all.decides(V::X) && !all.breaks(M::A) && all.is_every_variant());
    }
}
